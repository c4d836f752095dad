package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// POST /agents/{name}/answer hands the answer to the manager with the
// socket's sender (the body cannot name one), and answers the manager's
// refusals with their 409.
func TestAnswerRoute(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	ctx := context.Background()
	if _, err := r.Client.Spawn(ctx, api.SpawnRequest{Template: "assistant", Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	r.agents.AnswerResult = func(name string, req api.AnswerRequest) (api.AnswerResult, error) {
		if req.Prompt != "p-0123456789ab" {
			return api.AnswerResult{}, api.Errorf(api.CodePromptChanged, "agent %s: prompt %s is no longer shown; nothing was pressed", name, req.Prompt)
		}
		return api.AnswerResult{Agent: name, Prompt: api.Prompt{ID: req.Prompt}, Answer: req.Answer, Choice: "Yes", Cleared: true}, nil
	}
	res, err := r.Client.Answer(ctx, "bob", api.AnswerRequest{Prompt: "p-0123456789ab", Answer: api.AnswerApprove})
	if err != nil || res.Choice != "Yes" || !res.Cleared {
		t.Fatalf("answer: %+v %v", res, err)
	}
	// The body cannot name who answers.
	if status, body := raw(t, h, "POST", "/agents/bob/answer", `{"prompt":"p-ffffffffffff","answer":"deny","Sender":"web"}`); status != http.StatusBadRequest {
		t.Fatalf("a body naming the sender: %d %s", status, body)
	}
	status, body := raw(t, h, "POST", "/agents/bob/answer", `{"prompt":"p-ffffffffffff","answer":"deny"}`)
	if status != http.StatusConflict || decodeErr(t, body).Code != api.CodePromptChanged {
		t.Fatalf("a stale prompt: %d %s", status, body)
	}
	got := r.agents.Answers()
	if len(got) != 2 || got[0].Sender != api.SenderCLI || got[1].Sender != api.SenderCLI || got[1].Answer != api.AnswerDeny {
		t.Fatalf("the manager got %+v, want two answers from the cli", got)
	}
	r.agents.AnswerResult = nil
	if _, err := r.Client.Answer(ctx, "bob", api.AnswerRequest{Answer: api.AnswerApprove}); !api.HasCode(err, api.CodeNoPrompt) {
		t.Fatalf("no prompt: %v", err)
	}
	if status, body := raw(t, h, "POST", "/agents/bob/answer", `{"answer":`); status != http.StatusBadRequest || !strings.Contains(body, "invalid_args") {
		t.Fatalf("a bad body: %d %s", status, body)
	}
}
