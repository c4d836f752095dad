package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

func startDrainable(t *testing.T) (*running, home.Home) {
	t.Helper()
	h := newHome(t)
	fake := daemontest.New()
	opts := options(t, h, fake, nil)
	opts.DrainPoll = 10 * time.Millisecond
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)
	return r, h
}

// A busy agent holds the drain until its turn ends; deliveries are paused
// from the start and stay paused after a drain that succeeded.
func TestDrainWaitsForTheBusyAgentsTurnToEnd(t *testing.T) {
	r, _ := startDrainable(t)
	r.agents.SetBusy("alice", "bob")
	type answer struct {
		res api.DrainResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := r.Client.Drain(context.Background(), api.DrainRequest{TimeoutSeconds: 30})
		done <- answer{res, err}
	}()
	testutil.WaitFor(t, 10*time.Second, r.agents.Paused, "deliveries paused at the start of the drain")
	r.agents.SetBusy("bob")
	select {
	case a := <-done:
		t.Fatalf("drain answered %+v %v while bob was still busy", a.res, a.err)
	default:
	}
	r.agents.SetBusy()
	var a answer
	select {
	case a = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the drain did not answer after the last turn ended")
	}
	if a.err != nil || !a.res.Drained || !a.res.Paused {
		t.Fatalf("drain %+v %v", a.res, a.err)
	}
	if !r.agents.Paused() {
		t.Fatal("a drained daemon resumed deliveries before the restart")
	}
	if err := r.Client.ResumeDeliveries(context.Background()); err != nil || r.agents.Paused() {
		t.Fatalf("resume: %v, paused %v", err, r.agents.Paused())
	}
}

func TestDrainTimesOutNamingWhoIsBusyAndResumes(t *testing.T) {
	r, h := startDrainable(t)
	r.agents.SetBusy("alice")
	_, err := r.Client.Drain(context.Background(), api.DrainRequest{TimeoutSeconds: 0.2})
	if !api.HasCode(err, api.CodeDrainTimeout) || !strings.Contains(err.Error(), "alice") {
		t.Fatalf("err %v, want drain_timeout naming alice", err)
	}
	if r.agents.Paused() {
		t.Fatal("a drain that gave up left deliveries paused")
	}
	status, body := raw(t, h, "POST", "/drain", `{"timeout_seconds":0.1}`)
	if status != http.StatusConflict || decodeErr(t, body).Code != "drain_timeout" {
		t.Fatalf("on the wire: %d %s", status, body)
	}
}

func TestForcedDrainSkipsTheWait(t *testing.T) {
	r, _ := startDrainable(t)
	r.agents.SetBusy("alice")
	res, err := r.Client.Drain(context.Background(), api.DrainRequest{Force: true, TimeoutSeconds: 3600})
	if err != nil || res.Drained || !res.Paused || len(res.Busy) != 1 || res.Busy[0] != "alice" {
		t.Fatalf("forced drain %+v %v", res, err)
	}
	if !r.agents.Paused() {
		t.Fatal("a forced drain did not pause deliveries")
	}
}

// Nobody resumes and nobody restarts: the hold ends by itself.
func TestDrainHoldEndsWithoutAResume(t *testing.T) {
	r, _ := startDrainable(t)
	if _, err := r.Client.Drain(context.Background(), api.DrainRequest{HoldSeconds: 0.2}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return !r.agents.Paused() }, "the hold to end")
}

func TestDrainRejectsBadDurations(t *testing.T) {
	r, h := startDrainable(t)
	for _, body := range []string{`{"timeout_seconds":-1}`, `{"hold_seconds":1e9}`, `{"force":"yes"}`, `{"other":1}`} {
		status, out := raw(t, h, "POST", "/drain", body)
		if status != http.StatusBadRequest || decodeErr(t, out).Code != "invalid_args" {
			t.Errorf("%s: %d %s", body, status, out)
		}
	}
	if r.agents.Paused() {
		t.Fatal("a rejected drain paused deliveries")
	}
}
