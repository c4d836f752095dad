package opencode

import (
	"regexp"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The strings opencode's TUI draws, kept as data (fixtures live under
// testdata/screens/opencode).
var (
	// boxBorder starts every line of the input box (and of sent-message
	// blocks in the transcript).
	boxBorder = "┃"
	// modeLine is the box's last line: "┃  Build · <model>".
	modeLine = regexp.MustCompile(`^┃\s+\S+.* · `)
	// placeholderPrefix begins the empty box's dimmed hint.
	placeholderPrefix = "Ask anything"
	// busyMarkers show while a turn runs.
	busyMarkers = []string{"esc interrupt", "esc to interrupt"}
	// pastedPlaceholder is how opencode shows a long paste.
	pastedPlaceholder = regexp.MustCompile(`\[Pasted ~?\d+ lines?\]`)
)

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
	lines := lastLines(capture, tail)
	start, end, ok := findBox(lines)
	if !ok {
		return harness.Screen{State: harness.ScreenStarting}
	}
	// The box's lines run up to the previous ┃ block without a gap, so the
	// echo of the message just sent can sit right on top of it. A visible
	// placeholder marks where the (empty) input begins.
	for i := end - 1; i >= start; i-- {
		if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(lines[i], boxBorder)), placeholderPrefix) {
			start = i
			break
		}
	}
	var parts []string
	for _, l := range lines[start:end] {
		t := strings.TrimSpace(strings.TrimPrefix(l, boxBorder))
		if t != "" {
			parts = append(parts, t)
		}
	}
	input := strings.Join(parts, "\n")
	if len(parts) == 1 && strings.HasPrefix(input, placeholderPrefix) {
		input = ""
	}
	// The busy line sits just above or below the box (footer), never inside.
	for _, l := range lines[max(0, start-busyWindow):] {
		if strings.HasPrefix(l, boxBorder) {
			continue
		}
		for _, m := range busyMarkers {
			if strings.Contains(l, m) {
				return harness.Screen{State: harness.ScreenBusy, Input: input}
			}
		}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// Landed reports whether pasted shows in the box (same words, as the box
// wraps), or as opencode's [Pasted ~N lines] placeholder.
func (screen) Landed(s harness.Screen, pasted string) bool {
	want := collapse(pasted)
	if want == "" {
		return false
	}
	if strings.Contains(collapse(s.Input), want) {
		return true
	}
	return pastedPlaceholder.MatchString(s.Input)
}

// findBox returns the input lines [start, end) of the last box; end is the
// index of its mode line.
func findBox(lines []string) (start, end int, ok bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		if !modeLine.MatchString(lines[i]) {
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

func lastLines(capture string, n int) []string {
	lines := strings.Split(strings.ReplaceAll(capture, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\u00a0")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
