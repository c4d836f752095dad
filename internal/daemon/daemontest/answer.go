package daemontest

import (
	"context"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Answer keeps req (with the sender the route set) and answers by
// AnswerResult; without it no prompt shows (no_prompt).
func (f *Agents) Answer(_ context.Context, name string, req api.AnswerRequest) (api.AnswerResult, error) {
	if _, err := f.Get(name); err != nil {
		return api.AnswerResult{}, err
	}
	f.mu.Lock()
	f.answers = append(f.answers, req)
	answer := f.AnswerResult
	f.mu.Unlock()
	if answer != nil {
		return answer(name, req)
	}
	return api.AnswerResult{}, api.Errorf(api.CodeNoPrompt, "agent %s: its screen shows no prompt; nothing was pressed", name)
}

// Answers are the answers asked so far, in order.
func (f *Agents) Answers() []api.AnswerRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.AnswerRequest(nil), f.answers...)
}
