package api

// Answers to a prompt (AnswerRequest.Answer): leo agent approve, approve
// --always, deny, answer TEXT.
const (
	AnswerApprove = "approve"
	AnswerAlways  = "always"
	AnswerDeny    = "deny"
	AnswerText    = "text"
)

// Answers lists every answer.
var Answers = []string{AnswerApprove, AnswerAlways, AnswerDeny, AnswerText}

// AnswerRequest is POST /agents/{name}/answer: give Answer to the prompt
// the agent's screen shows — to Prompt only, when it is set (its id, as
// the agent's attention shows it).
type AnswerRequest struct {
	Prompt string `json:"prompt,omitempty"`
	Answer string `json:"answer"`
	// Text is the typed answer of AnswerText (the same rule as a
	// message's text).
	Text string `json:"text,omitempty"`
	// Sender is who answers (the route sets it, never the body).
	Sender string `json:"-"`
}

// AnswerResult is what an answer did.
type AnswerResult struct {
	Agent string `json:"agent"`
	// Prompt is the prompt answered, as the screen showed it.
	Prompt Prompt `json:"prompt"`
	Answer string `json:"answer"`
	// Choice is the prompt's choice the keys pick, as it words it (empty
	// for a typed answer).
	Choice string `json:"choice,omitempty"`
	// Cleared: the screen stopped showing the prompt after the keys, within
	// the wait. False: the keys were pressed and the prompt still showed
	// (or another came: NextPrompt).
	Cleared    bool    `json:"cleared"`
	NextPrompt *Prompt `json:"next_prompt,omitempty"`
}
