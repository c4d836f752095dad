package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// realOpencodeScreens is where the captures of the real opencode live.
var realOpencodeScreens = filepath.Join("..", "..", "..", "testdata", "screens", "opencode")

// ocLayout is the structure a fake screen must share with the real one of
// the same state and size: where the box's edge is (row, column, width),
// its mode line's row, and on the home screen the logo's row and column.
type ocLayout struct {
	edgeRow, edgeCol, edgeWidth int
	modeRow                     int
	logoRow, logoCol            int
}

func ocLayoutOf(capture string) ocLayout {
	l := ocLayout{edgeRow: -1, modeRow: -1, logoRow: -1, logoCol: -1}
	rows := strings.Split(capture, "\n")
	for i, row := range rows {
		r := []rune(strings.TrimRight(row, " "))
		for c, ch := range r {
			if ch == '╹' {
				l.edgeRow, l.edgeCol, l.edgeWidth = i, c, len(r)-c
				break
			}
		}
		if l.logoRow < 0 {
			if c := strings.Index(row, "█▀▀█ █▀▀█"); c >= 0 {
				l.logoRow, l.logoCol = i, len([]rune(row[:c]))
			}
		}
	}
	if l.edgeRow > 0 && strings.Contains(rows[l.edgeRow-1], "┃  Build · ") {
		l.modeRow = l.edgeRow - 1
	}
	return l
}

func ocWithoutSpinner(s string) string {
	return strings.NewReplacer("■", "", "⬝", "").Replace(s)
}

// TestOpencodeFakeMatchesRealScreens walks the fake opencode through the
// states captured from the real one, at every size they were captured at,
// and holds each fake screen to the real capture of the same state and
// size: the adapter reads both the same (state and input), and the box,
// its mode line and the home screen's logo sit in the same rows and
// columns. The fake cannot drift from the real TUI without this failing.
func TestOpencodeFakeMatchesRealScreens(t *testing.T) {
	h0, ok := leoharness.Lookup("opencode")
	if !ok {
		t.Fatal("no opencode adapter registered")
	}
	reader := h0.Screen()
	threeLines := "line one\nline two\nline three"
	long := strings.Repeat("alpha beta ", 364)[:4000]
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}, {100, 120}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := start(t, launch{role: "opencode", width: size[0], height: size[1],
				env: map[string]string{"FAKE_TURN_MS": "2500"}})
			compared := 0
			check := func(state, want string) {
				t.Helper()
				// A capture can catch a frame half drawn: compare only one
				// that two captures in a row agree on (but for the spinner).
				var fake, prev string
				testutil.WaitFor(t, 10*time.Second, func() bool {
					fake = h.screen()
					settled := ocWithoutSpinner(fake) == ocWithoutSpinner(prev)
					prev = fake
					return settled && strings.Contains(fake, want)
				}, state+" to show "+want)
				real := filepath.Join(realOpencodeScreens, fmt.Sprintf("%s_%dx%d_v%s.txt", state, size[0], size[1], ocVersion))
				data, err := os.ReadFile(real)
				if os.IsNotExist(err) {
					return // not captured at this size
				}
				if err != nil {
					t.Fatal(err)
				}
				compared++
				gotR, gotF := reader.Classify(string(data)), reader.Classify(fake)
				if gotR.State != gotF.State || gotR.Input != gotF.Input {
					t.Errorf("%s: real reads %s %q, fake reads %s %q\nfake:\n%s", state, gotR.State, gotR.Input, gotF.State, gotF.Input, fake)
				}
				if lr, lf := ocLayoutOf(string(data)), ocLayoutOf(fake); lr != lf {
					t.Errorf("%s: real layout %+v, fake layout %+v\nfake:\n%s", state, lr, lf, fake)
				}
			}
			clear := func() {
				t.Helper()
				if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "C-u"); err != nil {
					t.Fatal(err)
				}
				h.waitFor("Ask anything…")
			}
			check("ready-empty-home", "Ask anything…")
			h.send("fix the failing test")
			check("ready-typed-home", "fix the failing test")
			clear()
			h.send(threeLines)
			check("ready-pasted3-home", "[Pasted ~3 lines]")
			clear()
			h.send(long)
			check("ready-pasted4000-home", "[Pasted ~1 lines]")
			clear()
			h.send("cut message " + strings.Repeat("x", 130))
			check("ready-pasted-long-home", "cut message")
			clear()
			h.send("please say LEO-abc1 backtwo")
			h.waitFor("backtwo")
			h.enter()
			check("busy-first", "esc interrupt")
			check("ready-after-turn", "echo: please say LEO-abc1 backtwo")
			h.send("and another thing")
			check("ready-typed-after-turn", "and another thing")
			if compared < 5 {
				t.Fatalf("only %d states had a real capture at this size", compared)
			}
		})
	}
}

// TestOpencodeFakeWritesTheStoreTheAdapterReads: a turn in the fake TUI
// and one headless run are in the fake's opencode.db, where the adapter's
// TurnWitness finds them as it finds the real opencode's.
func TestOpencodeFakeWritesTheStoreTheAdapterReads(t *testing.T) {
	h0, _ := leoharness.Lookup("opencode")
	w, ok := h0.(leoharness.TurnWitness)
	if !ok {
		t.Fatal("the opencode adapter is not a TurnWitness")
	}
	since := time.Now().Add(-time.Second)
	h := start(t, launch{role: "opencode"})
	h.waitFor("Ask anything…")
	h.submit("line one\nline two\nline three", "[Pasted ~3 lines]")
	h.waitFor("echo: line one")
	h.submit("hello there", "┃  hello there")
	h.waitFor("echo: hello there")
	q := leoharness.SessionQuery{Workspace: h.dir, Env: h.home, Since: since}
	var turns []leoharness.UserTurn
	testutil.WaitFor(t, 10*time.Second, func() bool {
		var err error
		turns, err = w.UserTurns(ctx(t), q, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(turns) == 2
	}, "two user turns in the fake's store")
	if turns[0].Text != "line one\nline two\nline three" || turns[1].Text != "hello there" || turns[0].SessionID != turns[1].SessionID || turns[0].SessionID != h.sessionID() {
		t.Fatalf("turns %+v (session %s)", turns, h.sessionID())
	}
	if got, err := w.UserTurns(ctx(t), q, "ses_other"); err != nil || len(got) != 0 {
		t.Fatalf("another session: %+v, %v", got, err)
	}
}

// With FAKE_OPENCODE_FIRST_SUBMIT_GAP_MS the fake imitates the real first
// turn: after Enter the home screen stays, empty and idle-looking, while
// the message is already in the store.
func TestOpencodeFakeFirstSubmitGap(t *testing.T) {
	h0, _ := leoharness.Lookup("opencode")
	reader, w := h0.Screen(), h0.(leoharness.TurnWitness)
	since := time.Now().Add(-time.Second)
	h := start(t, launch{role: "opencode", env: map[string]string{"FAKE_OPENCODE_FIRST_SUBMIT_GAP_MS": "60000", "FAKE_TURN_MS": "60000"}})
	h.waitFor("Ask anything…")
	h.submit("first LEO-1", "┃  first LEO-1")
	testutil.WaitFor(t, 10*time.Second, func() bool {
		turns, err := w.UserTurns(ctx(t), leoharness.SessionQuery{Workspace: h.dir, Env: h.home, Since: since}, "")
		return err == nil && len(turns) == 1 && turns[0].Text == "first LEO-1"
	}, "the first turn in the store")
	scr := h.waitFor("Ask anything…")
	if got := reader.Classify(scr); got.State != leoharness.ScreenReady || got.Input != "" || !strings.Contains(scr, "█▀▀█") {
		t.Fatalf("during the gap the screen reads %+v:\n%s", got, scr)
	}
}
