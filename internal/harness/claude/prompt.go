package claude

import (
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// maxPromptLines bounds the lines of what a prompt asks about that its
// text quotes (a long command fills the pane).
const maxPromptLines = 12

// findPermission reads claude's permission prompt off lines (those below
// the input box, or all when there is none):
//
//	──────────────────────────────        a rule
//	 Bash command                         the title
//
//	   touch x                            what it would run (2.1.197; 2.1.332:
//	   Create the file x                  a tip, the description, the command
//	                                      between dashed rules)
//	 Do you want to proceed?              the question, one column in
//	 ❯ 1. Yes                             the choices
//	   2. Yes, and always allow access to ws/ from this project
//	   3. No
//
//	 Esc to cancel · Tab to amend · ctrl+e to explain
//
// The text is the title, what it would run and the question ("Bash
// command: touch x\nCreate the file x\nDo you want to proceed?"); the
// choices are as worded, a wrapped one joined again.
func findPermission(lines []string) (*harness.Prompt, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		q := lines[i]
		// One column in, as claude draws its dialogs; transcript lines
		// are in column 0 or two and more in.
		if !strings.HasPrefix(q, " "+permissionQuestion) || !strings.HasSuffix(q, "?") {
			continue
		}
		choices := readChoices(lines[i+1:])
		if len(choices) < 2 || !strings.HasPrefix(choices[0], "Yes") {
			continue
		}
		text := strings.TrimSpace(q)
		if about := promptAbout(lines[:i]); about != "" {
			text = about + "\n" + text
		}
		return &harness.Prompt{Kind: api.PromptPermission, Text: text, Choices: choices}, true
	}
	return nil, false
}

// readChoices reads the numbered choices that start lines: "❯ 1. Yes",
// "  2. …", a wrapped one's rest indented further; they end at a blank
// line or anything else.
func readChoices(lines []string) []string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		rest := strings.TrimSpace(strings.TrimPrefix(t, promptPrefix))
		if text, ok := numbered(rest, len(out)+1); ok {
			out = append(out, text)
			continue
		}
		if t == "" || len(out) == 0 || !strings.HasPrefix(l, "     ") {
			break
		}
		out[len(out)-1] += " " + t
	}
	return out
}

// numbered returns the text of "<n>. text".
func numbered(s string, n int) (string, bool) {
	num := strconv.Itoa(n) + ". "
	if !strings.HasPrefix(s, num) {
		return "", false
	}
	text := strings.TrimSpace(s[len(num):])
	return text, text != ""
}

// promptAbout is what a prompt asks about, read from the lines above its
// question back to the rule over the prompt: the title, then what it would
// run — the dashed-rule frame's lines when there is one (2.1.332), else
// every line under the title (2.1.197); tips are left out.
func promptAbout(lines []string) string {
	top := -1
	for k := len(lines) - 1; k >= 0; k-- {
		if isRule(lines[k]) && !strings.HasPrefix(lines[k], " ") {
			top = k
			break
		}
	}
	if top < 0 {
		return ""
	}
	var title string
	var body, framed []string
	frames := 0
	for _, l := range lines[top+1:] {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case isDashedRule(t):
			frames++
		case title == "":
			title = t
		case frames == 1:
			framed = append(framed, t)
		case frames == 0 && !strings.HasPrefix(t, tipPrefix):
			body = append(body, t)
		}
	}
	if frames >= 2 && len(framed) > 0 {
		body = framed
	}
	if len(body) > maxPromptLines {
		body = append(body[:maxPromptLines:maxPromptLines], "…")
	}
	if title == "" || len(body) == 0 {
		return title
	}
	return title + ": " + strings.Join(body, "\n")
}

// isDashedRule: a line of claude's dashed rule only.
func isDashedRule(t string) bool {
	if len(t) < 3 {
		return false
	}
	for _, r := range t {
		if r != dashedRuleRune {
			return false
		}
	}
	return true
}
