package browser_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/blackpaw-studio/leo/internal/api"
)

// The agent's page answers its prompt in a real browser: the fake
// claude's permission prompt (as the real one shows it) gets Approve,
// Always and Deny buttons beside its text; a click on Approve answers it
// (the fake runs the command and the turn ends), the flash says which
// prompt, and the page follows without a reload.
func TestBrowserApprovesThePrompt(t *testing.T) {
	s := startSite(t)
	shots := artifacts(t)
	ctx := context.Background()
	if _, err := s.w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude", Name: "asker"}); err != nil {
		t.Fatal(err)
	}
	s.w.WaitAll(60*time.Second, "asker running and idle", func(as []api.Agent) bool {
		return len(as) == 1 && as[0].State == api.StateRunning && as[0].Attention != nil && as[0].Attention.State == api.AttentionIdle
	})
	b := newBrowser(t)
	b.do("open asker's page", chromedp.Navigate(s.base+"/web/agents/asker"))
	b.login(s, "/web/agents/asker")
	b.waitJS("the stream open", `document.documentElement.dataset.stream === "open"`, 30*time.Second)
	s.ask(t, "asker", "touch web.txt")
	b.waitJS("the prompt with its buttons", `!!document.querySelector('#agent-attention .prompt-answer button[data-answer="approve"]') && !!document.querySelector('#agent-attention button[data-answer="always"]') && !!document.querySelector('#agent-attention button[data-answer="deny"]') && document.querySelector("#agent-attention .prompt-text").innerText.includes("touch web.txt")`, 30*time.Second)
	a, err := s.w.Client.Get(ctx, "asker")
	if err != nil || a.Attention == nil || a.Attention.Prompt == nil {
		t.Fatalf("asker: %+v %v", a, err)
	}
	id := a.Attention.Prompt.ID
	b.waitJS("the forms name the prompt", `[...document.querySelectorAll('#agent-attention .prompt-answer input[name="prompt"]')].every(i => i.value === "`+id+`")`, 5*time.Second)
	b.shoot(shots, "agent-prompt-buttons")
	b.do("click Approve", chromedp.Click(chromedp.CSS(`#agent-attention button[data-answer="approve"]`)))
	b.waitJS("the flash names the prompt, the prompt gone", `document.querySelector("#flash") && document.querySelector("#flash").innerText.includes("Answered Yes to asker's prompt `+id+`") && !document.querySelector("#agent-attention .prompt")`, 30*time.Second)
	s.w.WaitAll(30*time.Second, "asker idle after the approved turn", func(as []api.Agent) bool {
		return len(as) == 1 && as[0].Attention != nil && as[0].Attention.State == api.AttentionIdle
	})
	if html := b.html(); strings.Contains(html, `data-answer="approve"`) {
		t.Fatalf("the buttons stayed after the answer")
	}
	b.noErrors()
}
