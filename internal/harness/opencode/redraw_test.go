package opencode

import (
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// The real captures of pastes the TUI draws differently from the text
// (issue 15 item 2: before, a skin-tone modifier or a decomposed accent
// never counted as landed, and the message failed after 5 s).
func TestLandedRedrawnCaptures(t *testing.T) {
	harnesstest.LandedRedrawn(t, Opencode{}.Screen(), harnesstest.ScreensDir("opencode"))
}

// The model of the TUI's drawing is the one the captures show.
func TestDrawModelMatchesCaptures(t *testing.T) {
	for _, fx := range harnesstest.RedrawnFixtures(t, harnesstest.ScreensDir("opencode")) {
		got := Opencode{}.Screen().Classify(fx.Capture).Input
		if want := opencodeDraws(fx.Pasted); got != want {
			t.Errorf("%s: input %q, the model draws %q", fx.File, got, want)
		}
	}
}

func FuzzLanded(f *testing.F) {
	harnesstest.FuzzLanded(f, Opencode{}.Screen(), opencodeDraws, "e\u0301\u0301 👍🏿👍🏻 \u200b x", "\t\t lead", "🏽 alone", "[Pasted text #1]")
}

// opencodeDraws is a model of what opencode's box shows of a paste, read
// off its captures (1.18.33): as pasted, a tab as two spaces, leading
// spaces dropped.
func opencodeDraws(s string) string {
	return strings.TrimLeft(strings.ReplaceAll(s, "\t", "  "), " ")
}
