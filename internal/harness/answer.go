package harness

import "errors"

// PromptAnswerer is implemented by adapters whose TUI's prompts leo can
// answer for a person (leo agent approve, deny, answer): the keys that
// give an answer to a prompt as the adapter's screen reader read it.
// Which keys answer which choice comes from the real CLI's screens
// (docs/harness-behaviour/<harness>.md). An adapter never offers more
// than the prompt does: "always" only where the prompt shows the
// harness's own always/don't-ask-again choice.
type PromptAnswerer interface {
	// AnswerKeys returns the presses that give answer ("approve",
	// "always", "deny", "text" — api.Answer*) to p, and the choice they
	// pick as p words it; text is the typed answer of "text".
	// ErrNotOffered (wrapped) when p offers no such answer.
	AnswerKeys(p Prompt, answer, text string) (presses []Press, choice string, err error)
}

// Press is one tmux send-keys call: key names (Keys), or text typed as
// it is (Literal). Presses are sent apart, as a person would press them:
// a TUI may redraw between them.
type Press struct {
	Keys    []string
	Literal string
}

// ErrNotOffered: the prompt does not offer the answer asked for.
var ErrNotOffered = errors.New("the prompt does not offer that answer")
