package main

import (
	"context"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestFakeRecordsWhatTheAdaptersReadAsTurns: each fake records its turns
// the way the real tool does, which is what the adapter's TurnActivity
// reads (internal/harness/<name>/activity_test.go reads the real ones): a
// turn runs from its message until its answer, then it has ended; an
// interrupted turn ends too — except claude's, interrupted before the
// model answered, which the real claude records no end for (the adapter
// says so: EndsUnrecorded).
func TestFakeRecordsWhatTheAdaptersReadAsTurns(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h0, _ := leoharness.Lookup(r.name)
			rec, ok := h0.(leoharness.TurnRecorder)
			if !ok {
				t.Fatalf("the %s adapter is no TurnRecorder", r.name)
			}
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			if r.name == "codex" {
				trustCodex(t, home, dir)
			}
			q := leoharness.SessionQuery{Workspace: dir, Env: home, Since: time.Now().Add(-time.Second)}
			h := start(t, launch{role: r.name, home: home, dir: dir, env: map[string]string{"FAKE_TURN_MS": "4000"}})
			h.waitFor(r.ready)
			activity := func() leoharness.TurnActivity {
				a, err := rec.TurnActivity(context.Background(), q, "")
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			waitActivity := func(what string, cond func(leoharness.TurnActivity) bool) leoharness.TurnActivity {
				var a leoharness.TurnActivity
				testutil.WaitFor(t, 20*time.Second, func() bool { a = activity(); return cond(a) }, what)
				return a
			}
			if a := activity(); a.Running || a.Ended != 0 {
				t.Fatalf("before any turn: %+v", a)
			}
			h.submit("hello there", r.composer)
			waitActivity("the first turn running", func(a leoharness.TurnActivity) bool { return a.Found && a.Running && a.Ended == 0 })
			h.waitFor("echo: hello there")
			waitActivity("the first turn ended", func(a leoharness.TurnActivity) bool { return !a.Running && a.Ended == 1 })

			h.submit("interrupt me", "interrupt me")
			waitActivity("the second turn running", func(a leoharness.TurnActivity) bool { return a.Running })
			if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "Escape"); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, func() bool {
				for _, m := range h.logLines() {
					if m["event"] == "interrupted" {
						return true
					}
				}
				return false
			}, "the fake to take the interrupt")
			if r.name == "claude" {
				// No end is written; it stays so (the fake's turn would
				// have ended by now had it not been interrupted).
				a := activity()
				if !a.Running || a.Ended != 1 || !a.EndsUnrecorded {
					t.Fatalf("claude interrupted before answering: %+v, want still running by the record, 1 ended, ends unrecorded", a)
				}
				return
			}
			a := waitActivity("the interrupted turn ended", func(a leoharness.TurnActivity) bool { return !a.Running && a.Ended == 2 })
			if a.EndsUnrecorded || a.Failed != "" {
				t.Fatalf("%s records every end, and an interrupt is no failure, yet says %+v", r.name, a)
			}
			if r.name != "codex" {
				return
			}
			// A turn the model answers with an error: the fake codex
			// records it as the real one does (the adapter reads its
			// words), and draws it; the composer is idle again.
			h.submit("this one fake-model-error please", "fake-model-error please")
			a = waitActivity("the failed turn ended", func(a leoharness.TurnActivity) bool { return !a.Running && a.Ended == 3 })
			if a.Failed != fakeModelError || a.Limited {
				t.Fatalf("failed turn: %+v", a)
			}
			h.waitFor("■ " + fakeModelError)
		})
	}
}
