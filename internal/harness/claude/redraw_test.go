package claude

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// The real captures of pastes the TUI draws differently from the text
// (issue 15 item 2: before, a skin-tone modifier or a decomposed accent
// never counted as landed, and the message failed after 5 s).
func TestLandedRedrawnCaptures(t *testing.T) {
	harnesstest.LandedRedrawn(t, Claude{}.Screen(), harnesstest.ScreensDir("claude"))
}

// The model of the TUI's drawing is the one the captures show.
func TestDrawModelMatchesCaptures(t *testing.T) {
	for _, fx := range harnesstest.RedrawnFixtures(t, harnesstest.ScreensDir("claude")) {
		got := Claude{}.Screen().Classify(fx.Capture).Input
		if want := claudeDraws(fx.Pasted); got != want {
			t.Errorf("%s: input %q, the model draws %q", fx.File, got, want)
		}
	}
}

func FuzzLanded(f *testing.F) {
	harnesstest.FuzzLanded(f, Claude{}.Screen(), claudeDraws, "e\u0301\u0301 👍🏿👍🏻 \u200b x", "\t\t lead", "🏽 alone", "[Pasted text #1]")
}

// claudeDraws is a model of what claude's box shows of a paste, read off
// its captures (2.1.197, 2.1.332): composed, skin-tone modifiers dropped, a
// tab as four spaces, leading spaces dropped.
func claudeDraws(s string) string {
	s = norm.NFC.String(strings.Map(func(c rune) rune {
		if c >= 0x1F3FB && c <= 0x1F3FF {
			return -1
		}
		return c
	}, s))
	return strings.TrimLeft(strings.ReplaceAll(s, "\t", "    "), " ")
}
