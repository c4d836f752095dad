package codex

import (
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// The real captures of pastes the TUI draws differently from the text
// (issue 15 item 2: before, a skin-tone modifier or a decomposed accent
// never counted as landed, and the message failed after 5 s).
func TestLandedRedrawnCaptures(t *testing.T) {
	harnesstest.LandedRedrawn(t, Codex{}.Screen(), harnesstest.ScreensDir("codex"))
}

// The model of the TUI's drawing is the one the captures show.
func TestDrawModelMatchesCaptures(t *testing.T) {
	for _, fx := range harnesstest.RedrawnFixtures(t, harnesstest.ScreensDir("codex")) {
		got := Codex{}.Screen().Classify(fx.Capture).Input
		if want := codexDraws(fx.Pasted); got != want {
			t.Errorf("%s: input %q, the model draws %q", fx.File, got, want)
		}
	}
}

func FuzzLanded(f *testing.F) {
	harnesstest.FuzzLanded(f, Codex{}.Screen(), codexDraws, "e\u0301\u0301 👍🏿👍🏻 \u200b x", "\t\t lead", "🏽 alone", "[Pasted text #1]")
}

// codexDraws is a model of what codex's composer shows of a paste, read
// off its captures (0.171.0): skin-tone modifiers dropped, accents as
// pasted, a tab as one space, leading spaces dropped.
func codexDraws(s string) string {
	s = strings.Map(func(c rune) rune {
		if c >= 0x1F3FB && c <= 0x1F3FF {
			return -1
		}
		return c
	}, s)
	return strings.TrimLeft(strings.ReplaceAll(s, "\t", " "), " ")
}
