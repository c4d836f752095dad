package harnesstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// RedrawnPastes are the texts pasted (never submitted) into each real TUI
// to see how it draws them, by the state part of the fixture name
// (testdata/screens/<h>/<state>_<size>_v<version>.txt, with "-home"
// after the state on opencode's home screen, captured by
// e2e/realcli/cmd/capturescreens). The last word is a marker.
var RedrawnPastes = map[string]string{
	"ready-pasted-skintone":       "thumbs 👍🏽 MARKU2",
	"ready-pasted-decomposed":     "cafe\u0301 MARKU3",
	"ready-pasted-tab":            "tab\there MARKU4",
	"ready-pasted-leading-spaces": "    lead MARKU5",
	"ready-pasted-mixed":          "  a\tb 👋🏿 nai\u0308ve MARKU6",
}

// RedrawnFixture is one capture of a RedrawnPastes text.
type RedrawnFixture struct {
	File, State, Pasted, Capture string
}

// RedrawnFixtures returns the captures in dir of the RedrawnPastes texts;
// it fails when there are none.
func RedrawnFixtures(t testing.TB, dir string) []RedrawnFixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "ready-pasted-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []RedrawnFixture
	for _, f := range files {
		state, _, _ := strings.Cut(filepath.Base(f), "_")
		// opencode's names say the home screen ("-home").
		p, ok := RedrawnPastes[strings.TrimSuffix(state, "-home")]
		if !ok {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, RedrawnFixture{File: f, State: state, Pasted: p, Capture: string(b)})
	}
	if len(out) == 0 {
		t.Fatalf("no captures of the redrawn pastes in %s", dir)
	}
	return out
}

// LandedRedrawn checks r.Landed on the real captures of the redrawn
// pastes: each shows its own paste as landed (what the TUI drew, compared
// the way it draws), and not a paste with a marker it does not show.
func LandedRedrawn(t *testing.T, r harness.ScreenReader, dir string) {
	t.Helper()
	for _, fx := range RedrawnFixtures(t, dir) {
		s := r.Classify(fx.Capture)
		if s.State != harness.ScreenReady {
			t.Errorf("%s: screen %s, want ready", fx.File, s.State)
			continue
		}
		if !r.Landed(s, fx.Pasted) {
			t.Errorf("%s: Landed(input %q, pasted %q) = false; the TUI drew the paste this way", fx.File, s.Input, fx.Pasted)
		}
		if other := fx.Pasted + " MARKZZ"; r.Landed(s, other) {
			t.Errorf("%s: Landed(input %q, pasted %q) = true", fx.File, s.Input, other)
		}
	}
}

// FuzzLanded fuzzes r.Landed with the TUI's own drawing of a paste: draw
// is a model of the real TUI's transformations (read off its captures,
// written apart from the adapter), width the box's text width at which it
// wraps. Whatever a sender may paste (one line delivery.PasteText
// accepts), drawn by the TUI, counts as landed; with a marker the drawing
// lacks added, it does not. Seeded with RedrawnPastes and extra.
func FuzzLanded(f *testing.F, r harness.ScreenReader, draw func(string) string, extra ...string) {
	for _, p := range RedrawnPastes {
		f.Add(p, 40)
	}
	for _, p := range extra {
		f.Add(p, 80)
	}
	f.Fuzz(func(t *testing.T, pasted string, width int) {
		text, err := delivery.PasteText(pasted)
		if err != nil || text != pasted || strings.Contains(pasted, "\n") {
			return
		}
		width = 8 + abs(width)%200
		shown := strings.TrimSpace(wrap(draw(pasted), width))
		s := harness.Screen{State: harness.ScreenReady, Input: shown}
		if strings.TrimSpace(pasted) != "" && shown != "" && !r.Landed(s, pasted) {
			t.Fatalf("Landed(input %q, pasted %q) = false: the TUI draws the paste so", shown, pasted)
		}
		// A placeholder-like drawing counts for any paste; skip those.
		placeholder := r.Landed(s, "never pasted MARKYY")
		if other := pasted + " MARKZZ"; !placeholder && !strings.Contains(shown, "MARKZZ") && r.Landed(s, other) {
			t.Fatalf("Landed(input %q, pasted %q) = true: the marker is not shown", shown, other)
		}
	})
}

// wrap breaks s into rows of width runes, as a box does: a combining
// mark, a joiner or a modifier stays in its base character's cell.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if unicode.In(c, unicode.M, unicode.Sk) || c == 0x200d || harness.IsSkinTone(c) {
			b.WriteRune(c)
			continue
		}
		if n == width {
			b.WriteByte('\n')
			n = 0
		}
		b.WriteRune(c)
		n++
	}
	return b.String()
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
