package tmux

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/patterncheck"
)

// nameChecks are the hand-written checks and the patterns they replace.
var nameChecks = []struct {
	pattern string
	check   func(string) bool
}{
	{`^%[0-9]+$`, isPaneID},
	{`^[A-Za-z_][A-Za-z0-9_]*$`, isEnvKey},
	{`^[^:.\x00-\x1f\x7f]+$`, isSessionName},
}

// The hand-written name checks agree with their patterns on every string
// of up to 4 characters drawn from each class's edges: digits, letters,
// '_', '%', ':', '.', control bytes, DEL, a space, a multi-byte rune and an
// invalid UTF-8 byte.
func TestNameChecksMatchTheirPatterns(t *testing.T) {
	alphabet := []string{"%", "0", "9", "a", "Z", "_", ":", ".", "-", " ", "\x00", "\x1f", "\x7f", "\n", "é", "\xff", "/", "`"}
	for _, c := range nameChecks {
		patterncheck.Agrees(t, c.pattern, c.check, alphabet, 4)
	}
}

func FuzzPaneIDCheck(f *testing.F) {
	patterncheck.Fuzz(f, nameChecks[0].pattern, isPaneID, "%12", "%", "%1a", "%%1")
}

func FuzzEnvKeyCheck(f *testing.F) {
	patterncheck.Fuzz(f, nameChecks[1].pattern, isEnvKey, "PATH", "_x9", "9x", "a-b")
}

func FuzzSessionNameCheck(f *testing.F) {
	patterncheck.Fuzz(f, nameChecks[2].pattern, isSessionName, "leo-bob", "a.b", "a:b", "a\x7f", "é")
}
