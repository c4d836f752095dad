package pi

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// What pi 0.73.1's TUI draws, as data; the captures it was read from are
// testdata/screens/pi/*_v0.73.1.txt (docs/harness-behaviour/pi.md):
//
//	<transcript>
//	 ⠋ Working...                    (while a turn runs: a spinner line)
//	────────────────────────────     (the editor's top rule, full width)
//	<input, one or more lines>
//	────────────────────────────     (its bottom rule)
//	<autocomplete, when a / command is typed>
//	/path/of/the/workspace           (the footer)
//	↑10 ↓3 0.0%/128k (auto)    model
//
// The rules carry "─── ↑ N more " or "─── ↓ N more " when the input
// scrolls. pi asks nothing at start-up (no trust dialog) and has no
// permission prompts: its tools run without asking.
var (
	// ruleLine is one of the editor's rules (compiled on first use, not
	// at every leo command's start).
	ruleLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^─{3,}( [↑↓] \d+ more ─*)?$`) })
	// spinnerFrames start the status line above the editor while pi works
	// ("⠋ Working...", "⠋ Retrying (1/3) in 2s...", "⠋ Compacting context...").
	spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
)

// Screen classifies captures of pi's TUI.
func (Pi) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify finds the editor (the last two rules of the capture), reads the
// input between them, and calls the screen busy when the last line drawn
// above the editor is a spinner line.
func (screen) Classify(capture string) harness.Screen {
	lines := splitRules(harness.CaptureTail(capture, 400))
	bottom, top := -1, -1
	for i := len(lines) - 1; i >= 0; i-- {
		if !ruleLine().MatchString(lines[i]) {
			continue
		}
		if bottom < 0 {
			bottom = i
			continue
		}
		top = i
		break
	}
	if top < 0 {
		return harness.Screen{State: harness.ScreenStarting}
	}
	var in []string
	for _, l := range lines[top+1 : bottom] {
		in = append(in, strings.TrimSpace(l))
	}
	input := strings.TrimSpace(strings.Join(in, "\n"))
	for i := top - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if r := []rune(l); strings.ContainsRune(spinnerFrames, r[0]) {
			return harness.Screen{State: harness.ScreenBusy, Input: input}
		}
		break
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// gluedRule is a rule drawn on the row of the text before it: pi counts
// some characters (an emoji with a skin-tone modifier) narrower than the
// terminal draws them, the row overflows, and a joined capture (-J) puts
// the rule that follows on the text's line
// (testdata/screens/pi/ready-pasted-skin-tone_*).
var gluedRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`─{20,}$`) })

// splitRules puts each glued rule back on a line of its own.
func splitRules(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if loc := gluedRule().FindStringIndex(l); loc != nil && loc[0] > 0 && !ruleLine().MatchString(l) {
			out = append(out, strings.TrimRight(l[:loc[0]], " "), l[loc[0]:])
			continue
		}
		out = append(out, l)
	}
	return out
}

// Landed reports whether pasted shows in the editor (the same visible
// characters, however it wrapped), or as the marker pi puts in place of a
// paste of more than 10 lines or 1,000 characters: "[paste #N +L lines]"
// or "[paste #N C chars]", C counted in UTF-16 units after pi dropped
// control characters and made line ends "\n" (pi-tui's editor).
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pasteMarker(pasted), Redraw)
}

// Redraw is how pi's editor draws a paste: as pasted (a tab as spaces,
// which the landed check ignores).
var Redraw = harness.Redraw{}

// pasteMarker is the pattern of the marker pi shows for pasted, one that
// never matches when pi shows the paste itself.
func pasteMarker(pasted string) *regexp.Regexp {
	text := strings.ReplaceAll(strings.ReplaceAll(pasted, "\r\n", "\n"), "\r", "\n")
	text = strings.ReplaceAll(text, "\t", "    ")
	text = strings.Map(func(r rune) rune {
		if r != '\n' && r < 32 {
			return -1
		}
		return r
	}, text)
	n := len(utf16.Encode([]rune(text)))
	lines := strings.Count(text, "\n") + 1
	switch {
	case lines > 10:
		return regexp.MustCompile(`\[paste #\d+ \+` + itoa(lines) + ` lines\]`)
	case n > 1000:
		return regexp.MustCompile(`\[paste #\d+ ` + itoa(n) + ` chars\]`)
	}
	return neverMatch()
}

var neverMatch = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^\x00-\x{10FFFF}]`) })

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
