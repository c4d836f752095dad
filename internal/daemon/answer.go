package daemon

import (
	"net/http"

	"github.com/blackpaw-studio/leo/internal/api"
)

// answerPrompt is POST /agents/{name}/answer: a person's answer to the
// prompt the agent's screen shows, recorded with who gave it (the
// surface the web server names, else the CLI on the socket).
func (s *server) answerPrompt(r *http.Request) (any, error) {
	var req api.AnswerRequest
	if err := decodeBody(r, &req, false); err != nil {
		return nil, err
	}
	req.Sender = routeSender(r)
	return s.agents.Answer(r.Context(), r.PathValue("name"), req)
}
