package opencode

import (
	"strings"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// A prompt for a person takes the input box's place (opencode 1.18.33,
// testdata/screens/opencode/dialog-*, docs/harness-behaviour/opencode.md):
// a ┃ block in the box's column with no bottom edge under it. A permission
// prompt:
//
//	<indent>┃
//	<indent>┃  △ Permission required           (the stage's title)
//	<indent>┃    # Shell command                (an icon and the request's title)
//	<indent>┃
//	<indent>┃  $ touch x                        (its body)
//	<indent>┃
//	<indent>┃   Allow once   Allow always   Reject  ctrl+f fullscreen  ⇆ select  enter confirm
//	<indent>┃
//
// "Allow always" asks again before it answers: the title "Always allow",
// the patterns it would allow, and Confirm / Cancel. A question (the
// question tool):
//
//	<indent>┃  Which file should I create?
//	<indent>┃
//	<indent>┃  1. alpha.txt
//	<indent>┃     The first file                 (an option's description)
//	<indent>┃  2. beta.txt
//	<indent>┃  3. Type your own answer
//	<indent>┃
//	<indent>┃  ↑↓ select  enter submit  esc dismiss
//
// On wide panes the sidebar goes on to the right of the block, on the same
// rows, after a wide run of blanks: a dialog's text is left-aligned, so
// such a run ends a row's text.
var (
	promptMark = "△ "
	// promptTitles are the permission stages' titles leo reads a prompt under.
	promptTitles = []string{"Permission required", "Always allow"}
	// promptChoices are the answers the permission stages offer, as drawn.
	promptChoices = []string{"Allow once", "Allow always", "Reject", "Confirm", "Cancel"}
	// questionHints are the key hints that close a question's block.
	questionHints = []string{"↑↓ select", "enter submit"}
)

// sidebarGap is the run of blanks that ends a dialog row's text.
const sidebarGap = "          "

// findPrompt reads the lowest prompt of the capture: its row (the title's
// or the hints'), and what it asks.
func findPrompt(lines [][]rune) (*harness.Prompt, int, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		col := leadingSpaces(lines[i])
		if !borderAt(lines[i], col) {
			continue
		}
		t := dialogText(lines[i], col)
		if isPromptTitle(t) {
			if p, ok := permissionPrompt(lines, i, col); ok {
				return p, i, true
			}
		}
		if strings.HasPrefix(t, questionHints[0]) && strings.Contains(t, questionHints[1]) {
			if p, ok := questionPrompt(lines, i, col); ok {
				return p, i, true
			}
		}
	}
	return nil, 0, false
}

// dialogText is a dialog row's text after the border at col, up to a wide
// run of blanks (the sidebar), trimmed: "" for a row whose text starts
// beyond such a run.
func dialogText(l []rune, col int) string {
	if col+1 >= len(l) {
		return ""
	}
	s := string(l[col+1:])
	text := strings.TrimLeft(s, " ")
	if len(s)-len(text) >= len(sidebarGap) {
		return ""
	}
	if k := strings.Index(text, sidebarGap); k >= 0 {
		text = text[:k]
	}
	return strings.TrimSpace(text)
}

// indentOf is how far a dialog row's text is from its border.
func indentOf(l []rune, col int) int { return leadingSpaces(l[col+1:]) }

// permissionPrompt reads the permission prompt titled at row i: the rows
// down to its choices, the request's icon dropped.
func permissionPrompt(lines [][]rune, i, col int) (*harness.Prompt, bool) {
	end := i + 1
	for end < len(lines) && borderAt(lines[end], col) {
		end++
	}
	for j := end - 1; j > i; j-- {
		choices := choicesOf(lines[j], col)
		if len(choices) == 0 {
			continue
		}
		var text []string
		for _, l := range lines[i+1 : j] {
			if t := dialogText(l, col); t != "" {
				text = append(text, t)
			}
		}
		if len(text) == 0 {
			return nil, false
		}
		text[0] = stripIcon(text[0])
		return &harness.Prompt{Kind: "permission", Text: strings.Join(text, "\n"), Choices: choices}, true
	}
	return nil, false
}

// questionPrompt reads the question whose hints are at row i: its block's
// rows up to the first numbered option are the question, the numbered rows
// (at the question's indent; an option's description is further in) its
// choices.
func questionPrompt(lines [][]rune, i, col int) (*harness.Prompt, bool) {
	top := i
	for top > 0 && borderAt(lines[top-1], col) {
		top--
	}
	var text, choices []string
	indent := -1
	for _, l := range lines[top:i] {
		t := dialogText(l, col)
		if t == "" {
			continue
		}
		if label, ok := optionLabel(t); ok && len(text) > 0 && indentOf(l, col) == indent {
			choices = append(choices, label)
			continue
		}
		if len(choices) > 0 {
			continue // an option's description
		}
		if indent < 0 {
			indent = indentOf(l, col)
		}
		text = append(text, t)
	}
	if len(text) == 0 || len(choices) == 0 {
		return nil, false
	}
	return &harness.Prompt{Kind: "question", Text: strings.Join(text, "\n"), Choices: choices}, true
}

// optionLabel reads "<n>. <label>".
func optionLabel(t string) (string, bool) {
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 || !strings.HasPrefix(t[n:], ". ") {
		return "", false
	}
	label := strings.TrimSpace(t[n+2:])
	return label, label != ""
}

func isPromptTitle(t string) bool {
	title, ok := strings.CutPrefix(t, promptMark)
	if !ok {
		return false
	}
	for _, s := range promptTitles {
		if title == s {
			return true
		}
	}
	return false
}

// choicesOf is the known answers on a row, in its order: its words split
// at runs of two or more blanks (the key hints come after them).
func choicesOf(l []rune, col int) []string {
	var out []string
	for _, w := range strings.Split(string(l[col+1:]), "  ") {
		w = strings.TrimSpace(w)
		for _, c := range promptChoices {
			if w == c {
				out = append(out, c)
			}
		}
	}
	return out
}

// stripIcon drops the request title's icon ("# Shell command"): one rune
// that is no letter or digit, then a space.
func stripIcon(s string) string {
	r := []rune(s)
	if len(r) > 2 && !unicode.IsLetter(r[0]) && !unicode.IsDigit(r[0]) && r[1] == ' ' {
		return strings.TrimSpace(string(r[2:]))
	}
	return s
}
