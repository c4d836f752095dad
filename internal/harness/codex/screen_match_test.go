package codex

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/patterncheck"
)

const menuChoicePattern = `^›\s*\d+\.\s`

// isMenuChoice agrees with its pattern on every string of up to 5 pieces:
// the marker, each kind of space (\v is not one in RE2), digits, the dot,
// and characters of other classes.
func TestMenuChoiceMatchesItsPattern(t *testing.T) {
	patterncheck.Agrees(t, menuChoicePattern, isMenuChoice,
		[]string{"›", " ", "\t", "\n", "\v", "0", "7", ".", "x", "é", "\xff", ">"}, 5)
}

func FuzzMenuChoice(f *testing.F) {
	patterncheck.Fuzz(f, menuChoicePattern, isMenuChoice, "› 1. Yes, continue", "  2. No, quit", "›12.\t", "› 1.", "›1 .x")
}
