package codex

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The strings codex's TUI draws, kept as data (fixtures live under
// testdata/screens/codex).
var (
	// composerPrefix starts the composer line (and, in history, a sent message).
	composerPrefix = "›"
	// placeholders are drawn dimmed in an empty composer; a plain capture
	// can't tell dim from typed, so they are matched literally.
	placeholders = []string{
		"Ask Codex to do anything",
		"Explain this codebase",
		"Summarize recent commits",
		"Implement {feature}",
		"Find and fix a bug in @filename",
		"Write tests for @filename",
		"Improve documentation in @filename",
		"Run /review on my current changes",
		"Use /skills to list available skills",
	}
	// footerMarkers identify the hint lines under the composer.
	footerMarkers = []string{"⏎ send", "⌃J newline", "for shortcuts", "context left", "tab to queue message"}
	// busyMarkers show while a turn runs.
	busyMarkers = []string{"esc to interrupt"}
	// dialogs block the composer; Keys answer them (trust the workspace).
	dialogs = []harness.Dialog{
		{Name: "trust", Markers: []string{
			"Do you trust the contents of this directory?",
			"allow Codex to work in this folder",
		}, Keys: []string{"Enter"}},
	}
	// pastedPlaceholder is how codex shows a large paste; compiled on first
	// use, not at every leo command's start-up.
	pastedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[Pasted Content \d+ chars\]`)
	})
)

// tail is how many trailing lines of a capture are examined; busyWindow is
// how many lines above the composer may hold the busy line.
const (
	tail       = 40
	busyWindow = 8
)

// Screen classifies captures of codex's TUI.
func (Codex) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify: the composer is the last › line with nothing but its own
// continuation lines, blanks and footer hints below it (sent messages in the
// history also start with ›, but replies follow them). A dialog below the
// composer (or anywhere, without one) wins; a busy marker just above it
// makes the screen busy.
func (screen) Classify(capture string) harness.Screen {
	lines := harness.CaptureTail(capture, tail)
	at, input, ok := findComposer(lines)
	from := 0
	if ok {
		from = at
	}
	if d, found := harness.FindDialog(dialogs, lines[from:]); found {
		return d.Screen()
	}
	if !ok {
		return harness.Screen{State: harness.ScreenStarting}
	}
	if harness.ShowsMarker(lines[max(0, at-busyWindow):at], busyMarkers, isSentMessage) {
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// isSentMessage: a message in the history ("› …"), which may quote a busy
// marker.
func isSentMessage(l string) bool {
	return strings.HasPrefix(strings.TrimSpace(l), composerPrefix)
}

// Landed reports whether pasted shows in the composer (same words, as the
// composer wraps), or as codex's [Pasted Content N chars] placeholder.
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pastedPlaceholder())
}

// findComposer returns the index of the composer line and its input, any
// continuation lines joined by "\n" ("" for a placeholder). There is none
// when the last › line is followed by other text (it was a sent message) or
// is a dialog's selected option.
func findComposer(lines []string) (at int, input string, ok bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !strings.HasPrefix(l, composerPrefix) {
			if isComposerTail(l) {
				continue
			}
			return 0, "", false
		}
		if isMenuChoice(l) {
			return 0, "", false
		}
		parts := []string{strings.TrimSpace(strings.TrimPrefix(l, composerPrefix))}
		for _, c := range lines[i+1:] {
			if strings.TrimSpace(c) == "" || isFooter(c) {
				break
			}
			parts = append(parts, strings.TrimSpace(c))
		}
		text := strings.TrimSpace(strings.Join(parts, "\n"))
		if slices.Contains(placeholders, text) {
			text = ""
		}
		return i, text, true
	}
	return 0, "", false
}

// isComposerTail: what may follow the composer line — blanks, footer hints,
// and the indented continuation lines of a multi-line input.
func isComposerTail(l string) bool {
	return strings.TrimSpace(l) == "" || isFooter(l) || strings.HasPrefix(l, "  ")
}

func isFooter(l string) bool {
	for _, m := range footerMarkers {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

// isMenuChoice: "› 1. Yes, continue" is a dialog's selected option. It is
// the regexp ^›\s*\d+\.\s written out (\s is RE2's [\t\n\f\r ]), so no
// leo command compiles it at start-up; screen_match_test.go pins the two
// together.
func isMenuChoice(l string) bool {
	rest, ok := strings.CutPrefix(l, "›")
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, reSpace)
	n := 0
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(rest) && rest[n] == '.' && strings.IndexByte(reSpace, rest[n+1]) >= 0
}

// reSpace is what \s matches in Go's regexps.
const reSpace = "\t\n\f\r "
