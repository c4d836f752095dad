package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

// `leo events --follow --json` over the real daemon, while an agent is
// spawned over the fake harness and sent a message: one JSON object per
// line, in order — the agent starting and running, the message queued and
// delivered, its turn started and ended. The same stream is
// /api/v1/events over HTTP, with the token only.
func TestEventsFollowAMessageFromTheCLIAndHTTP(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	w.WriteConfig(nil)
	base := w.EnableWeb()
	w.startDaemon()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Both readers start from the newest event now (--since), so what
	// happens before they are connected is replayed, not lost.
	kept, err := w.Client.RecentEvents(ctx, client.EventsQuery{})
	if err != nil || len(kept) == 0 {
		t.Fatalf("kept events: %v %v", kept, err)
	}
	since := strconv.FormatUint(kept[len(kept)-1].Seq, 10)
	cmd := exec.CommandContext(ctx, leoproc.Binary(t), "events", "--follow", "--json", "--agent", "ev", "--since", since)
	cmd.Env = w.Env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan api.Event, 256)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e api.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Errorf("not one JSON object a line: %q", sc.Text())
				continue
			}
			lines <- e
		}
		close(lines)
	}()

	// The HTTP stream, with and without the token.
	token := w.Token()
	if status, _ := apiCall(t, base, "", "GET", "/api/v1/events?follow=0", ""); status != 401 {
		t.Fatalf("events without the token: %d", status)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/events?agent=ev&since="+since, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /api/v1/events: %v %+v", err, resp)
	}
	defer resp.Body.Close()
	overHTTP := make(chan api.Event, 256)
	go func() {
		_ = client.ReadEvents(resp.Body, func(e api.Event) error { overHTTP <- e; return nil })
		close(overHTTP)
	}()

	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "codex", Name: "ev"}); err != nil {
		t.Fatal(err)
	}
	id := w.send("ev", "summarise the logs\nplease")
	w.waitDelivered("ev", id)

	want := []string{api.EventMessageQueued, api.EventMessageDelivered, api.EventTurnStarted, api.EventTurnEnded}
	for name, ch := range map[string]chan api.Event{"leo events": lines, "/api/v1/events": overHTTP} {
		var got []string
		var last uint64
		deadline := time.After(60 * time.Second)
		for len(got) < len(want) {
			select {
			case e, ok := <-ch:
				if !ok {
					t.Fatalf("%s ended after %v", name, got)
				}
				if e.Seq <= last {
					t.Fatalf("%s: seq %d after %d", name, e.Seq, last)
				}
				last = e.Seq
				if e.Agent != "ev" {
					t.Fatalf("%s: another agent's event %+v", name, e)
				}
				for _, typ := range want {
					if e.Type == typ && (e.MessageID == id || typ == api.EventTurnEnded) {
						got = append(got, typ)
					}
				}
			case <-deadline:
				t.Fatalf("%s: got %v within 60s, want %v", name, got, want)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
	}
}

// `leo events --follow --json` outlives the daemon: stopped (SIGTERM, its
// readers hear daemon.stopping) or killed (SIGKILL, the stream is cut), it
// asks the next daemon with Last-Event-ID for what it missed: the next
// daemon's start, its restore, then what happens — in order, nothing
// twice, a stream.behind saying the numbers between are gone.
func TestEventsFollowOutlivesDaemonRestarts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	w.WriteConfig(nil)
	d1 := w.startDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "codex", Name: "ev"}); err != nil {
		t.Fatal(err)
	}

	// From the newest event now, so nothing between the start of the
	// process and its connection is lost.
	kept, err := w.Client.RecentEvents(ctx, client.EventsQuery{})
	if err != nil || len(kept) == 0 {
		t.Fatalf("kept events: %v %v", kept, err)
	}
	cmd := exec.CommandContext(ctx, leoproc.Binary(t), "events", "--follow", "--json", "--since", strconv.FormatUint(kept[len(kept)-1].Seq, 10))
	cmd.Env = w.Env()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan api.Event, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e api.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Errorf("not one JSON object a line: %q", sc.Text())
				continue
			}
			lines <- e
		}
		close(lines)
	}()
	var last uint64
	// await reads events in order until one matches, failing on a number
	// that does not increase.
	await := func(what string, match func(api.Event) bool) api.Event {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case e, ok := <-lines:
				if !ok {
					t.Fatalf("leo events ended before %s (stderr %q)", what, stderr.String())
				}
				if e.Seq <= last {
					t.Fatalf("seq %d (%s) after %d", e.Seq, e.Type, last)
				}
				last = e.Seq
				if match(e) {
					return e
				}
			case <-deadline:
				t.Fatalf("no %s within 60s", what)
			}
		}
	}
	// Connected: a message's queued event arrives live.
	id := w.send("ev", "before the restart")
	await("message.queued before the restart", func(e api.Event) bool { return e.Type == api.EventMessageQueued && e.MessageID == id })

	d1.Kill(syscall.SIGTERM)
	await("daemon.stopping of the first daemon", func(e api.Event) bool {
		return e.Type == api.EventDaemonStopping && strings.Contains(e.Reason, "pid "+strconv.Itoa(d1.PID))
	})
	d2 := w.startDaemon()
	behind := await("stream.behind from the second daemon", func(e api.Event) bool {
		return e.Type == api.EventStreamBehind || e.Type == api.EventDaemonStarting
	})
	if behind.Type != api.EventStreamBehind || behind.Missed == 0 {
		t.Fatalf("first event from the second daemon: %+v, want stream.behind", behind)
	}
	if e := await("daemon.starting", func(api.Event) bool { return true }); e.Type != api.EventDaemonStarting || !strings.Contains(e.Reason, "pid "+strconv.Itoa(d2.PID)) {
		t.Fatalf("after stream.behind: %+v, want the second daemon's daemon.starting", e)
	}
	id = w.send("ev", "after a restart")
	await("message.queued after the restart", func(e api.Event) bool { return e.Type == api.EventMessageQueued && e.MessageID == id })

	// Killed: no daemon.stopping, the stream is cut; the next daemon's
	// start still arrives.
	d2.Kill(syscall.SIGKILL)
	d3 := w.startDaemon()
	await("the third daemon's daemon.starting", func(e api.Event) bool {
		return e.Type == api.EventDaemonStarting && strings.Contains(e.Reason, "pid "+strconv.Itoa(d3.PID))
	})
	id = w.send("ev", "after a kill")
	await("message.queued after the kill", func(e api.Event) bool { return e.Type == api.EventMessageQueued && e.MessageID == id })
	if !strings.Contains(stderr.String(), "leo events: the stream ended") {
		t.Fatalf("stderr %q, want the wait said", stderr.String())
	}
}
