package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// userTurns is what the codex adapter's witness reads from the fake's
// rollouts.
func (h *harness) userTurns() []string {
	h.t.Helper()
	turns, err := codex.Codex{}.UserTurns(context.Background(), leoharness.SessionQuery{Workspace: h.dir, Env: h.home}, "")
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, u := range turns {
		out = append(out, u.Text)
	}
	return out
}

func (h *harness) classify() leoharness.Screen {
	return codex.Codex{}.Screen().Classify(h.screen())
}

func (h *harness) until(what string, ok func(leoharness.Screen) bool) {
	h.t.Helper()
	var s leoharness.Screen
	testutil.WaitFor(h.t, 10*time.Second, func() bool {
		s = h.classify()
		return ok(s)
	}, what)
}

func startCodex(t *testing.T, env map[string]string) *harness {
	t.Helper()
	home := testutil.FakeHome(t)
	dir := t.TempDir()
	trustCodex(t, home, dir)
	return start(t, launch{role: "codex", home: home, dir: dir, env: env})
}

// Enter before codex has finished starting is held: the text stays,
// "Waiting for startup" shows, and the turn starts once it has started.
func TestFakeCodexHoldsASubmitWhileStarting(t *testing.T) {
	t.Parallel()
	h := startCodex(t, map[string]string{"FAKE_CODEX_STARTUP_MS": "1500"})
	h.until("the composer", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenReady })
	h.submit("early bird", "› early bird")
	h.until("the submit held", func(s leoharness.Screen) bool { return s.Held })
	if got := h.messages(); len(got) != 0 {
		t.Fatalf("a held submit reached the model: %q", got)
	}
	h.waitFor("• echo: early bird")
	if got := h.messages(); !slices.Equal(got, []string{"early bird"}) {
		t.Fatalf("messages %q", got)
	}
	if got := h.userTurns(); !slices.Equal(got, []string{"early bird"}) {
		t.Fatalf("rollout turns %q", got)
	}
	if strings.Contains(h.screen(), "Waiting for startup") {
		t.Fatal("still waiting after the turn")
	}
}

// For FAKE_CODEX_SUBMIT_GAP_MS after Enter the composer is empty, the
// message shows in the history, no busy line shows and the rollout has no
// turn yet; then the turn starts.
func TestFakeCodexGapAfterEnter(t *testing.T) {
	t.Parallel()
	h := startCodex(t, map[string]string{"FAKE_CODEX_SUBMIT_GAP_MS": "1500", "FAKE_TURN_MS": "1000"})
	h.waitFor("← for agents · ? for shortcuts")
	h.submit("mind the gap", "› mind the gap")
	h.until("the gap: ready, empty, the message in the history", func(s leoharness.Screen) bool {
		return s.State == leoharness.ScreenReady && s.Input == "" && strings.Contains(h.screen(), "\n› mind the gap")
	})
	if got := h.userTurns(); len(got) != 0 {
		t.Fatalf("the rollout has %q before the turn started", got)
	}
	h.until("the turn", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenBusy })
	if got := h.userTurns(); !slices.Equal(got, []string{"mind the gap"}) {
		t.Fatalf("rollout turns %q once busy", got)
	}
	h.waitFor("• echo: mind the gap")
}

// A message submitted while a turn runs is folded into it, as real codex
// does: both are recorded, one reply answers them.
func TestFakeCodexFoldsAMessageSentMidTurn(t *testing.T) {
	t.Parallel()
	h := startCodex(t, map[string]string{"FAKE_TURN_MS": "1500"})
	h.waitFor("← for agents · ? for shortcuts")
	h.submit("first", "› first")
	h.until("the turn", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenBusy })
	h.submit("second", "› second")
	h.waitFor("• echo: first")
	scr := h.waitFor("Worked for")
	if strings.Count(scr, "• echo:") != 1 || !strings.Contains(scr, "  second") {
		t.Fatalf("want one reply to both:\n%s", scr)
	}
	if got := h.messages(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("messages %q", got)
	}
	if got := h.userTurns(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("rollout turns %q", got)
	}
}

// Typing while a submit is held cancels the hold, as in the real one: the
// text stays in the composer and nothing is submitted.
func TestFakeCodexTypingCancelsAHeldSubmit(t *testing.T) {
	t.Parallel()
	h := startCodex(t, map[string]string{"FAKE_CODEX_STARTUP_MS": "1500"})
	h.until("the composer", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenReady })
	h.submit("held alpha", "› held alpha")
	h.until("the submit held", func(s leoharness.Screen) bool { return s.Held })
	h.send(" beta")
	h.until("the hold cancelled", func(s leoharness.Screen) bool {
		return !s.Held && s.State == leoharness.ScreenReady && s.Input == "held alpha beta"
	})
	h.waitFor("gpt-fake default · ")   // started: the status line shows
	time.Sleep(300 * time.Millisecond) // proving a negative: nothing may be submitted
	if got := h.messages(); len(got) != 0 {
		t.Fatalf("submitted %q after the hold was cancelled", got)
	}
}

// A message submitted in the gap after Enter (before the busy line) is the
// next turn, not part of the first.
func TestFakeCodexSubmitInTheGapIsTheNextTurn(t *testing.T) {
	t.Parallel()
	h := startCodex(t, map[string]string{"FAKE_CODEX_SUBMIT_GAP_MS": "1500", "FAKE_TURN_MS": "300"})
	h.waitFor("← for agents · ? for shortcuts")
	h.submit("back one", "› back one")
	h.until("the gap", func(s leoharness.Screen) bool {
		return s.State == leoharness.ScreenReady && strings.Contains(h.screen(), "\n› back one")
	})
	h.submit("back two", "› back two")
	h.waitFor("• echo: back two")
	scr := h.screen()
	if !strings.Contains(scr, "• echo: back one\n") {
		t.Fatalf("want a reply to each:\n%s", scr)
	}
	if got := h.messages(); !slices.Equal(got, []string{"back one", "back two"}) {
		t.Fatalf("messages %q", got)
	}
}

// `codex resume` shows "Resuming session…" under the header while it
// loads (FAKE_CODEX_LOADING_MS), which reads as starting, as the real one.
func TestFakeCodexResumingReadsAsStarting(t *testing.T) {
	t.Parallel()
	first := startCodex(t, map[string]string{"FAKE_TURN_MS": "20"})
	first.waitFor("← for agents · ? for shortcuts")
	first.submit("remember me", "› remember me")
	first.waitFor("• echo: remember me")
	id := first.sessionID()
	h := start(t, launch{role: "codex", home: first.home, dir: first.dir, args: []string{"resume", id},
		env: map[string]string{"FAKE_CODEX_LOADING_MS": "1500"}})
	scr := h.waitFor("  Resuming session…")
	if s := (codex.Codex{}).Screen().Classify(scr); s.State != leoharness.ScreenStarting {
		t.Fatalf("resuming screen read as %+v:\n%s", s, scr)
	}
	sameShape(t, "starting-resuming", 120, 40, scr)
	h.until("ready once resumed", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenReady })
}
