package main

import (
	"context"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestFakeCompactIsWhatTheAdaptersRead: each fake runs a /compact pasted
// into its input line as its command (never as a turn) and records it the
// way the real tool does, which is what the adapter's Compactions reads:
// before any turn claude declines in its words and codex and opencode
// record nothing; after a turn each records a compaction.
func TestFakeCompactIsWhatTheAdaptersRead(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h0, _ := leoharness.Lookup(r.name)
			c, ok := h0.(leoharness.Compacter)
			if !ok {
				t.Fatalf("the %s adapter is no Compacter", r.name)
			}
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			if r.name == "codex" {
				trustCodex(t, home, dir)
			}
			h := start(t, launch{role: r.name, home: home, dir: dir})
			h.waitFor(r.ready)
			q := leoharness.SessionQuery{Workspace: dir, Env: home}
			since := time.Now().Add(-time.Second)
			compactions := func() []leoharness.Compaction {
				q.Since = since
				cs, err := c.Compactions(context.Background(), q, "")
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			h.submit(c.CompactCommand(), c.CompactCommand())
			testutil.WaitFor(t, 10*time.Second, func() bool {
				for _, m := range h.logLines() {
					if m["event"] == "compact" {
						return true
					}
				}
				return false
			}, "the fake to run /compact")
			cs := compactions()
			if r.name == "claude" {
				// The fake logs the command before its transcript has
				// the refusal: wait for the record itself.
				testutil.WaitFor(t, 10*time.Second, func() bool { cs = compactions(); return len(cs) > 0 }, "claude's refusal in its transcript")
			}
			switch r.name {
			case "claude":
				if len(cs) != 1 || cs[0].Refused != "Not enough messages to compact." {
					t.Fatalf("claude's /compact of an empty conversation: %+v, want its refusal", cs)
				}
			default:
				if len(cs) != 0 {
					t.Fatalf("%s's /compact of no conversation recorded %+v", r.name, cs)
				}
			}
			h.submit("hello there", r.composer)
			h.waitFor(r.echoReply)
			// The stores stamp milliseconds; nothing else is recorded
			// from here until the command.
			since = time.Now().Truncate(time.Millisecond)
			h.submit(c.CompactCommand(), c.CompactCommand())
			testutil.WaitFor(t, 10*time.Second, func() bool {
				cs = compactions()
				return len(cs) == 1
			}, "the adapter to read the fake's compaction:\n"+h.screen())
			if cs[0].Refused != "" || cs[0].SessionID == "" || (h.sessionID() != "" && cs[0].SessionID != h.sessionID()) {
				t.Fatalf("compaction %+v (session %s)", cs[0], h.sessionID())
			}
			for _, m := range h.messages() {
				if m == "/compact" {
					t.Fatalf("the fake took /compact as a turn: %q", h.messages())
				}
			}
		})
	}
}
