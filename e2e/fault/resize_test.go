package fault

import (
	"context"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
)

// TestDeliveryAfterWindowShrink: a person who attaches from a smaller
// terminal shrinks the agent's window (tmux's window-size "latest"); the
// agent must still take messages afterwards. tmux 3.3a reflows the lines
// of a shrinking window and leaves them marked wrapped; a TUI that then
// redraws a full-width line (claude's input-box rules) gets it joined with
// the next line by `capture-pane -J`, so a reader that expects the rule and
// the prompt on lines of their own no longer finds the input line.
func TestDeliveryAfterWindowShrink(t *testing.T) {
	for _, h := range leoproc.Harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			w := leoproc.New(t)
			w.WriteConfig(nil)
			w.Start(readyDeadline)
			ctx := context.Background()
			if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h, Name: "small"}); err != nil {
				t.Fatal(err)
			}
			w.WaitAll(30*time.Second, "agent running", func(as []api.Agent) bool {
				return len(as) == 1 && as[0].State == api.StateRunning
			})
			// What attaching from an 80x24 terminal does to the window.
			if _, err := w.Tmux("resize-window", "-t", "=leo-small", "-x", "80", "-y", "24"); err != nil {
				t.Fatal(err)
			}
			text := "after the shrink"
			res, err := w.Client.Send(ctx, "small", text)
			if err != nil {
				t.Fatal(err)
			}
			outcome := w.Delivery("small", res.ID, 20*time.Second)
			switch {
			case outcome == nil:
				screen, _ := w.Tmux("capture-pane", "-p", "-J", "-t", paneOf(t, w, "small"))
				t.Errorf("a message was not delivered within 20 s of the window shrinking to 80x24; the pane (capture-pane -J) reads:\n%s", screen)
			case outcome.Status != "delivered":
				t.Errorf("message after the shrink: %s %s", outcome.Status, outcome.Error)
			case w.SubmittedCounts()[text] != 1:
				t.Errorf("the message reached the TUI %d times, want once", w.SubmittedCounts()[text])
			}
		})
	}
}
