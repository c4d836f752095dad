package fault

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestSIGKILLWithMessagesQueuedAndInFlight SIGKILLs the real daemon while
// one message is pasted into the agent's input line but not submitted (in
// flight) and three more wait behind it, all accepted by the daemon. The
// delivery queue is durable: after the restart every message has an
// outcome — delivered once, in the order sent, or failed with a reason —
// none lost, none doubled, as the fake TUI's log of what it received shows.
//
// claude and codex hold the first message pasted and unsubmitted through a
// narrowed window (see TestSIGKILLBetweenPasteAndEnter). opencode never
// shows a paste truncated, so there a person's draft in the input line
// holds every message in the queue, none in flight.
func TestSIGKILLWithMessagesQueuedAndInFlight(t *testing.T) {
	for _, h := range leoproc.Harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			cut := h != "opencode"
			w := leoproc.New(t)
			if cut {
				// Nothing drawn for 2 s: the window is narrowed before the
				// first frame (see TestSIGKILLBetweenPasteAndEnter).
				w.WriteConfig(map[string]string{"FAKE_SLOW_START_MS": "2000"})
			} else {
				w.WriteConfig(nil)
			}
			d, _ := w.Start(readyDeadline)
			ctx := context.Background()
			if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h, Name: "q"}); err != nil {
				t.Fatal(err)
			}
			hn, _ := harness.Lookup(h)
			reader := hn.Screen()
			pane := paneOf(t, w, "q")
			if cut {
				if out, err := w.Tmux("capture-pane", "-p", "-t", pane); err != nil || strings.TrimSpace(out) != "" {
					t.Fatalf("the TUI drew before its window was narrowed (%v): %q", err, out)
				}
				if _, err := w.Tmux("resize-window", "-t", "=leo-q", "-x", "100", "-y", "50"); err != nil {
					t.Fatal(err)
				}
			}
			w.WaitAll(30*time.Second, "agent running", func(as []api.Agent) bool {
				return len(as) == 1 && as[0].State == api.StateRunning
			})
			testutil.WaitFor(t, 20*time.Second, func() bool {
				s := screenOf(t, w, reader, pane)
				return s.State == harness.ScreenReady && s.Input == ""
			}, "the agent idle")

			var texts, ids []string
			send := func(text string) {
				t.Helper()
				res, err := w.Client.Send(ctx, "q", text)
				if err != nil {
					t.Fatalf("send %q: %v", text, err)
				}
				texts, ids = append(texts, text), append(ids, res.ID)
			}
			const draft = "a person's draft"
			if cut {
				send("cut message " + strings.Repeat("x", 150))
				testutil.WaitFor(t, 20*time.Second, func() bool {
					return strings.HasPrefix(screenOf(t, w, reader, pane).Input, "cut message")
				}, "the first message pasted (truncated) in the input line")
			} else {
				if _, err := w.Tmux("send-keys", "-t", pane, "-l", draft); err != nil {
					t.Fatal(err)
				}
				testutil.WaitFor(t, 10*time.Second, func() bool {
					return screenOf(t, w, reader, pane).Input == draft
				}, "the draft in the input line")
			}
			send("queued one")
			send("queued two\nwith a second line")
			send("queued three")

			// Everything accepted is on disk, each message in one place.
			recs, err := w.ReadAgentsFile()
			if err != nil || len(recs) != 1 {
				t.Fatalf("agents file: %v %+v", err, recs)
			}
			var onDisk []string
			if f := recs[0].InFlight; f != nil {
				onDisk = append(onDisk, f.ID)
			}
			for _, q := range recs[0].Queue {
				onDisk = append(onDisk, q.ID)
			}
			if fmt.Sprint(onDisk) != fmt.Sprint(ids) {
				t.Fatalf("saved before the kill: %v, want every accepted message once, in order: %v", onDisk, ids)
			}
			if cut && (recs[0].InFlight == nil || recs[0].InFlight.ID != ids[0]) {
				t.Fatalf("in flight before the kill: %+v, want the pasted message %s", recs[0].InFlight, ids[0])
			}

			d.Kill(syscall.SIGKILL)
			if cut {
				if _, err := w.Tmux("resize-window", "-t", "=leo-q", "-x", "200", "-y", "50"); err != nil {
					t.Fatal(err)
				}
				testutil.WaitFor(t, 20*time.Second, func() bool {
					return reader.Landed(screenOf(t, w, reader, pane), texts[0])
				}, "the cut paste showing whole in the input line")
			} else {
				if _, err := w.Tmux("send-keys", "-t", pane, "C-u"); err != nil {
					t.Fatal(err)
				}
				testutil.WaitFor(t, 10*time.Second, func() bool {
					s := screenOf(t, w, reader, pane)
					return s.State == harness.ScreenReady && s.Input == ""
				}, "the draft cleared")
			}
			if got := w.Submitted(); len(got) != 0 {
				t.Fatalf("the TUI got %q before any new daemon ran", got)
			}

			w.Client.Close()
			w.Start(readyDeadline)
			var counts map[string]int
			for i, id := range ids {
				o := w.Delivery("q", id, 60*time.Second)
				counts = w.SubmittedCounts()
				switch {
				case o == nil:
					t.Errorf("message %d (%q) lost: no outcome 60 s after the restart", i, texts[i])
				case o.Status == "delivered" && counts[texts[i]] != 1:
					t.Errorf("message %d delivered but the TUI got it %d times", i, counts[texts[i]])
				case o.Status == "failed" && (o.Error == "" || counts[texts[i]] > 1):
					t.Errorf("message %d failed with reason %q and reached the TUI %d times", i, o.Error, counts[texts[i]])
				case o.Status == "failed" && (i > 0 || !cut):
					// Only the one in flight may fail (at most once: its
					// landing may be unknown); the queued ones were never
					// pasted and have nothing in their way.
					t.Errorf("queued message %d failed: %s", i, o.Error)
				}
			}
			got := w.Submitted()
			var want []string
			for _, text := range texts {
				if counts[text] > 0 {
					want = append(want, text)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("the TUI got %q, want each message once, in the order sent: %q", got, want)
			}
			testutil.WaitFor(t, 10*time.Second, func() bool {
				recs, err := w.ReadAgentsFile()
				return err == nil && len(recs) == 1 && recs[0].InFlight == nil && len(recs[0].Queue) == 0
			}, "the saved queue empty once every message has its outcome")
		})
	}
}
