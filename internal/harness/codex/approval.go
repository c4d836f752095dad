package codex

import (
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// codex's approval prompt (0.171.0, testdata/screens/codex/approval-exec_*;
// docs/harness-behaviour/codex.md, "The approval prompt"), drawn in place
// of the composer at the bottom of the pane when a command asks to run
// outside the sandbox and the approval policy lets codex ask:
//
//	› make a file LEO-appr-001                         the message (history)
//
//	• Running touch approved-x                        the busy line, no "esc to interrupt"
//
//	  Would you like to run the following command?   the question
//
//	  Environment: local
//
//	  Reason: Do you want to create the file approved-x?
//
//	  $ touch approved-x                               the command (wrapped: continued, indented two)
//
//	› 1. Yes, proceed (y)                              the choices, the selected one marked
//	  2. Yes, and don't ask again for commands that start with `touch approved-x`
//	     (p)                                           (wrapped: continued, indented five)
//	  3. No, and tell Codex what to do differently (esc)
//
//	  Press enter to confirm or esc to cancel          the footer
var (
	approvalFooter = "Press enter to confirm or esc to cancel"
	// approvalCommand starts the command's first line.
	approvalCommand = "$ "
	// approvalEnvironment starts a line that says where the command runs
	// ("Environment: local"): left out of the prompt's text.
	approvalEnvironment = "Environment:"
)

// maxPromptLines bounds the lines of a prompt's text (a long command, or
// what else the prompt quotes, can fill the pane).
const maxPromptLines = 12

// findApproval reads codex's approval prompt off a capture's lines (no
// composer on screen: the prompt replaces it). The footer must be the last
// line, with the numbered choices right above it, the first one offered
// being "Yes…": text above in the history that quotes the same words is
// not a prompt. Its text is the command first (its wrapped rows joined
// again), then codex's other words (the question, the reason); the choices
// are as worded, a wrapped one joined again.
func findApproval(lines []string) (*harness.Prompt, bool) {
	end := len(lines) - 1
	for end >= 0 && strings.TrimSpace(lines[end]) == "" {
		end--
	}
	if end < 1 || strings.TrimSpace(lines[end]) != approvalFooter || !isIndented(lines[end]) {
		return nil, false
	}
	// The choices: up from the footer to the row of choice 1 (the
	// selected one is marked "›", whichever it is).
	first := -1
	for i := end - 1; i >= 0 && i >= end-40; i-- {
		l := lines[i]
		if l != "" && !isIndented(l) && !isMenuChoice(l) {
			return nil, false
		}
		if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, composerPrefix)), "1. ") {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, false
	}
	choices, ok := readChoices(lines[first:end])
	if !ok || len(choices) < 2 || !strings.HasPrefix(choices[0], "Yes") {
		return nil, false
	}
	// The prompt's words: the indented rows above the choices, up to the
	// busy line (or whatever else is in column 0), from the first in the
	// prompt's column (two in): the busy line's own details ("    + Show
	// details") are further in.
	top := first
	for top > 0 && (lines[top-1] == "" || isIndented(lines[top-1])) {
		top--
	}
	for top < first && !inPromptColumn(lines[top]) {
		top++
	}
	var command, words []string
	inCommand := false
	for _, l := range lines[top:first] {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			inCommand = false
		case strings.HasPrefix(t, approvalCommand) && command == nil:
			command, inCommand = []string{strings.TrimSpace(strings.TrimPrefix(t, approvalCommand))}, true
		case inCommand:
			command = append(command, t) // a wrapped row of the command
		case strings.HasPrefix(t, approvalEnvironment):
		default:
			words = append(words, t)
		}
	}
	if len(words) == 0 && command == nil {
		return nil, false
	}
	var text []string
	if command != nil {
		if len(command) > maxPromptLines {
			command = append(command[:maxPromptLines:maxPromptLines], "…")
		}
		text = append(text, strings.Join(command, " "))
	}
	text = append(text, words...)
	if len(text) > maxPromptLines {
		text = append(text[:maxPromptLines:maxPromptLines], "…")
	}
	return &harness.Prompt{Kind: api.PromptPermission, Text: strings.Join(text, "\n"), Choices: choices}, true
}

// readChoices reads numbered choices, in order from 1: "› 1. Yes, proceed
// (y)" (selected), "  2. …", a wrapped one's rest indented further. Every
// non-blank row must be one of them.
func readChoices(lines []string) ([]string, bool) {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(strings.TrimPrefix(l, composerPrefix))
		if t == "" {
			continue
		}
		num := strconv.Itoa(len(out)+1) + ". "
		if rest, ok := strings.CutPrefix(t, num); ok && strings.TrimSpace(rest) != "" {
			out = append(out, strings.TrimSpace(rest))
			continue
		}
		if len(out) == 0 || !strings.HasPrefix(l, "     ") {
			return nil, false
		}
		out[len(out)-1] += " " + t
	}
	return out, len(out) > 0
}

// inPromptColumn: a row that starts two columns in, where codex draws the
// prompt's words.
func inPromptColumn(l string) bool {
	return strings.HasPrefix(l, "  ") && len(l) > 2 && l[2] != ' ' && l[2] != '\t'
}
