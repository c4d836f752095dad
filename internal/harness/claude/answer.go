package claude

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// AnswerKeys answers claude's permission prompt (findPermission) with the
// number of the choice, which claude takes at once (2.1.197, 2.1.332:
// testdata/screens/claude/permission-bash_*):
//
//	approve  "1. Yes"
//	always   "Yes, and always allow …" / "Yes, and don't ask again …" /
//	         "Yes, allow all edits …" — the prompt's own widening, never
//	         "switch to auto mode" (a mode for every later prompt)
//	deny     "No" (or "No, and tell Claude what to do differently")
//
// Its question tool's prompt takes a typed answer (question.go).
func (Claude) AnswerKeys(p harness.Prompt, answer, text string) ([]harness.Press, string, error) {
	if p.Kind == api.PromptQuestion {
		return questionKeys(p, answer, text)
	}
	if p.Kind != api.PromptPermission {
		return nil, "", fmt.Errorf("claude's %s prompt: %w", p.Kind, harness.ErrNotOffered)
	}
	var match func(string) bool
	switch answer {
	case api.AnswerApprove:
		match = func(c string) bool { return c == "Yes" }
	case api.AnswerAlways:
		match = func(c string) bool {
			for _, w := range alwaysChoices {
				if strings.HasPrefix(c, w) {
					return true
				}
			}
			return false
		}
	case api.AnswerDeny:
		match = func(c string) bool { return c == "No" || strings.HasPrefix(c, "No,") }
	default:
		return nil, "", fmt.Errorf("claude's permission prompt takes no %s answer: %w", answer, harness.ErrNotOffered)
	}
	for i, c := range p.Choices {
		if match(c) && i < 9 {
			return []harness.Press{digit(i)}, c, nil
		}
	}
	return nil, "", fmt.Errorf("claude's prompt offers no %s choice (%s): %w", answer, strings.Join(p.Choices, " / "), harness.ErrNotOffered)
}

// digit presses the number of choice i (0-based), which claude takes at
// once.
func digit(i int) harness.Press { return harness.Press{Keys: []string{strconv.Itoa(i + 1)}} }

// notOffered is ErrNotOffered, saying why.
func notOffered(why string) error { return fmt.Errorf("%s: %w", why, harness.ErrNotOffered) }

// alwaysChoices start the choices by which claude's prompt itself stops
// asking about what it asks.
var alwaysChoices = []string{"Yes, and always allow", "Yes, and don't ask again", "Yes, allow all edits"}
