package main

import (
	"context"
	"reflect"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestFakeOpencodeRecordsWhatConversationReads: the fake opencode's store
// reads as the real one's does (internal/harness/opencode's
// TestConversationOfTheRealStore): an answered turn with its reply and the
// model server's tokens (10 in, 3 out a step), an interrupted one with no
// reply and no tokens, /compact as a turn of no text answered by its
// summary; in order, each turn's id its user message's.
func TestFakeOpencodeRecordsWhatConversationReads(t *testing.T) {
	t.Parallel()
	r := roles[2]
	if r.name != "opencode" {
		t.Fatal("roles[2] is not opencode")
	}
	h0, _ := leoharness.Lookup("opencode")
	cr, ok := h0.(leoharness.ConversationReader)
	if !ok {
		t.Fatal("the opencode adapter is no ConversationReader")
	}
	home := testutil.FakeHome(t)
	dir := t.TempDir()
	h := start(t, launch{role: r.name, home: home, dir: dir, env: map[string]string{"FAKE_TURN_MS": "2000"}})
	h.waitFor(r.ready)
	q := leoharness.SessionQuery{Workspace: dir, Env: home}
	turns := func() []leoharness.Turn {
		id := h.sessionID()
		if id == "" {
			return nil
		}
		ts, err := cr.Conversation(context.Background(), q, id)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	waitTurns := func(what string, cond func([]leoharness.Turn) bool) []leoharness.Turn {
		var ts []leoharness.Turn
		testutil.WaitFor(t, 20*time.Second, func() bool { ts = turns(); return cond(ts) }, what)
		return ts
	}

	h.submit("hello there", r.composer)
	ts := waitTurns("the first turn running", func(ts []leoharness.Turn) bool { return len(ts) == 1 })
	if ts[0].User != "hello there" || ts[0].Outcome != leoharness.OutcomeRunning || ts[0].Reply != "" || !ts[0].EndedAt.IsZero() {
		t.Fatalf("the first turn as it runs: %+v", ts[0])
	}
	h.waitFor(r.echoReply)
	waitTurns("the first turn answered", func(ts []leoharness.Turn) bool { return len(ts) == 1 && ts[0].Outcome == leoharness.OutcomeOK })

	h.submit("interrupt me", "interrupt me")
	waitTurns("the second turn running", func(ts []leoharness.Turn) bool { return len(ts) == 2 })
	if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "Escape"); err != nil {
		t.Fatal(err)
	}
	waitTurns("the second turn interrupted", func(ts []leoharness.Turn) bool {
		return len(ts) == 2 && ts[1].Outcome == leoharness.OutcomeInterrupted
	})
	h.waitFor(r.ready)

	h.submit("/compact", "/compact")
	ts = waitTurns("the compaction answered", func(ts []leoharness.Turn) bool { return len(ts) == 3 && ts[2].Outcome == leoharness.OutcomeOK })

	step := &leoharness.Usage{InputTokens: 10, OutputTokens: 3}
	want := []struct {
		user, reply string
		outcome     leoharness.TurnOutcome
		usage       *leoharness.Usage
	}{
		{"hello there", "echo: hello there", leoharness.OutcomeOK, step},
		{"interrupt me", "", leoharness.OutcomeInterrupted, nil},
		{"", "summary of the session so far", leoharness.OutcomeOK, step},
	}
	for i, w := range want {
		g := ts[i]
		if g.User != w.user || g.Reply != w.reply || g.Outcome != w.outcome || !reflect.DeepEqual(g.Usage, w.usage) ||
			g.Error != "" || g.CostUSD != nil || len(g.Tools) != 0 || g.ID == "" || g.EndedAt.Before(g.StartedAt) || g.EndedAt.IsZero() {
			t.Errorf("turn %d: %+v (usage %+v), want %+v", i, g, g.Usage, w)
		}
		if i > 0 && (g.ID == ts[i-1].ID || g.StartedAt.Before(ts[i-1].StartedAt)) {
			t.Errorf("turn %d: id %s started %v after turn %d's %s %v", i, g.ID, g.StartedAt, i-1, ts[i-1].ID, ts[i-1].StartedAt)
		}
	}
}
