package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Every message a sender writes reaches the TUI as the text of one message
// or not at all: the review's injection ("…ESC[201~ CR INJECTED CR") and
// escapes are refused whole at the edge with invalid_args and type nothing;
// the text messages around them each land as exactly one turn.
func TestHostileMessagesNeverTypeKeys(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			e.waitState(m, h, api.StateRunning)
			hostile := []string{
				"first\x1b[201~\rINJECTED-SUBMIT\r",
				"hello \x1b[31mRED\x1b[0m end",
				"nul\x00byte",
				"\x1b[200~paste\x1b[201~",
				"c1 \u009b201~ CSI",
				"del\x7f\x7f\x7f",
				"ctrl-c \x03 ctrl-d \x04",
				"line\u2028separator",
			}
			for _, msg := range hostile {
				_, err := m.Send(context.Background(), h, msg)
				if api.CodeOf(err) != api.CodeInvalidArgs || !strings.Contains(err.Error(), "line 1, column") {
					t.Fatalf("Send(%q) = %v; want invalid_args naming where", msg, err)
				}
			}
			// Text the TUI would run as a command of its own, not a message.
			for _, msg := range []string{"/exit", "  /clear", "!touch /tmp/pwned", "\n!rm -rf x"} {
				_, err := m.Send(context.Background(), h, msg)
				if api.CodeOf(err) != api.CodeInvalidArgs || !strings.Contains(err.Error(), "as a command") {
					t.Fatalf("Send(%q) = %v; want invalid_args: a command, not a message", msg, err)
				}
			}
			texts := []string{"tab\tseparated", "crlf line\r\nsecond", "unicode é 日本 🚀", "a path /like/this and a ! mark"}
			var last string
			for _, msg := range texts {
				res, err := m.Send(context.Background(), h, msg)
				if err != nil {
					t.Fatalf("Send(%q): %v", msg, err)
				}
				last = res.ID
			}
			waitDelivered(t, m, h, last)
			want := []string{"tab\tseparated", "crlf line\nsecond", "unicode é 日本 🚀", "a path /like/this and a ! mark"}
			got := e.submitted()
			if len(got) != len(want) {
				t.Fatalf("harness took %d turns %q, want %q", len(got), got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("turn %d = %q, want %q", i, got[i], want[i])
				}
			}
		})
	}
}
