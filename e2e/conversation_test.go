package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
)

// The binary end to end, on each fake harness: `leo agent send --reply`
// prints the reply of that message's turn (read from the fake's record),
// `leo agent conversation --json` lists the turns with their senders, and
// `leo agent list` shows today's usage.
func TestSendReplyAndConversationThroughTheBinary(t *testing.T) {
	w := newWorld(t)
	w.WriteConfig(nil)
	w.startDaemon()
	ctx := context.Background()
	for _, h := range leoproc.Harnesses {
		if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range leoproc.Harnesses {
		t.Run(h, func(t *testing.T) {
			w.WaitAll(time.Minute, h+" running", func(as []api.Agent) bool {
				for _, a := range as {
					if a.Name == h {
						return a.State == api.StateRunning
					}
				}
				return false
			})
			out, err := w.Leo(ctx, "agent", "send", h, "what is", "the answer", "--reply", "--timeout", "1m")
			if err != nil || string(out) != "echo: what is the answer\n" {
				t.Fatalf("send --reply: %q, %v", out, err)
			}
			out, err = w.Leo(ctx, "agent", "conversation", h, "--json")
			var c api.Conversation
			if err != nil || json.Unmarshal(out, &c) != nil {
				t.Fatalf("conversation --json: %q, %v", out, err)
			}
			if len(c.Turns) != 1 || c.Turns[0].User.Sender != api.SenderCLI || c.Turns[0].Reply.Text != "echo: what is the answer" || c.Turns[0].Usage == nil {
				t.Fatalf("conversation %+v", c)
			}
			out, err = w.Leo(ctx, "agent", "list")
			if err != nil || !strings.Contains(string(out), "USAGE TODAY") {
				t.Fatalf("agent list: %q, %v", out, err)
			}
		})
	}
}
