package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// The agent's page offers the answers leo can give its prompt as buttons
// beside it — Always only where the prompt offers it — each naming the
// prompt's id; a post answers through the daemon as the web's, and a
// stale page (prompt_changed) gets the daemon's refusal as its flash.
func TestAgentPageAnswersThePrompt(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	since := time.Now().Add(-time.Minute)
	prompt := func(id string, answers ...string) *api.Attention {
		return &api.Attention{State: api.AttentionNeedsInput, Since: since, Detail: "Bash command touch x",
			Prompt: &api.Prompt{ID: id, Kind: api.PromptPermission, Text: "Bash command\n  touch x\nDo you want to proceed?",
				Choices: []string{"Yes", "Yes, and always allow access to ws/ from this project", "No"}, Answers: answers}}
	}
	f.agents["echo"] = api.Agent{Name: "echo", Harness: "claude", State: api.StateRunning, Attention: prompt("p-0123456789ab", "approve", "always", "deny")}
	f.agents["once"] = api.Agent{Name: "once", Harness: "claude", State: api.StateRunning, Attention: prompt("p-aaaaaaaaaaaa", "approve", "deny")}
	f.agents["codex"] = api.Agent{Name: "codex", Harness: "codex", State: api.StateRunning,
		Attention: &api.Attention{State: api.AttentionNeedsInput, Since: since, Prompt: &api.Prompt{ID: "p-bbbbbbbbbbbb", Kind: api.PromptDialog, Text: "approval"}}}

	body := s.get("/web/agents/echo", http.StatusOK)
	mustHave(t, "echo's page", body,
		`<div class="actions prompt-answer" data-answer-for="p-0123456789ab">`,
		`<input type="hidden" name="prompt" value="p-0123456789ab">`,
		`action="/web/agents/echo/answer"`,
		`data-answer="approve">Approve</button>`, `data-answer="always">Always</button>`, `data-answer="deny">Deny</button>`)
	body = s.get("/web/agents/once/panel", http.StatusOK)
	mustHave(t, "once's panel", body, `data-answer="approve">Approve</button>`, `data-answer="deny">Deny</button>`)
	mustLack(t, "once's panel (no always choice)", body, `data-answer="always"`)
	body = s.get("/web/agents/codex", http.StatusOK)
	mustLack(t, "codex's page (a prompt leo cannot read)", body, `data-answer=`)
	mustHave(t, "codex's page", body, "Answer it in the TUI: <code>leo attach codex</code>")

	page := s.post("/web/agents/echo/answer", url.Values{"prompt": {"p-0123456789ab"}, "answer": {"always"}}, "/web/agents/echo")
	mustHave(t, "after the answer", page, "Answered Yes to echo&#39;s prompt p-0123456789ab.")
	if got := f.sent; len(got) != 1 || got[0] != "answer always p-0123456789ab by web" {
		t.Fatalf("the daemon got %q, want the web's answer", got)
	}

	f.fail["POST /agents/echo/answer"] = api.Errorf(api.CodePromptChanged, "agent echo: prompt p-0123456789ab is no longer shown; the screen shows p-cccccccccccc (Bash command touch y); nothing was pressed")
	page = s.post("/web/agents/echo/answer", url.Values{"prompt": {"p-0123456789ab"}, "answer": {"approve"}}, "/web/agents/echo")
	mustHave(t, "a stale page's answer", page, "is no longer shown", "nothing was pressed")

	// An answer the web does not offer, or no prompt named: nothing sent.
	n := len(f.Calls())
	for _, form := range []url.Values{{"prompt": {"p-0123456789ab"}, "answer": {"text"}}, {"answer": {"approve"}}} {
		s.post("/web/agents/echo/answer", form, "/web/agents/echo")
	}
	for _, c := range f.Calls()[n:] {
		if strings.HasPrefix(c, "POST /agents/echo/answer") {
			t.Fatalf("a refused form reached the daemon: %s", c)
		}
	}
}

// answerRecorder keeps the sender header of each answer it is handed.
type answerRecorder struct{ senderRecorder }

func (a *answerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/answer") {
		a.mu.Lock()
		a.seen = append(a.seen, r.Header.Get(api.SenderHeader))
		a.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"agent":"bob","prompt":{"id":"p-0123456789ab","kind":"permission","text":"x"},"answer":"deny","choice":"No","cleared":true}`))
}

// A token's client answering on the HTTP API is recorded as the API's,
// whatever it claims.
func TestAPIAnswersAreTheAPIs(t *testing.T) {
	rec := &answerRecorder{}
	s := newTestSite(t, "", rec)
	headers := s.bearer()
	headers["Content-Type"] = "application/json"
	headers[api.SenderHeader] = api.SenderWeb
	status, _, body := s.do("POST", "/api/agent/bob/answer", strings.NewReader(`{"prompt":"p-0123456789ab","answer":"deny"}`), headers)
	if status != http.StatusOK || rec.last() != api.SenderAPI || !strings.Contains(body, `"cleared":true`) {
		t.Fatalf("API answer: %d %s, sender %q; want api", status, body, rec.last())
	}
}

// The agents list answers too (a phone on the fleet's page, not only an
// agent's): each prompt row has its buttons, posting back to the list;
// a question takes a typed answer in a text field.
func TestAgentsListAnswersPromptsAndQuestions(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	since := time.Now().Add(-time.Minute)
	f.agents["echo"] = api.Agent{Name: "echo", Harness: "claude", State: api.StateRunning, Attention: &api.Attention{State: api.AttentionNeedsInput, Since: since,
		Prompt: &api.Prompt{ID: "p-0123456789ab", Kind: api.PromptPermission, Text: "Bash command: touch x", Choices: []string{"Yes", "No"}, Answers: []string{"approve", "deny"}}}}
	f.agents["quiz"] = api.Agent{Name: "quiz", Harness: "claude", State: api.StateRunning, Attention: &api.Attention{State: api.AttentionNeedsInput, Since: since,
		Prompt: &api.Prompt{ID: "p-dddddddddddd", Kind: api.PromptQuestion, Text: "Colour: Which colour?", Choices: []string{"Red", "Blue", "Type something."}, Answers: []string{"text"}}}}
	for _, path := range []string{"/web/agents", "/web/partials/agents"} {
		body := s.get(path, http.StatusOK)
		mustHave(t, path, body, `data-answer-for="p-0123456789ab"`, `action="/web/agents/echo/answer"`, `data-answer="approve">Approve</button>`,
			`data-answer="deny">Deny</button>`, `<input type="hidden" name="back" value="/web/agents">`, `hx-target="#agents-list"`,
			`data-answer-for="p-dddddddddddd"`, `action="/web/agents/quiz/answer"`, `<input type="hidden" name="answer" value="text">`, `name="text"`, `data-answer="text">Answer</button>`)
	}
	page := s.post("/web/agents/quiz/answer", url.Values{"prompt": {"p-dddddddddddd"}, "answer": {"text"}, "text": {"green"}, "back": {"/web/agents"}}, "/web/agents")
	mustHave(t, "after the typed answer", flashOf(page), "flash-ok", "Answered &#34;green&#34; (typed into Type something.) to quiz&#39;s prompt p-dddddddddddd.")
	if got := f.sent; len(got) != 1 || got[0] != "answer text p-dddddddddddd by web text green" {
		t.Fatalf("the daemon got %q, want the web's typed answer", got)
	}
	page = s.post("/web/agents/quiz/answer", url.Values{"prompt": {"p-dddddddddddd"}, "answer": {"text"}, "text": {"  "}, "back": {"/web/agents"}}, "/web/agents")
	mustHave(t, "an empty typed answer", flashOf(page), "flash-error", "type the answer first")
	if len(f.sent) != 1 {
		t.Fatalf("an empty answer reached the daemon: %q", f.sent)
	}
}
