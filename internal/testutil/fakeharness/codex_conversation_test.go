package main

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// turnShape is what a turn read from a rollout looks like, whatever the
// words: which fields the record filled, the outcome and the tokens.
type turnShape struct {
	Outcome                  leoharness.TurnOutcome
	User, Reply, Error, Ends bool
	IDLen, Tools             int
	Usage                    *leoharness.Usage
}

func shapeOf(t leoharness.Turn) turnShape {
	return turnShape{Outcome: t.Outcome, User: t.User != "", Reply: t.Reply != "", Error: t.Error != "",
		Ends: !t.EndedAt.IsZero() && !t.EndedAt.Before(t.StartedAt), IDLen: len(t.ID), Tools: len(t.Tools), Usage: t.Usage}
}

// The codex adapter's Conversation reads the fake's rollout as it reads
// the real capture (internal/harness/codex/testdata/records_v0.171.0): an
// answered turn (the reply, the model server's tokens), an interrupted
// one (no reply, no tokens, though a token_count was written) and one the
// model refused (codex's words, no tokens) have the shapes of the real
// LEO-rec-001, -003 and -004.
func TestFakeCodexRolloutReadsAsTheRealConversation(t *testing.T) {
	t.Parallel()
	real, err := codex.Codex{}.Conversation(context.Background(),
		leoharness.SessionQuery{Env: map[string]string{"CODEX_HOME": filepath.Join("..", "..", "harness", "codex", "testdata", "records_v0.171.0")}},
		"01a23705-4239-78f2-ad0e-2469922973a2")
	if err != nil || len(real) != 13 {
		t.Fatalf("the real capture: %d turns, %v", len(real), err)
	}
	home := testutil.FakeHome(t)
	dir := t.TempDir()
	trustCodex(t, home, dir)
	h := start(t, launch{role: "codex", home: home, dir: dir, env: map[string]string{"FAKE_TURN_MS": "2000"}})
	h.waitFor("› Ask Codex to do anything")
	q := leoharness.SessionQuery{Workspace: dir, Env: home}
	conversation := func() []leoharness.Turn {
		id, err := codex.Codex{}.Sessions().Discover(context.Background(), q)
		if err != nil || id == "" {
			return nil
		}
		turns, err := codex.Codex{}.Conversation(context.Background(), q, id)
		if err != nil {
			t.Fatal(err)
		}
		return turns
	}
	var turns []leoharness.Turn
	waitTurns := func(what string, n int, outcome leoharness.TurnOutcome) {
		t.Helper()
		testutil.WaitFor(t, 20*time.Second, func() bool {
			turns = conversation()
			return len(turns) == n && turns[n-1].Outcome == outcome
		}, what)
	}

	h.submit("hello there", "› hello there")
	waitTurns("the first turn running", 1, leoharness.OutcomeRunning)
	if got := shapeOf(turns[0]); got != (turnShape{Outcome: leoharness.OutcomeRunning, User: true, IDLen: 36}) {
		t.Fatalf("running: %+v", turns[0])
	}
	waitTurns("the first turn answered", 1, leoharness.OutcomeOK)

	h.submit("interrupt me", "› interrupt me")
	waitTurns("the second turn running", 2, leoharness.OutcomeRunning)
	if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "Escape"); err != nil {
		t.Fatal(err)
	}
	waitTurns("the second turn interrupted", 2, leoharness.OutcomeInterrupted)

	h.submit("please fake-model-error", "› please fake-model-error")
	waitTurns("the third turn refused", 3, leoharness.OutcomeError)

	if turns[0].User != "hello there" || turns[0].Reply != "echo: hello there" || turns[1].User != "interrupt me" ||
		turns[2].Error != `{"error":{"code":null,"message":"fake: scripted error","type":"server_error"}}` {
		t.Errorf("the fake's turns: %+v", turns)
	}
	for i, r := range []int{0, 2, 3} {
		if got, want := shapeOf(turns[i]), shapeOf(real[r]); !reflect.DeepEqual(got, want) {
			t.Errorf("fake turn %d reads as %+v, the real LEO-rec-00%d as %+v", i, got, r+1, want)
		}
	}
}
