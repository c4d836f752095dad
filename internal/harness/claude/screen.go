package claude

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The strings claude's TUI draws, kept as data: when the TUI changes, only
// these and the fixtures under testdata/screens/claude change. They were
// read off captures of claude 2.1.197 (docs/harness-behaviour/claude.md).
var (
	// promptPrefix starts the input line, which sits between two rules.
	// The transcript echoes sent messages with the same prefix, but never
	// between two rules.
	promptPrefix = "❯"
	// ruleRune draws the rules above and below the input line.
	ruleRune = '─'
	// spinnerRunes start the status line above the box while a turn runs
	// ("✶ Whirring…"); the line keeps its glyph when the turn is over but
	// then says how long it took ("✻ Crunched for 6s", no ellipsis).
	spinnerRunes = "·✢✳✶✻✽*"
	// busyEllipsis ends the spinner's verb while a turn runs.
	busyEllipsis = "…"
	// spinnerBusy are texts of a spinner line that mean busy without an
	// ellipsis (an API error being retried).
	spinnerBusy = []string{"Retrying in"}
	// footerBusy shows under the box while a turn runs (not while the
	// user is typing into the box: then the footer is blank).
	footerBusy = []string{"esc to interrupt"}
	// dialogs are modals that block the input line, with the keys that
	// answer them the way leo wants (trust the workspace).
	dialogs = []harness.Dialog{
		{Name: "trust", Markers: []string{
			"Is this a project you created or one you trust",
			"Yes, I trust this folder",
			"Do you trust the files in this folder?",
		}, Keys: []string{"Enter"}},
	}
	// A permission prompt replaces the input box (testdata/screens/claude/
	// permission-bash_*): a rule, the tool's title (" Bash command"), what
	// it would run (2.1.332 frames it with dashed rules and adds a tip and
	// the description), the question, then numbered choices. Its keys are
	// a person's to press: the screen carries the prompt, never keys.
	permissionDialog   = "permission"
	permissionQuestion = "Do you want to "
	dashedRuleRune     = '╌'
	tipPrefix          = "Tip:"
	// answeredMark follows the chosen option of a dialog once it has been
	// answered: claude keeps drawing the dialog for a few seconds while it
	// acts on the answer. Answering again would press Enter on the home
	// screen that follows, so such a screen is "starting".
	answeredMark = "✔"
	// placeholders are hints claude draws dimmed in an empty box; a plain
	// capture cannot tell dim from typed, so they are matched literally, as
	// the whole input. 2.1.332 puts the first into the box after a turn the
	// API rejected (HTTP 429: "API Error: Request rejected (429) · …");
	// 2.1.197 leaves the box empty there.
	placeholders = []string{
		"Resend your message to try again",
	}
	// pastedPlaceholder is how claude shows a long paste (or several);
	// compiled on first use, not at every leo command's start-up.
	pastedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[Pasted text #\d+(?: \+\d+ lines?)?\]`)
	})
)

// Screen classifies captures of claude's TUI.
func (Claude) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify reads a plain capture (no SGR), the whole of it: the input box
// sits right under the transcript, so in a tall pane it can be anywhere,
// with dozens of blank rows below it.
//
// A dialog wins over everything; then the input box (a ❯ line between two
// rules) is looked for; a spinner line above it, or "esc to interrupt"
// under it, makes it busy, otherwise ready. No box: starting.
func (screen) Classify(capture string) harness.Screen {
	lines := unglue(harness.CaptureTail(capture, maxLines))
	top, bottom, input, boxed := findInputBox(lines)
	// A modal replaces the input box, so only text below the last box (or
	// anywhere, when there is none) can be a live dialog; an answered one
	// left in scrollback above the box is history.
	from := 0
	if boxed {
		from = bottom + 1
	}
	if d, ok := harness.FindDialog(dialogs, notTranscript(lines[from:])); ok {
		if answered(lines[from:]) {
			return harness.Screen{State: harness.ScreenStarting, Dialog: d.Name}
		}
		return d.Screen()
	}
	if p, ok := findPermission(lines[from:]); ok {
		return harness.Screen{State: harness.ScreenDialog, Dialog: permissionDialog, Prompt: p}
	}
	// The question tool's prompt is the last thing drawn, wherever a box
	// seems to be (its options sit between rules).
	if p, ok := findQuestion(lines); ok {
		return harness.Screen{State: harness.ScreenDialog, Dialog: questionDialog, Prompt: p}
	}
	if !boxed {
		return harness.Screen{State: harness.ScreenStarting}
	}
	if slices.Contains(placeholders, input) {
		input = "" // a hint is never a draft
	}
	if spinning(lines[max(0, top-busyWindow):top]) || harness.ShowsMarker(lines[bottom+1:], footerBusy, nil) {
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// maxLines bounds the lines looked at: far more than any pane is tall, so
// the box is found wherever it is, while a hostile capture stays cheap.
const maxLines = 2000

// busyWindow is how many lines above the input box may hold the spinner
// (a tip line "⎿  Tip: …" or a short todo list can sit between them).
const busyWindow = 8

// spinning reports whether one of lines is claude's status line for a
// running turn: a spinner glyph in column 0 (transcript text never starts
// there: messages start with "❯ ", replies with "● ", both indent their
// continuation lines), a space, and a verb ending in "…" or a retry note.
func spinning(lines []string) bool {
	for _, l := range lines {
		r, size := utf8.DecodeRuneInString(l)
		if r == utf8.RuneError || !strings.ContainsRune(spinnerRunes, r) || !strings.HasPrefix(l[size:], " ") {
			continue
		}
		if strings.Contains(l, busyEllipsis) || harness.ShowsMarker([]string{l}, spinnerBusy, nil) {
			return true
		}
	}
	return false
}

// notTranscript is lines without those that can hold the transcript's
// text: a sent message ("❯ text") or a reply ("● text") in column 0, and
// any line indented by two or more (their continuation lines, tool
// output). A modal that replaces the box leaves the transcript above it,
// where a message may quote a dialog's words; claude draws its dialogs'
// text one column in (" Quick safety check: …").
func notTranscript(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.HasPrefix(l, "  ") || strings.HasPrefix(l, promptPrefix+" ") || strings.HasPrefix(l, promptPrefix+"\u00a0") || strings.HasPrefix(l, "● ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// answered reports whether a dialog's selected option carries the mark
// claude draws once the answer is being acted on.
func answered(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, promptPrefix) && strings.HasSuffix(t, answeredMark) {
			return true
		}
	}
	return false
}

// Landed reports whether pasted shows in the input (the same visible
// characters, however the box wrapped), or claude's [Pasted text #N]
// placeholder for a long paste.
// A 3-line paste shows in full; 4,000 characters show as "[Pasted text #1]".
// The paste is compared as claude draws it (Redraw).
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pastedPlaceholder(), Redraw)
}

// Redraw is how claude's box draws a paste (2.1.197 and 2.1.332 alike,
// testdata/screens/claude/ready-pasted-*): decomposed accents composed
// ("cafe\u0301" as "café"), skin-tone modifiers dropped ("👍🏽" as "👍"),
// a tab as four spaces, leading spaces dropped.
var Redraw = harness.Redraw{Compose: true, DropModifiers: true}

// findInputBox finds claude's input box: a ❯ line right under a rule, the
// text's continuation lines, and a rule below them that has the top rule's
// indentation and width. It returns the indexes of the two rules and the
// input text, continuation lines joined by "\n".
//
// The text in the box can hold rules and ❯ lines of its own (a pasted
// table, tool output): claude draws its rules across the whole pane from
// column 0, while the text's continuation lines are indented by two
// columns after the "❯ " prompt, so a rule of the text never has the box's
// indentation, and a box made of the text's lines is indented further than
// the real one. Of the boxes found, the least indented wins, then the
// lowest.
func findInputBox(lines []string) (top, bottom int, input string, ok bool) {
	rules := make([]ruleShape, len(lines))
	for i, l := range lines {
		rules[i] = shapeOf(l)
	}
	best := -1
	for i := len(lines) - 1; i > 0; i-- {
		r := rules[i-1]
		if !r.ok {
			continue
		}
		l := lines[i]
		rest := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(rest, promptPrefix) || len(l)-len(rest) != r.indent {
			continue
		}
		if best >= 0 && r.indent >= rules[top].indent {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if rules[j] == r {
				top, bottom, best = i-1, j, i
				break
			}
		}
		if best >= 0 && rules[top].indent == 0 {
			break
		}
	}
	if best < 0 {
		return 0, 0, "", false
	}
	parts := []string{strings.TrimSpace(strings.TrimPrefix(strings.TrimLeft(lines[best], " "), promptPrefix))}
	for _, l := range lines[best+1 : bottom] {
		parts = append(parts, strings.TrimSpace(l))
	}
	return top, bottom, strings.TrimSpace(strings.Join(parts, "\n")), true
}

// ruleShape is where a rule line starts and how wide it is; ok is false for
// a line that is not a rule.
type ruleShape struct {
	ok            bool
	indent, width int
}

func shapeOf(l string) ruleShape {
	if !isRule(l) {
		return ruleShape{}
	}
	t := strings.TrimLeft(l, " ")
	return ruleShape{ok: true, indent: len(l) - len(t), width: utf8.RuneCountInString(strings.TrimRight(t, " "))}
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
		body := strings.TrimRight(l, " \u00a0")
		if n := ruleRunBefore(body); n >= minGluedRule {
			cut := len(body) - n*len(string(ruleRune))
			if cut > 0 && strings.TrimRight(body[:cut], " \u00a0") != body[:cut] {
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
