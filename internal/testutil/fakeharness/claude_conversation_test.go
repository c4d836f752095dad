package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// claudeTurnShape is what the fake's turns must share with the real ones: how
// the turn ended, whether it has a reply and usage, its tools' names and
// the keys of their inputs.
type claudeTurnShape struct {
	Outcome           leoharness.TurnOutcome
	Reply, Usage, End bool
	Tools             []string
}

func claudeTurnShapeOf(t *testing.T, x leoharness.Turn) claudeTurnShape {
	t.Helper()
	s := claudeTurnShape{Outcome: x.Outcome, Reply: x.Reply != "", Usage: x.Usage != nil && x.Usage.OutputTokens > 0, End: !x.EndedAt.IsZero()}
	for _, c := range x.Tools {
		var in map[string]any
		if err := json.Unmarshal([]byte(c.Input), &in); err != nil {
			t.Fatalf("tool %s input %q: %v", c.Name, c.Input, err)
		}
		_, hasCommand := in["command"]
		s.Tools = append(s.Tools, c.Name+map[bool]string{true: "(command)", false: "()"}[hasCommand])
	}
	if x.ID == "" || x.StartedAt.IsZero() {
		t.Fatalf("turn %q without id or start", x.User)
	}
	return s
}

// TestFakeClaudeConversationMatchesReal: the adapter reads the fake
// claude's transcript as it reads the real claude's
// (internal/harness/claude/testdata/records_v2.1.197.jsonl): a plain turn
// (001), a turn with a Bash call (002), a turn interrupted before the
// model answered (003) and a plain turn after it (009) have the same
// shape — outcome, reply, usage, tools — and the fake's replies and
// texts are its own.
func TestFakeClaudeConversationMatchesReal(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "harness", "claude", "testdata", "records_v2.1.197.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const realID = "44444444-2222-4333-8444-000000000001"
	realEnv := map[string]string{"HOME": t.TempDir()}
	path := claude.TranscriptPath(realEnv, "/ws", realID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	real, err := claude.Claude{}.Conversation(context.Background(), leoharness.SessionQuery{Workspace: "/ws", Env: realEnv}, realID)
	if err != nil || len(real) != 9 {
		t.Fatalf("the real capture: %d turns, %v", len(real), err)
	}

	home := testutil.FakeHome(t)
	dir := t.TempDir()
	id := uuid.NewString()
	h := start(t, launch{role: "claude", home: home, dir: dir, args: []string{"--session-id", id, "--permission-mode", "acceptEdits"},
		env: map[string]string{"FAKE_TURN_MS": "1500"}})
	q := leoharness.SessionQuery{Workspace: dir, Env: home}
	read := func() []leoharness.Turn {
		turns, err := claude.Claude{}.Conversation(context.Background(), q, id)
		if err != nil {
			t.Fatal(err)
		}
		return turns
	}
	waitTurns := func(what string, cond func([]leoharness.Turn) bool) []leoharness.Turn {
		var turns []leoharness.Turn
		testutil.WaitFor(t, 20*time.Second, func() bool { turns = read(); return cond(turns) }, what)
		return turns
	}
	lastEnded := func(n int) func([]leoharness.Turn) bool {
		return func(ts []leoharness.Turn) bool { return len(ts) == n && ts[n-1].Outcome != leoharness.OutcomeRunning }
	}
	h.waitFor("? for shortcuts")
	h.submit("hello there", "❯ hello there")
	waitTurns("the first turn ended", lastEnded(1))
	h.submit("run it fake-ask:echo tool-ran", "fake-ask:echo tool-ran")
	waitTurns("the tool turn ended", lastEnded(2))
	h.submit("interrupt me", "❯ interrupt me")
	waitTurns("the third turn running", func(ts []leoharness.Turn) bool { return len(ts) == 3 })
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
	if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "C-u"); err != nil { // the message put back
		t.Fatal(err)
	}
	h.submit("the last one", "❯ the last one")
	fake := waitTurns("the last turn ended", lastEnded(4))

	for i, r := range []int{0, 1, 2, 8} {
		got, want := claudeTurnShapeOf(t, fake[i]), claudeTurnShapeOf(t, real[r])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fake turn %d %q: %+v\nthe real turn %q: %+v", i+1, fake[i].User, got, real[r].User, want)
		}
	}
	for i, w := range []struct{ user, reply string }{
		{"hello there", "echo: hello there"},
		{"run it fake-ask:echo tool-ran", "echo: run it fake-ask:echo tool-ran"},
		{"interrupt me", ""},
		{"the last one", "echo: the last one"},
	} {
		if fake[i].User != w.user || fake[i].Reply != w.reply {
			t.Errorf("fake turn %d: %q → %q, want %q → %q", i+1, fake[i].User, fake[i].Reply, w.user, w.reply)
		}
	}
}
