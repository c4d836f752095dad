package fault

import (
	"context"
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

// TestSIGKILLBetweenPasteAndEnter kills the daemon at the one point of a
// delivery where the TUI holds leo's text but has not been told to submit
// it: the paste is in the input line, the Enter (sent once the whole text
// shows) has not gone yet. The next daemon adopts the pane
// with that text still in its input line. It must not be wedged by it: a
// later message is delivered, promptly, and the cut one reaches the TUI at
// most once, and if at all, before the later one (order per agent).
func TestSIGKILLBetweenPasteAndEnter(t *testing.T) {
	for _, h := range leoproc.Harnesses {
		t.Run(h, func(t *testing.T) {
			if h == "opencode" {
				t.Skip("cannot run on opencode: it never shows a paste truncated — a long one wraps in its box " +
					"(testdata/screens/opencode/ready-pasted-long-home_*), over 150 characters it shows [Pasted ~1 lines] — " +
					"so narrowing the window cannot hold leo's paste short of its Enter")
			}
			t.Parallel()
			w := leoproc.New(t)
			// The TUI draws nothing for its first 2 s, so its window can be
			// narrowed before the first frame (see below).
			w.WriteConfig(map[string]string{"FAKE_SLOW_START_MS": "2000"})
			d, _ := w.Start(readyDeadline)
			ctx := context.Background()
			if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h, Name: "cut"}); err != nil {
				t.Fatal(err)
			}
			reader, _ := harness.Lookup(h)
			pane := paneOf(t, w, "cut")

			// Make the cut deterministic: narrow the agent's window so a
			// long message shows truncated. The daemon pastes (the idle
			// screen reads as ready), then waits for the whole text to show
			// — which it cannot — so it never sends the Enter. Kill it while
			// it waits, then widen the window: the TUI redraws with leo's
			// paste whole in its input line, and no Enter comes.
			//
			// The narrowing happens before the TUI's first frame: tmux 3.3a
			// reflows a shrinking window's lines and leaves them marked
			// wrapped, so after a redraw `capture-pane -J` joins a
			// full-width line (claude's rules) with the next one.
			if out, err := w.Tmux("capture-pane", "-p", "-t", pane); err != nil || strings.TrimSpace(out) != "" {
				t.Fatalf("the TUI drew before its window was narrowed (%v): %q", err, out)
			}
			if _, err := w.Tmux("resize-window", "-t", "=leo-cut", "-x", "100", "-y", "50"); err != nil {
				t.Fatal(err)
			}
			w.WaitAll(30*time.Second, "agent running", func(as []api.Agent) bool {
				return len(as) == 1 && as[0].State == api.StateRunning
			})
			testutil.WaitFor(t, 20*time.Second, func() bool {
				s := screenOf(t, w, reader.Screen(), pane)
				return s.State == harness.ScreenReady && s.Input == ""
			}, "the agent idle in its narrowed window")
			cutText := "cut message " + strings.Repeat("x", 150)
			if _, err := w.Client.Send(ctx, "cut", cutText); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 20*time.Second, func() bool {
				s := screenOf(t, w, reader.Screen(), pane)
				return strings.HasPrefix(s.Input, "cut message")
			}, "the paste showing (truncated) in the input line")
			d.Kill(syscall.SIGKILL)
			if _, err := w.Tmux("resize-window", "-t", "=leo-cut", "-x", "200", "-y", "50"); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 20*time.Second, func() bool {
				return reader.Screen().Landed(screenOf(t, w, reader.Screen(), pane), cutText)
			}, "the cut paste showing in the input line")
			if n := w.SubmittedCounts()[cutText]; n != 0 {
				t.Fatalf("the cut message was submitted %d times before any new daemon ran", n)
			}

			w.Client.Close()
			w.Start(readyDeadline)
			if got := paneOf(t, w, "cut"); got != pane {
				t.Fatalf("the agent's pane changed from %s to %s: it was relaunched, not adopted", pane, got)
			}

			after := "after the restart"
			res, err := w.Client.Send(ctx, "cut", after)
			if err != nil {
				t.Fatal(err)
			}
			// Far under the delivery's own 60 s ready timeout: a healthy
			// agent takes a message in well under a second.
			outcome := w.Delivery("cut", res.ID, 20*time.Second)
			s := screenOf(t, w, reader.Screen(), pane)
			switch {
			case outcome == nil:
				t.Errorf("a message sent after the restart was not delivered within 20 s: the agent's input still holds %q (screen %s) from the killed daemon's paste", s.Input, s.State)
			case outcome.Status != "delivered":
				t.Errorf("message after the restart: %s %s", outcome.Status, outcome.Error)
			}
			order := w.Submitted()
			if n := count(order, cutText); n > 1 {
				t.Errorf("the cut message reached the TUI %d times", n)
			}
			if outcome != nil && count(order, after) != 1 {
				t.Errorf("the later message reached the TUI %d times, want once", count(order, after))
			}
			if i, j := slices.Index(order, cutText), slices.Index(order, after); i >= 0 && j >= 0 && i > j {
				t.Errorf("the cut message was submitted after the later one: %q", order)
			}
		})
	}
}

func paneOf(t *testing.T, w *leoproc.World, name string) string {
	t.Helper()
	recs, err := w.ReadAgentsFile()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Name == name && r.PaneID != "" {
			return r.PaneID
		}
	}
	t.Fatalf("no pane recorded for %s", name)
	return ""
}

func screenOf(t *testing.T, w *leoproc.World, r harness.ScreenReader, pane string) harness.Screen {
	t.Helper()
	out, err := w.Tmux("capture-pane", "-p", "-J", "-t", pane)
	if err != nil {
		t.Fatal(err)
	}
	return r.Classify(strings.TrimRight(out, "\n"))
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
