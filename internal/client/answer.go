package client

import (
	"context"
	"net/http"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Answer is POST /agents/{name}/answer: the keys of req's answer are
// pressed only while the agent's screen shows the prompt (req.Prompt's,
// when named). no_prompt, prompt_changed, prompt_unanswerable and
// not_offered mean nothing was pressed. A missing answer is
// outcome_unknown: the keys may have been pressed (asking again with the
// same prompt id is safe: a prompt answered is prompt_changed or
// no_prompt).
func (c *Client) Answer(ctx context.Context, name string, req api.AnswerRequest) (api.AnswerResult, error) {
	p, err := agentPath(name, "answer")
	if err != nil {
		return api.AnswerResult{}, err
	}
	var r api.AnswerResult
	err = c.change(ctx, ChangeTimeout, http.MethodPost, p, req, &r, "")
	return r, err
}
