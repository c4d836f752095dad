package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Answering a prompt from the agent's page: Approve, Always (only when the
// prompt offers the harness's own always choice: api.Prompt.Answers) and
// Deny buttons beside the prompt's text. Each form carries the prompt's
// id, so a page left open on a prompt that was answered meanwhile (in the
// TUI, from the CLI) gets prompt_changed or no_prompt, and nothing is
// pressed. The in-process client marks the answer as the web's.

// answerButtons are the buttons of the answers the web offers, in order.
var answerButtons = []struct{ answer, label, class string }{
	{api.AnswerApprove, "Approve", ""},
	{api.AnswerAlways, "Always", ""},
	{api.AnswerDeny, "Deny", "danger"},
}

// answerForm is what the prompt's buttons need.
type answerForm struct {
	CSRF, Agent, Back, Target string
	Prompt                    *api.Prompt
	Buttons                   []answerButton
	// Text: the prompt takes a typed answer (a question): a text field,
	// where an option's label picks that option.
	Text bool
}

type answerButton struct{ Answer, Label, Class string }

func newAnswerForm(csrf, agent string, p *api.Prompt, back, target string) answerForm {
	f := answerForm{CSRF: csrf, Agent: agent, Back: back, Target: target, Prompt: p}
	for _, b := range answerButtons {
		if p != nil && slices.Contains(p.Answers, b.answer) {
			f.Buttons = append(f.Buttons, answerButton{b.answer, b.label, b.class})
		}
	}
	f.Text = p != nil && slices.Contains(p.Answers, api.AnswerText)
	return f
}

func init() { funcs["answerForm"] = newAnswerForm }

// answerPrompt is POST /web/agents/{name}/answer: prompt (its id) and
// answer (approve, always, deny; text with the text field) from the form.
func (s *Server) answerPrompt(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	back := backTo(r, agentURL(name))
	answer, id, text := r.PostFormValue("answer"), r.PostFormValue("prompt"), r.PostFormValue("text")
	if answer != api.AnswerText && !slices.ContainsFunc(answerButtons, func(b struct{ answer, label, class string }) bool { return b.answer == answer }) {
		done(w, r, back, "error", fmt.Sprintf("answer %s: %q is not approve, always, deny or text", name, answer))
		return
	}
	if answer == api.AnswerText && strings.TrimSpace(text) == "" {
		done(w, r, back, "error", "answer "+name+": type the answer first")
		return
	}
	if id == "" {
		done(w, r, back, "error", "answer "+name+": the form names no prompt; reload the page")
		return
	}
	res, err := s.client.Answer(r.Context(), name, api.AnswerRequest{Prompt: id, Answer: answer, Text: text})
	if err != nil {
		failed(w, r, back, err)
		return
	}
	msg := fmt.Sprintf("Answered %s to %s's prompt %s.", res.Choice, name, res.Prompt.ID)
	if typed := strings.TrimSpace(text); answer == api.AnswerText && typed != res.Choice {
		msg = fmt.Sprintf("Answered %q (typed into %s) to %s's prompt %s.", typed, res.Choice, name, res.Prompt.ID)
	}
	switch {
	case res.NextPrompt != nil:
		msg += " It asks again: prompt " + res.NextPrompt.ID + "."
	case !res.Cleared:
		msg += " The prompt still shows; look at the screen."
	}
	done(w, r, back, "ok", msg)
}
