package fault

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestSendToAStoppedDaemonIsOutcomeUnknownAndARetryNeverDoubles (issue 15
// item 14): with the daemon SIGSTOPped, a send reaches its socket (the
// kernel accepts the connection) but no answer comes. That is
// outcome_unknown, not daemon_down: after SIGCONT the daemon delivers the
// message. A retry with the same id — while it waits, after it was
// delivered and after a daemon restart — is answered with the first
// answer, and the TUI gets the message once.
func TestSendToAStoppedDaemonIsOutcomeUnknownAndARetryNeverDoubles(t *testing.T) {
	w := leoproc.New(t, "claude")
	w.WriteConfig(nil)
	d, _ := w.Start(readyDeadline)
	ctx := context.Background()
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude", Name: "s"}); err != nil {
		t.Fatal(err)
	}
	w.WaitAll(30*time.Second, "agent running", func(as []api.Agent) bool {
		return len(as) == 1 && as[0].State == api.StateRunning
	})

	if err := d.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	cont := func() {
		if stopped {
			stopped = false
			if err := d.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(cont) // never leave a stopped process behind
	req := api.SendRequest{Message: "sent while the daemon was stopped", ID: "stopped-1"}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := w.Client.SendMessage(sctx, "s", req)
	cancel()
	if !api.HasCode(err, api.CodeOutcomeUnknown) {
		t.Fatalf("send to a stopped daemon: %v, want outcome_unknown", err)
	}
	t.Logf("stopped daemon: %v", err)
	// Nothing changed what a read says: a stopped daemon is not one that
	// answers.
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err = w.Client.Health(rctx)
	cancel()
	if !api.HasCode(err, api.CodeDaemonDown) {
		t.Fatalf("health of a stopped daemon: %v, want daemon_down", err)
	}

	cont()
	// The send nobody got an answer for is carried out.
	got := w.Delivery("s", req.ID, 60*time.Second)
	if got == nil || got.Status != "delivered" {
		t.Fatalf("after SIGCONT, delivery of %s: %+v", req.ID, got)
	}
	first, err := w.Client.SendMessage(ctx, "s", req)
	if err != nil || first.ID != req.ID || first.Delivery != api.SendQueued {
		t.Fatalf("retry after SIGCONT: %+v %v", first, err)
	}

	// A restart (SIGKILL: nothing is saved on the way out) remembers it.
	d.Kill(syscall.SIGKILL)
	w.Start(readyDeadline)
	again, err := w.Client.SendMessage(ctx, "s", req)
	if err != nil || again != first {
		t.Fatalf("retry after a restart: %+v %v, want the first answer %+v", again, err, first)
	}
	// The CLI's retry (--id) gets the same first answer from the restarted
	// daemon; its invalid UTF-8 is refused, never sent changed.
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := w.Leo(lctx, "agent", "send", "s", req.Message, "--id", req.ID, "--json")
	var cli api.SendResult
	if err != nil || json.Unmarshal(out, &cli) != nil || cli != first {
		t.Fatalf("leo agent send --id after the restart: %s %v, want %+v", out, err, first)
	}
	if out, err := w.Leo(lctx, "agent", "send", "s", "a\xffb", "--json"); err == nil || !strings.Contains(string(out), `"invalid_args"`) {
		t.Fatalf("leo agent send of invalid UTF-8: %s %v, want invalid_args", out, err)
	}
	// One more message proves the queue moves, and that the named one was
	// not behind it again.
	after, err := w.Client.Send(ctx, "s", "after the retries")
	if err != nil {
		t.Fatal(err)
	}
	if d := w.Delivery("s", after.ID, 60*time.Second); d == nil || d.Status != "delivered" {
		t.Fatalf("the message after the retries: %+v", d)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return w.SubmittedCounts()["after the retries"] == 1 }, "the last message logged by the TUI")
	if n := w.SubmittedCounts()[req.Message]; n != 1 {
		t.Fatalf("the TUI got the named message %d times, want once: %q", n, w.Submitted())
	}
}
