package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
)

// claudeFixtures is where the captures of the real claude are.
var claudeFixtures = filepath.Join("..", "..", "..", "testdata", "screens", "claude")

// claudeShape is what must be the same on the fake's screen and the real
// capture of the same state at the same size: how leo's reader classifies
// it, and the layout the reader and a person rely on.
type claudeShape struct {
	State     leoharness.ScreenState
	Input     string // white space runs as one space
	Dialog    string
	BoxRow    int    // row of the rule above the input line (-1: none)
	PromptCol int    // column of ❯ on the input line
	RuleWidth int    // runes in that rule
	Footer    string // first part of the line under the box ("? for shortcuts")
	Banner    string // how the first row starts ("╭───"), when the banner shows
	Spinner   bool   // a spinner line (glyph, space, verb…) above the box
}

func claudeShapeOf(capture string) claudeShape {
	s := claude.Claude{}.Screen().Classify(capture)
	sh := claudeShape{State: s.State, Input: strings.Join(strings.Fields(s.Input), " "), Dialog: s.Dialog, BoxRow: -1}
	lines := strings.Split(capture, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		t := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(t, "❯") || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "───") {
			continue
		}
		sh.BoxRow = i - 1
		sh.PromptCol = utf8.RuneCountInString(lines[i]) - utf8.RuneCountInString(t)
		sh.RuleWidth = utf8.RuneCountInString(strings.TrimSpace(lines[i-1]))
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "───") {
				// The footers that tell idle from busy; passing hints
				// ("paste again to expand", "ctrl+g to edit in Vim") are
				// not imitated.
				if j+1 < len(lines) {
					f, _, _ := strings.Cut(strings.TrimSpace(lines[j+1]), " · ")
					if f == "? for shortcuts" || f == "esc to interrupt" {
						sh.Footer = f
					}
				}
				break
			}
		}
		for _, l := range lines[max(0, i-4):i] {
			r, size := utf8.DecodeRuneInString(l)
			if strings.ContainsRune("·✢✳✶✻✽*", r) && strings.HasPrefix(l[size:], " ") && strings.Contains(l, "…") {
				sh.Spinner = true
			}
		}
		break
	}
	if strings.HasPrefix(lines[0], "╭───") {
		sh.Banner = "╭───"
	}
	return sh
}

// TestFakeClaudeScreensMatchReal drives the fake claude through the states
// captured from the real one, at the sizes they were captured at, and
// checks each screen has the shape of the real capture: same
// classification, box in the same row and column, same rule width, same
// footer, banner and spinner.
func TestFakeClaudeScreensMatchReal(t *testing.T) {
	const version = "v2.1.197"
	sizes := [][2]int{{80, 24}, {120, 40}, {200, 50}, {100, 120}}
	for _, size := range sizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			real := func(state string) (claudeShape, bool) {
				b, err := os.ReadFile(filepath.Join(claudeFixtures, fmt.Sprintf("%s_%dx%d_%s.txt", state, size[0], size[1], version)))
				if err != nil {
					return claudeShape{}, false
				}
				return claudeShapeOf(string(b)), true
			}
			h := start(t, launch{role: "claude", width: size[0], height: size[1],
				env: map[string]string{"FAKE_TURN_MS": "4000", "FAKE_TRUST_DIALOG": "1", "FAKE_TRUST_ANSWER_MS": "1500"}})
			// compare waits until the fake's screen has the real capture's
			// shape (screens are drawn asynchronously), or fails showing both.
			compare := func(state string) {
				t.Helper()
				want, ok := real(state)
				if !ok {
					return // not captured at this size
				}
				var got claudeShape
				var scr string
				for deadline := time.Now().Add(10 * time.Second); ; {
					scr = h.screen()
					if got = claudeShapeOf(scr); got == want {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("the fake's %s screen lacks the real shape\n got %+v\nwant %+v\nscreen:\n%s", state, got, want, scr)
					}
					time.Sleep(20 * time.Millisecond) // polling a tmux pane, bounded by the deadline
				}
			}
			if size == [2]int{80, 24} {
				compare("trust-dialog")
			} else {
				h.waitFor("Is this a project you created")
			}
			h.enter()
			if size == [2]int{120, 40} {
				compare("trust-dialog-answering")
			}
			compare("ready-empty")
			h.send("fix the failing test")
			compare("ready-typed")
			clear := func() {
				t.Helper()
				if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "C-u"); err != nil {
					t.Fatal(err)
				}
				h.waitFor("? for shortcuts")
			}
			clear()
			h.send("line one MARK3L\nline two\nline three")
			compare("ready-pasted-3line")
			clear()
			b, err := os.ReadFile(filepath.Join("testdata", "paste-4k.txt"))
			if err != nil {
				t.Fatal(err)
			}
			h.send(string(b))
			if size != [2]int{80, 24} { // the real 80x24 capture kept the 3-line paste
				compare("ready-pasted-4k")
			}
			clear()
			h.send("say hello MARK1")
			compare("ready-pasted-1line")
			h.enter()
			compare("busy")
			h.waitFor("● echo: say hello MARK1")
			if size != [2]int{80, 24} {
				// At 80x24 the real capture has scrolled one row further
				// for a transient notice under the footer ("tmux
				// focus-events off …") that the fake does not draw.
				compare("ready-after-turn")
			}
		})
	}
}

// TestFakeClaudeSubmitLag: with FAKE_SUBMIT_LAG_MS the fake does what the
// real claude does after Enter: the message is in the transcript (where the
// adapter's turn witness finds it) while the box still shows it and no
// spinner shows; then the box clears and the turn runs.
func TestFakeClaudeSubmitLag(t *testing.T) {
	id := "0b7c8a3e-5a43-4f7e-9d0e-222222222222"
	h := start(t, launch{role: "claude", args: []string{"--session-id", id},
		env: map[string]string{"FAKE_SUBMIT_LAG_MS": "3000", "FAKE_TURN_MS": "2000"}})
	h.waitFor("? for shortcuts")
	h.send("lagged MARKL")
	h.waitFor("❯ lagged MARKL")
	h.enter()
	q := leoharness.SessionQuery{Workspace: h.dir, Env: map[string]string{"HOME": h.home["HOME"]}}
	for deadline := time.Now().Add(10 * time.Second); ; {
		turns, err := claude.Claude{}.UserTurns(ctx(t), q, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(turns) == 1 && turns[0].Text == "lagged MARKL" && turns[0].SessionID == id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the witness never saw the message: %+v", turns)
		}
		time.Sleep(20 * time.Millisecond) // polling a file, bounded by the deadline
	}
	if s := (claude.Claude{}).Screen().Classify(h.screen()); s.State != leoharness.ScreenReady || s.Input != "lagged MARKL" {
		t.Fatalf("right after the transcript entry the screen is %+v, want the text still in the box", s)
	}
	h.waitFor("  esc to interrupt · ← for agents")
	h.waitFor("● echo: lagged MARKL")
	if got := h.messages(); len(got) != 1 {
		t.Fatalf("messages %q: want the one turn", got)
	}
}
