package opencode

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/patterncheck"
)

const modeLinePattern = `^┃\s+\S+.* · `

// isModeLine agrees with its pattern on every string of up to 5 pieces:
// the border, each kind of space (\v is not one in RE2), the separator
// whole and in parts, and characters of other classes.
func TestModeLineMatchesItsPattern(t *testing.T) {
	patterncheck.Agrees(t, modeLinePattern, isModeLine,
		[]string{"┃", " ", "\t", "\n", "\v", "·", " · ", "x", "é", "\xff"}, 5)
}

func FuzzModeLine(f *testing.F) {
	patterncheck.Fuzz(f, modeLinePattern, isModeLine, "┃  Build · gpt-5", "┃  Ask anything…", "┃ x\n · ", "┃\n x · ")
}
