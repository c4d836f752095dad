package opencode

import (
	"regexp"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The strings opencode's TUI draws, kept as data (fixtures live under
// testdata/screens/opencode).
var (
	// boxBorder starts every line of the input box (and of sent-message
	// blocks in the transcript).
	boxBorder = "┃"
	// modeSeparator parts mode and model on the box's last line,
	// "┃  Build · <model>".
	modeSeparator = " · "
	// placeholderPrefix begins the empty box's dimmed hint.
	placeholderPrefix = "Ask anything"
	// busyMarkers show while a turn runs.
	busyMarkers = []string{"esc interrupt", "esc to interrupt"}
	// pastedPlaceholder is how opencode shows a long paste; compiled on
	// first use, not at every leo command's start-up.
	pastedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[Pasted ~?\d+ lines?\]`)
	})
)

// tail is how many trailing lines of a capture are examined; busyWindow is
// how many lines above the box may hold the busy line.
const (
	tail       = 40
	busyWindow = 8
)

// Screen classifies captures of opencode's TUI.
func (Opencode) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify: the input box is the last run of ┃ lines ending in the mode line
// ("Build · model"); its other lines are the input. A busy marker outside
// the box makes it busy. opencode shows no start-up dialog leo must answer.
// While a turn runs, the echo of the sent message may touch the box; with
// text typed into the box then, Input includes that echo (delivery only
// pastes into a ready screen, where the reply separates them).
func (screen) Classify(capture string) harness.Screen {
	lines := harness.CaptureTail(capture, tail)
	start, end, ok := findBox(lines)
	if !ok {
		return harness.Screen{State: harness.ScreenStarting}
	}
	start = inputStart(lines, start, end)
	input := boxText(lines[start:end])
	// The busy line sits just above or below the box (footer), never inside.
	if harness.ShowsMarker(lines[max(0, start-busyWindow):], busyMarkers, inBox) {
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// inputStart is where the input begins in the box lines [start, end). The
// box's lines run up to the previous ┃ block without a gap, so the echo of
// the message just sent can sit right on top of it; a visible placeholder
// marks where the (empty) input begins.
func inputStart(lines []string, start, end int) int {
	for i := end - 1; i >= start; i-- {
		if strings.HasPrefix(unboxed(lines[i]), placeholderPrefix) {
			return i
		}
	}
	return start
}

// boxText is the text of box lines, one line each, blank ones left out; a
// lone placeholder is an empty input.
func boxText(box []string) string {
	var parts []string
	for _, l := range box {
		if t := unboxed(l); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], placeholderPrefix) {
		return ""
	}
	return strings.Join(parts, "\n")
}

// unboxed is a box line's text without the border.
func unboxed(l string) string { return strings.TrimSpace(strings.TrimPrefix(l, boxBorder)) }

// inBox: a line of the input box or of a sent message's echo block.
func inBox(l string) bool { return strings.HasPrefix(l, boxBorder) }

// Landed reports whether pasted shows in the box (same words, as the box
// wraps), or as opencode's [Pasted ~N lines] placeholder.
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pastedPlaceholder())
}

// isModeLine reports whether l is the box's last line, "┃  Build · <model>":
// the regexp ^┃\s+\S+.* · written out (\s is RE2's [\t\n\f\r ]), so no
// leo command compiles it at start-up; screen_match_test.go pins the two
// together. After the border, a run of spaces, then a non-space and, on the
// same line, modeSeparator.
func isModeLine(l string) bool {
	rest, ok := strings.CutPrefix(l, boxBorder)
	if !ok {
		return false
	}
	body := strings.TrimLeft(rest, reSpace)
	if len(body) == len(rest) || body == "" {
		return false
	}
	line, _, _ := strings.Cut(body, "\n")
	return strings.Contains(line, modeSeparator)
}

// reSpace is what \s matches in Go's regexps.
const reSpace = "\t\n\f\r "

// findBox returns the input lines [start, end) of the last box; end is the
// index of its mode line.
func findBox(lines []string) (start, end int, ok bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		if !isModeLine(lines[i]) {
			continue
		}
		start = i
		for start > 0 && strings.HasPrefix(lines[start-1], boxBorder) {
			start--
		}
		return start, i, true
	}
	return 0, 0, false
}
