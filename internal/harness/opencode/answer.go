package opencode

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// AnswerKeys answers opencode's permission prompt (screen_prompt.go) with
// the keys its two stages take (1.18.33: Left/Right move, Enter takes the
// choice under the cursor — "Allow once" when the prompt comes, "Confirm"
// on the second stage — Escape rejects or goes back):
//
//	first stage (Allow once / Allow always / Reject)
//	  approve  Enter                 Allow once
//	  always   Right, Enter, Enter   Allow always, then Confirm of "Always
//	                                 allow" (the patterns opencode names)
//	  deny     Escape                Reject
//	second stage (Confirm / Cancel)
//	  always   Enter                 Confirm
//	  deny     Escape, Escape        back to the first stage, Reject
//
// The cursor shows only in colour, which a plain capture drops: leo
// presses from where opencode puts it; a person who moved it in the TUI
// and left the prompt open moves what Enter takes (the prompt the screen
// shows afterwards says so: the answer is not Cleared).
func (Opencode) AnswerKeys(p harness.Prompt, answer, text string) ([]harness.Press, string, error) {
	if p.Kind == api.PromptQuestion {
		return questionKeys(p, answer, text)
	}
	if p.Kind != api.PromptPermission {
		return nil, "", fmt.Errorf("opencode's %s prompt: %w", p.Kind, harness.ErrNotOffered)
	}
	key := func(k ...string) harness.Press { return harness.Press{Keys: k} }
	first := slices.Equal(p.Choices, []string{"Allow once", "Allow always", "Reject"})
	second := slices.Equal(p.Choices, []string{"Confirm", "Cancel"})
	switch {
	case first && answer == api.AnswerApprove:
		return []harness.Press{key("Enter")}, "Allow once", nil
	case first && answer == api.AnswerAlways:
		return []harness.Press{key("Right"), key("Enter"), key("Enter")}, "Allow always", nil
	case first && answer == api.AnswerDeny:
		return []harness.Press{key("Escape")}, "Reject", nil
	case second && answer == api.AnswerAlways:
		return []harness.Press{key("Enter")}, "Confirm", nil
	case second && answer == api.AnswerDeny:
		return []harness.Press{key("Escape"), key("Escape")}, "Reject", nil
	}
	return nil, "", fmt.Errorf("opencode's prompt (%s) offers no %s answer leo knows the keys of: %w", strings.Join(p.Choices, " / "), answer, harness.ErrNotOffered)
}

// ownAnswer is the question's last option when it takes a typed answer.
const ownAnswer = "Type your own answer"

// questionKeys answer opencode's question (1.18.33, dialog-question_*):
// Down moves from the first option (under the cursor when it comes),
// Enter takes the one under it. A text that is an option's label picks
// that option; any other text goes into "Type your own answer" (where
// the question offers it): Down to it, Enter, the text typed, Enter.
func questionKeys(p harness.Prompt, answer, text string) ([]harness.Press, string, error) {
	if answer != api.AnswerText {
		return nil, "", fmt.Errorf("opencode's question takes a typed answer (leo agent answer), not %s: %w", answer, harness.ErrNotOffered)
	}
	down := func(n int) []harness.Press {
		var out []harness.Press
		for range n {
			out = append(out, harness.Press{Keys: []string{"Down"}})
		}
		return out
	}
	enter := harness.Press{Keys: []string{"Enter"}}
	want := strings.TrimSpace(text)
	for i, c := range p.Choices {
		if c == want && c != ownAnswer {
			return append(down(i), enter), c, nil
		}
	}
	if n := len(p.Choices); n > 0 && p.Choices[n-1] == ownAnswer && !strings.Contains(want, "\n") {
		presses := append(down(n-1), enter, harness.Press{Literal: want}, enter)
		return presses, ownAnswer, nil
	}
	return nil, "", fmt.Errorf("opencode's question offers %s and no typed answer: %w", strings.Join(p.Choices, " / "), harness.ErrNotOffered)
}
