package claude

import (
	"regexp"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The strings claude's TUI draws, kept as data: when the TUI changes, only
// these and the fixtures under testdata/screens/claude change.
var (
	// promptPrefix starts the input line, which sits between two rules.
	promptPrefix = "❯"
	// ruleRune draws the rules above and below the input line.
	ruleRune = '─'
	// busyMarkers show while a turn runs.
	busyMarkers = []string{"esc to interrupt"}
	// dialogs are modals that block the input line, with the keys that
	// answer them the way leo wants (trust the workspace).
	dialogs = []harness.Dialog{
		{Name: "trust", Markers: []string{
			"Do you trust the files in this folder?",
			"Is this a project you created or one you trust",
			"Yes, I trust this folder",
		}, Keys: []string{"Enter"}},
	}
	// pastedPlaceholder is how claude shows a long or multi-line paste;
	// compiled on first use, not at every leo command's start-up.
	pastedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[Pasted text #\d+(?: \+\d+ lines?)?\]`)
	})
)

// tail is how many trailing lines of a capture are examined: the input box,
// the busy line and any modal all live at the bottom of the pane.
const tail = 40

// Screen classifies captures of claude's TUI.
func (Claude) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify reads a plain capture (no SGR). A dialog wins over everything;
// then the input box (a ❯ line between rules) is looked for; a busy marker
// in the few lines above it makes it busy, otherwise ready. No box: starting.
func (screen) Classify(capture string) harness.Screen {
	lines := unglue(harness.CaptureTail(capture, tail))
	top, input, boxed := findInputBox(lines)
	// A modal replaces the input box, so only text below the last box (or
	// anywhere, when there is none) can be a live dialog; an answered one
	// left in scrollback above the box is history.
	from := 0
	if boxed {
		from = top + 1
	}
	if d, ok := harness.FindDialog(dialogs, lines[from:]); ok {
		return d.Screen()
	}
	if !boxed {
		return harness.Screen{State: harness.ScreenStarting}
	}
	// The spinner line sits just above the box; older transcript text
	// further up is not looked at, nor are the message and reply lines of
	// the transcript in between.
	if harness.ShowsMarker(lines[max(0, top-busyWindow):top], busyMarkers, isTranscript) {
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// busyWindow is how many lines above the input box may hold the spinner
// (it can be separated from the box by a short todo list).
const busyWindow = 8

// isTranscript: a sent message ("> …") or a reply ("● …"), which may quote
// a busy marker.
func isTranscript(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, ">") || strings.HasPrefix(t, "●")
}

// Landed reports whether pasted shows in the input: the same words (the box
// wraps lines), or claude's [Pasted text #N +M lines] placeholder for a
// multi-line paste.
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pastedPlaceholder())
}

// findInputBox finds the last ❯ line with a rule right above it and a rule
// below it (after any wrapped continuation lines). It returns the index of
// the upper rule and the input text, continuation lines joined by "\n".
func findInputBox(lines []string) (top int, input string, ok bool) {
	for i := len(lines) - 1; i > 0; i-- {
		l := lines[i]
		if !strings.HasPrefix(l, promptPrefix) || !isRule(lines[i-1]) {
			continue
		}
		parts := []string{strings.TrimSpace(strings.TrimPrefix(l, promptPrefix))}
		for j := i + 1; j < len(lines); j++ {
			if isRule(lines[j]) {
				return i - 1, strings.TrimSpace(strings.Join(parts, "\n")), true
			}
			parts = append(parts, strings.TrimSpace(lines[j]))
		}
	}
	return 0, "", false
}

// isRule: a line drawn with ─, possibly carrying a label ("──── name ──").
func isRule(l string) bool {
	l = strings.TrimSpace(l)
	n := 0
	for _, r := range l {
		if r == ruleRune {
			n++
		}
	}
	return n >= 3 && strings.HasPrefix(l, string(ruleRune))
}

// minGluedRule is the shortest run of rule runes taken for a whole rule
// when it shares a line with other text.
const minGluedRule = 8

// unglue undoes what capture-pane -J does to the input box after a window
// shrinks: tmux 3.3a can leave the box's rows marked as wrapped, so the rule
// above the prompt, the prompt line and the rule below come back as one
// line ("────❯ text      ────"), and the lower rule may join the footer.
// Such lines are split back into rule, prompt and rest.
func unglue(lines []string) []string {
	out := make([]string, 0, len(lines)+4)
	for _, l := range lines {
		out = append(out, splitGlued(l)...)
	}
	return out
}

func splitGlued(l string) []string {
	// A rule run right before the prompt: "────❯ …".
	if i := strings.Index(l, promptPrefix); i > 0 && ruleRunBefore(l[:i]) >= minGluedRule {
		return append([]string{l[:i]}, splitGlued(l[i:])...)
	}
	// A prompt line ending in a rule run: "❯ text      ────".
	if strings.HasPrefix(l, promptPrefix) {
		body := strings.TrimRight(l, " ")
		if n := ruleRunBefore(body); n >= minGluedRule {
			cut := len(body) - n*len(string(ruleRune))
			if cut > 0 && strings.HasSuffix(body[:cut], " ") {
				return []string{body[:cut], body[cut:]}
			}
		}
		return []string{l}
	}
	// A rule run followed by text that is not a rule label: "────  ? for shortcuts".
	if n := ruleRunAfter(l); n >= minGluedRule {
		cut := n * len(string(ruleRune))
		rest := strings.TrimRight(l[cut:], " ")
		if strings.HasPrefix(rest, " ") && strings.TrimSpace(rest) != "" && !strings.HasSuffix(rest, string(ruleRune)) {
			return []string{l[:cut], l[cut:]}
		}
	}
	return []string{l}
}

// ruleRunBefore counts the rule runes that end s.
func ruleRunBefore(s string) int {
	n := 0
	for strings.HasSuffix(s, string(ruleRune)) {
		s = strings.TrimSuffix(s, string(ruleRune))
		n++
	}
	return n
}

// ruleRunAfter counts the rule runes that start s.
func ruleRunAfter(s string) int {
	n := 0
	for strings.HasPrefix(s, string(ruleRune)) {
		s = strings.TrimPrefix(s, string(ruleRune))
		n++
	}
	return n
}
