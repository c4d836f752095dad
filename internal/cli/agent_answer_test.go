package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// approve, deny and answer send the prompt status shows (or --prompt's),
// the answer and its text, and say which prompt they answered; the route
// records them as the CLI's; no prompt in status is no_prompt, sent
// nowhere.
func TestAgentApproveDenyAnswer(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	p := &api.Prompt{ID: "p-0123456789ab", Kind: api.PromptPermission, Text: "Bash command: touch x\nDo you want to proceed?",
		Choices: []string{"Yes", "Yes, and always allow access to ws/ from this project", "No"}, Answers: []string{"approve", "always", "deny"}}
	fake.Put(api.Agent{Name: "bob", State: api.StateRunning, Attention: &api.Attention{State: api.AttentionNeedsInput, Prompt: p}})
	fake.Put(api.Agent{Name: "idle", State: api.StateRunning, Attention: &api.Attention{State: api.AttentionIdle}})
	fake.AnswerResult = func(name string, req api.AnswerRequest) (api.AnswerResult, error) {
		if req.Prompt != p.ID {
			return api.AnswerResult{}, api.Errorf(api.CodePromptChanged, "agent %s: prompt %s is no longer shown; nothing was pressed", name, req.Prompt)
		}
		choice := map[string]string{"approve": "Yes", "always": p.Choices[1], "deny": "No"}[req.Answer]
		if req.Answer == "text" && req.Text != "beta.txt" {
			choice = "Type something." // the question's own-answer row
		}
		return api.AnswerResult{Agent: name, Prompt: *p, Answer: req.Answer, Choice: choice, Cleared: true}, nil
	}

	r := e.run("agent", "approve", "bob")
	if r.code != ExitOK || !strings.Contains(r.stdout, "answered \u201cYes\u201d to prompt "+p.ID) || !strings.Contains(r.stdout, "touch x") {
		t.Fatalf("approve: %+v", r)
	}
	r = e.run("agent", "approve", "bob", "--always", "--json")
	var res api.AnswerResult
	if r.code != ExitOK || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Answer != "always" || res.Prompt.ID != p.ID || !res.Cleared {
		t.Fatalf("approve --always --json: %+v", r)
	}
	if r := e.run("agent", "deny", "bob", "--prompt", p.ID); r.code != ExitOK || !strings.Contains(r.stdout, "\u201cNo\u201d") {
		t.Fatalf("deny: %+v", r)
	}
	assertJSONFailure(t, e.run("agent", "deny", "bob", "--prompt", "p-ffffffffffff", "--json"), "prompt_changed", ExitError)
	if r := e.run("agent", "answer", "bob", "beta.txt", "--prompt", p.ID); r.code != ExitOK {
		t.Fatalf("answer: %+v", r)
	}
	// A text typed into the own-answer row: both are said.
	if r := e.run("agent", "answer", "bob", "gamma.txt", "--prompt", p.ID); r.code != ExitOK ||
		!strings.Contains(r.stdout, "answered \u201cgamma.txt\u201d (typed into \u201cType something.\u201d)") {
		t.Fatalf("typed answer: %+v", r)
	}
	got := fake.Answers()
	want := []api.AnswerRequest{
		{Prompt: p.ID, Answer: "approve", Sender: api.SenderCLI},
		{Prompt: p.ID, Answer: "always", Sender: api.SenderCLI},
		{Prompt: p.ID, Answer: "deny", Sender: api.SenderCLI},
		{Prompt: "p-ffffffffffff", Answer: "deny", Sender: api.SenderCLI},
		{Prompt: p.ID, Answer: "text", Text: "beta.txt", Sender: api.SenderCLI},
		{Prompt: p.ID, Answer: "text", Text: "gamma.txt", Sender: api.SenderCLI},
	}
	if len(got) != len(want) {
		t.Fatalf("the daemon got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	assertJSONFailure(t, e.run("agent", "approve", "idle", "--json"), "no_prompt", ExitError)
	if n := len(fake.Answers()); n != len(want) {
		t.Fatalf("an answer with no prompt in status reached the daemon (%d answers)", n)
	}
	if r := e.run("agent", "answer", "bob"); r.code != ExitUsage {
		t.Fatalf("answer without text: %+v, want a usage error", r)
	}

	// status says how to answer.
	if r := e.run("agent", "status", "bob"); !strings.Contains(r.stdout, "leo agent approve --always bob") || !strings.Contains(r.stdout, "leo agent deny bob") {
		t.Fatalf("status does not say how to answer:\n%s", r.stdout)
	}
}
