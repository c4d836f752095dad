package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// codexShape is what the fake codex must share with a real capture of the
// same state: how the adapter reads it, and where the parts codex draws sit.
type codexShape struct {
	Screen leoharness.Screen
	// ComposerFromBottom counts the rows from the composer line down to
	// the last row that holds more than the warnings indicator.
	ComposerFromBottom int
	// BusyAbove counts the rows from the busy line down to the composer
	// (0: no busy line).
	BusyAbove int
	// Hint is the footer's hint (its last row, less the warnings
	// indicator, unless that is the status line), Status whether the
	// footer has a status line.
	Hint   string
	Status bool
	// HeaderRow is the row of the ">_ OpenAI Codex (v…" header (-1: not
	// on screen); Dialog the rows of the trust dialog's question and
	// preselected answer.
	HeaderRow int
	Dialog    [2]int
}

var (
	busyLine   = regexp.MustCompile(`^[•◦] (Working|Reconnecting)\b.*\(\d+s • esc to interrupt\)$`)
	statusLine = regexp.MustCompile(`^  \S+ \S+ · /`)
)

// shapeOf reads a plain capture of a whole pane.
func codexShapeOf(capture string) codexShape {
	rows := strings.Split(strings.TrimSuffix(capture, "\n"), "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	warningsOnly := func(r string) bool {
		w, _, _ := strings.Cut(r, "⚠")
		return strings.TrimSpace(w) == ""
	}
	last := len(rows) - 1
	for last >= 0 && warningsOnly(rows[last]) {
		last--
	}
	s := codexShape{Screen: codex.Codex{}.Screen().Classify(capture), HeaderRow: -1, Dialog: [2]int{-1, -1}}
	composer := -1
	for i := last; i >= 0; i-- {
		if strings.HasPrefix(rows[i], "› ") && !strings.HasPrefix(rows[i], "› 1.") {
			composer = i
			break
		}
		if i < last && strings.TrimSpace(rows[i]) != "" && !strings.HasPrefix(rows[i], " ") {
			break // a column-0 row below: no composer
		}
	}
	if composer >= 0 {
		s.ComposerFromBottom = last - composer
		for i := composer - 1; i >= 0 && i >= composer-4; i-- {
			if busyLine.MatchString(rows[i]) {
				s.BusyAbove = composer - i
			}
		}
		for i := composer + 1; i <= last; i++ {
			s.Status = s.Status || statusLine.MatchString(rows[i])
		}
		if last > composer && !statusLine.MatchString(rows[last]) {
			hint, _, _ := strings.Cut(rows[last], "⚠")
			s.Hint = strings.TrimSpace(hint)
		}
	}
	for i, r := range rows {
		switch {
		case strings.HasPrefix(r, "  >_ OpenAI Codex (v") && s.HeaderRow < 0:
			s.HeaderRow = i
		case strings.Contains(r, "Trust this folder?"):
			s.Dialog[0] = i
		case strings.HasPrefix(r, "› 1. Trust and continue"):
			s.Dialog[1] = i
		}
	}
	return s
}

// realCodexScreen is the real capture of state at size, "" when none was
// taken.
func realCodexScreen(t *testing.T, state string, w, h int) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "testdata", "screens", "codex", fmt.Sprintf("%s_%dx%d_v%s.txt", state, w, h, codexVersion))
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameShape compares the fake's screen with the real one of state; the
// input of a fake screen is what the test typed, so it is compared too.
func sameShape(t *testing.T, state string, w, h int, fake string) {
	t.Helper()
	real := realCodexScreen(t, state, w, h)
	if real == "" {
		t.Logf("no real %s capture at %dx%d", state, w, h)
		return
	}
	rs, fs := codexShapeOf(real), codexShapeOf(fake)
	if rs.HeaderRow < 0 || fs.HeaderRow < 0 { // scrolled away in one of them
		rs.HeaderRow, fs.HeaderRow = -1, -1
	}
	if !reflect.DeepEqual(rs, fs) {
		t.Errorf("%s at %dx%d: the fake's screen differs from the real one\nreal %+v\nfake %+v\n--- fake screen\n%s", state, w, h, rs, fs, fake)
	}
}

var codexSizes = [][2]int{{80, 24}, {120, 40}, {200, 50}, {100, 120}}

// TestFakeCodexScreensMatchReal walks the fake codex through the states the
// real one was captured in (testdata/screens/codex), at every captured
// size, and holds each screen to the real capture's shape, so the two
// cannot drift apart: a slow start (loading, a submit held until started),
// the gap after Enter, a turn, typing while busy, pastes, the trust dialog.
func TestFakeCodexScreensMatchReal(t *testing.T) {
	reader := codex.Codex{}.Screen()
	for _, size := range codexSizes {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			t.Parallel()
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			trustCodex(t, home, dir)
			fk := start(t, launch{role: "codex", home: home, dir: dir, width: w, height: h, env: map[string]string{
				"FAKE_CODEX_LOADING_MS":    "1500",
				"FAKE_CODEX_STARTUP_MS":    "4000",
				"FAKE_CODEX_SUBMIT_GAP_MS": "1500",
				"FAKE_TURN_MS":             "3000",
			}})
			until := func(what string, ok func(scr string, s leoharness.Screen) bool) string {
				t.Helper()
				var scr string
				testutil.WaitFor(t, 15*time.Second, func() bool {
					scr = fk.screen()
					return ok(scr, reader.Classify(scr))
				}, what)
				return scr
			}
			scr := until("the loading header", func(scr string, _ leoharness.Screen) bool {
				return strings.Contains(scr, "\n     loading\n")
			})
			sameShape(t, "starting-loading", w, h, scr)
			scr = until("the composer", func(_ string, s leoharness.Screen) bool { return s.State == leoharness.ScreenReady })
			sameShape(t, "ready-empty-prestartup", w, h, scr)

			fk.send("fix the failing test")
			scr = until("typed text", func(_ string, s leoharness.Screen) bool { return s.Input == "fix the failing test" })
			sameShape(t, "ready-typed", w, h, scr)
			time.Sleep(150 * time.Millisecond) // out of the paste-burst window
			fk.enter()
			scr = until("the submit held", func(_ string, s leoharness.Screen) bool { return s.Held })
			sameShape(t, "held", w, h, scr)

			scr = until("the gap after the held submit went", func(scr string, s leoharness.Screen) bool {
				return s.State == leoharness.ScreenReady && strings.Contains(scr, "\n› fix the failing test")
			})
			sameShape(t, "ready-submitted", w, h, scr)
			scr = until("the turn", func(_ string, s leoharness.Screen) bool { return s.State == leoharness.ScreenBusy })
			sameShape(t, "busy", w, h, scr)
			fk.send("queued follow-up")
			scr = until("text typed while busy", func(_ string, s leoharness.Screen) bool {
				return s.State == leoharness.ScreenBusy && s.Input == "queued follow-up"
			})
			sameShape(t, "busy-typed", w, h, scr)
			if err := fk.s.SendKeys(ctx(t), fk.pane.PaneID, "C-u"); err != nil {
				t.Fatal(err)
			}
			scr = until("the reply", func(scr string, s leoharness.Screen) bool {
				return s.State == leoharness.ScreenReady && s.Input == "" && strings.Contains(scr, "Worked for")
			})
			sameShape(t, "ready-after-turn", w, h, scr)
			sameShape(t, "ready-empty", w, h, scr)

			fk.send("line one\nline two\nline three")
			scr = until("a 3-line paste", func(_ string, s leoharness.Screen) bool { return s.Input == "line one\nline two\nline three" })
			sameShape(t, "ready-pasted-3line", w, h, scr)
			if err := fk.s.SendKeys(ctx(t), fk.pane.PaneID, "C-u"); err != nil {
				t.Fatal(err)
			}
			fk.send(strings.Repeat("word ", 800))
			scr = until("a 4,000-character paste", func(_ string, s leoharness.Screen) bool { return s.Input == "[Pasted Content 4000 chars]" })
			sameShape(t, "ready-pasted-long", w, h, scr)

			// An untrusted workspace: the folder-access dialog.
			tr := start(t, launch{role: "codex", home: testutil.FakeHome(t), width: w, height: h})
			scr = ""
			testutil.WaitFor(t, 15*time.Second, func() bool {
				scr = tr.screen()
				return reader.Classify(scr).State == leoharness.ScreenDialog
			}, "the trust dialog")
			sameShape(t, "trust-dialog", w, h, scr)
		})
	}
}
