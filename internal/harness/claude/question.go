package claude

import (
	"encoding/json"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// claude's question tool (AskUserQuestion) draws its question in place of
// the input box, the last thing on the screen (2.1.197 and 2.1.332,
// testdata/screens/claude/question_*):
//
//	 ☐ Colour                             the header (a tab bar when
//	Which colour should the button be?    several questions are asked)
//	❯ 1. Red                              the options, each with its
//	     a warm red                       description under it
//	  2. Blue
//	     a calm blue
//	  3. Type something.                  the own-answer row
//	──────────
//	  4. Chat about this
//	Enter to select · ↑/↓ to navigate · Esc to cancel
//
// An option's number takes it at once; the own-answer row's number puts
// the cursor in it, where typed text shows in place of "Type something."
// and Enter sends it.
const (
	questionFooter = "Enter to select"
	questionNav    = "to navigate"
	// ownAnswerRow is the own-answer row while nothing is typed in it.
	ownAnswerRow   = "Type something."
	questionDialog = "question"
	// questionTool is the tool's name in hook payloads.
	questionTool = "AskUserQuestion"
)

// findQuestion reads the question whose footer is the last line drawn.
func findQuestion(lines []string) (*harness.Prompt, bool) {
	end := len(lines) - 1
	for end >= 0 && strings.TrimSpace(lines[end]) == "" {
		end--
	}
	if end < 1 {
		return nil, false
	}
	if f := strings.TrimSpace(lines[end]); !strings.HasPrefix(f, questionFooter) || !strings.Contains(f, questionNav) {
		return nil, false
	}
	// Up from the footer to option 1: numbered rows are options,
	// indented ones their descriptions, rules separate.
	var rows []string
	first := -1
	for i := end - 1; i >= 0; i-- {
		l := lines[i]
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), promptPrefix))
		switch {
		case t == "" || isRule(l):
			continue
		case isOption(t):
			rows = append(rows, t)
			if strings.HasPrefix(t, "1. ") {
				first = i
			}
		case strings.HasPrefix(l, "     "):
			continue
		default:
			i = -1 // not part of the options: stop
		}
		if first >= 0 {
			break
		}
	}
	if first < 1 {
		return nil, false
	}
	choices := make([]string, 0, len(rows))
	for k := len(rows) - 1; k >= 0; k-- {
		text, ok := numbered(rows[k], len(choices)+1)
		if !ok {
			return nil, false
		}
		choices = append(choices, text)
	}
	// The question: the lines above option 1 (a blank line between), up
	// to a blank line, a rule or the header (its ☐ box, or a tab bar of
	// several), which may stand a blank line above.
	var q []string
	header := ""
	i := first - 1
	for i >= 0 && strings.TrimSpace(lines[i]) == "" {
		i--
	}
	for ; i >= 0 && len(q) < maxPromptLines; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" || isRule(lines[i]) {
			break
		}
		if h, ok := questionHeader(t); ok {
			header = h
			break
		}
		q = append([]string{t}, q...)
	}
	for header == "" && i >= 0 && strings.TrimSpace(lines[i]) == "" {
		i--
		if i >= 0 {
			header, _ = questionHeader(strings.TrimSpace(lines[i]))
		}
	}
	if len(q) == 0 {
		return nil, false
	}
	text := strings.Join(q, " ")
	if header != "" {
		text = header + ": " + text
	}
	return &harness.Prompt{Kind: api.PromptQuestion, Text: text, Choices: choices}, true
}

// isOption: "<n>. text" with n a number.
func isOption(t string) bool {
	dot := strings.Index(t, ". ")
	if dot < 1 || dot > 2 {
		return false
	}
	for _, r := range t[:dot] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// questionHeader is the header line's text without its boxes and arrows.
func questionHeader(t string) (string, bool) {
	if !strings.ContainsAny(t, "☐☒✔") {
		return "", false
	}
	f := strings.Fields(strings.NewReplacer("☐", " ", "☒", " ", "✔", " ", "←", " ", "→", " ").Replace(t))
	return strings.Join(f, " "), true
}

// askedQuestions is the text of an AskUserQuestion call's input, as the
// screen words it ("Colour: Which colour should the button be?"); ok is
// false for another shape.
func askedQuestions(raw json.RawMessage) (text string, ok bool) {
	var in struct {
		Questions []struct {
			Question string `json:"question"`
			Header   string `json:"header"`
		} `json:"questions"`
	}
	if json.Unmarshal(raw, &in) != nil || len(in.Questions) == 0 {
		return "", false
	}
	var parts []string
	for _, q := range in.Questions {
		p := strings.TrimSpace(q.Question)
		if h := strings.TrimSpace(q.Header); h != "" {
			p = h + ": " + p
		}
		parts = append(parts, p)
	}
	return cut(strings.Join(parts, "\n"), maxAsk), true
}

// questionKeys answer claude's question with a typed text: a text that
// is an option's label takes that option (its number); any other goes
// into the own-answer row (its number, the text, Enter). A row a person
// has typed into no longer reads "Type something.": leo types nothing
// over their draft.
func questionKeys(p harness.Prompt, answer, text string) ([]harness.Press, string, error) {
	if answer != api.AnswerText {
		return nil, "", notOffered("claude's question takes a typed answer (leo agent answer), not " + answer)
	}
	want := strings.TrimSpace(text)
	for i, c := range p.Choices {
		if c == want && c != ownAnswerRow && i < 9 {
			return []harness.Press{digit(i)}, c, nil
		}
	}
	for i, c := range p.Choices {
		if c == ownAnswerRow && i < 9 && want != "" && !strings.Contains(want, "\n") {
			return []harness.Press{digit(i), {Literal: want}, {Keys: []string{"Enter"}}}, ownAnswerRow, nil
		}
	}
	return nil, "", notOffered("claude's question offers " + strings.Join(p.Choices, " / ") + " and no typed answer")
}
