package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// hostilePrompt is what a harness's screen might carry: markup, an
// escape sequence, a NUL.
const hostilePrompt = "Bash command\n  rm -rf <b>x</b> \x1b[31m&& echo \"pwned\"\x00\n<script>alert(1)</script>\nDo you want to proceed?"

func attentionAgents(since time.Time) map[string]api.Agent {
	resets := since.Add(2 * time.Hour)
	return map[string]api.Agent{
		"alpha": {Name: "alpha", Harness: "codex", State: api.StateRunning,
			Attention: &api.Attention{State: api.AttentionIdle, Since: since, Detail: "All tests pass."}},
		"bravo": {Name: "bravo", Harness: "claude", State: api.StateRunning,
			Attention: &api.Attention{State: api.AttentionLimited, Since: since, Detail: "usage limit reached", ResetsAt: &resets}},
		"charlie": {Name: "charlie", Harness: "opencode", State: api.StateRunning,
			Attention: &api.Attention{State: api.AttentionErrored, Since: since, Detail: "API Error: 500 overloaded"}},
		"delta": {Name: "delta", Harness: "claude", State: api.StateStopped},
		"echo": {Name: "echo", Harness: "claude", State: api.StateRunning, Queued: 2,
			Attention: &api.Attention{State: api.AttentionNeedsInput, Since: since, Detail: "Bash command rm -rf <b>x</b>",
				Prompt: &api.Prompt{ID: "p-0123456789ab", Kind: api.PromptPermission, Text: hostilePrompt,
					Choices: []string{"Yes", "Yes, and don't ask again for <i>rm</i>", "No"}}}},
		"foxtrot": {Name: "foxtrot", Harness: "codex", State: api.StateRunning,
			Attention: &api.Attention{State: api.AttentionWorking, Since: since, Detail: "fix the build", MessageID: "m-7"}},
	}
}

// The agents that need a person come first — needs input, then errored,
// then limited — the rest by name; the attention reads at a glance, and
// what an agent asks is shown below its row as text, never as HTML.
func TestAgentsNeedingAPersonComeFirstWithTheirPrompt(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents = attentionAgents(time.Now().Add(-3 * time.Minute))
	for _, path := range []string{"/web/agents", "/web/partials/agents"} {
		body := s.get(path, http.StatusOK)
		var at []int
		for _, name := range []string{"echo", "charlie", "bravo", "alpha", "delta", "foxtrot"} {
			i := strings.Index(body, `<tr data-agent="`+name+`"`)
			if i < 0 {
				t.Fatalf("%s: no row for %s:\n%s", path, name, body)
			}
			at = append(at, i)
		}
		for i := 1; i < len(at); i++ {
			if at[i] < at[i-1] {
				t.Fatalf("%s: rows out of order (want echo, charlie, bravo, then alpha, delta, foxtrot by name):\n%s", path, body)
			}
		}
		mustHave(t, path, body,
			`<tr data-agent="echo" data-attention="needs_input" data-prompt="p-0123456789ab" class="needs-person">`,
			`<tr data-agent="charlie" data-attention="errored" class="needs-person">`,
			`<tr data-agent="bravo" data-attention="limited" class="needs-person">`,
			`<tr data-agent="alpha" data-attention="idle">`, `<tr data-agent="delta">`,
			`<span class="attn attn-needs_input">needs input</span>`, `<span class="attn attn-errored">errored</span>`,
			`<span class="attn attn-limited">limited</span>`, `<span class="attn attn-working">working</span>`,
			`<span class="attn attn-idle">idle</span>`, ">3m</span>",
			"API Error: 500 overloaded", "usage limit reached", "resets ", "on: fix the build", "last reply: All tests pass.",
			// The prompt in full, escaped; control characters blanked.
			`<tr class="prompt-row" data-prompt-for="echo">`, `<span class="badge">permission</span>`,
			"rm -rf &lt;b&gt;x&lt;/b&gt;  [31m&amp;&amp; echo &#34;pwned&#34; \n&lt;script&gt;alert(1)&lt;/script&gt;\nDo you want to proceed?",
			"<li>Yes</li>", "<li>Yes, and don&#39;t ask again for &lt;i&gt;rm&lt;/i&gt;</li>", "<li>No</li>",
			"<code>leo attach echo</code>", "2 message(s) wait for it.")
		mustLack(t, path, body, "<script>alert", "<b>x</b>", "<i>rm</i>", "\x1b", "\x00")
		if n := strings.Count(body, `class="prompt-row"`); n != 1 {
			t.Errorf("%s: %d prompt rows, want 1 (only needs_input carries a prompt)", path, n)
		}
	}
}

// An agent's page shows its attention, the detail and the prompt; the
// panel is what the page fetches again on the agent's events.
func TestAgentPageShowsAttention(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents = attentionAgents(time.Now().Add(-3 * time.Minute))
	for _, path := range []string{"/web/agents/echo", "/web/agents/echo/panel"} {
		body := s.get(path, http.StatusOK)
		mustHave(t, path, body, `data-live-agent="echo" data-attention="needs_input" data-prompt="p-0123456789ab"`,
			`<dt>Attention</dt><dd id="agent-attention">`, `<span class="attn attn-needs_input">needs input</span>`,
			`<div class="prompt" data-prompt-id="p-0123456789ab">`,
			"&lt;script&gt;alert(1)&lt;/script&gt;", "<li>No</li>", "<code>leo attach echo</code>")
		mustLack(t, path, body, "<script>alert", "<b>x</b>")
	}
	body := s.get("/web/agents/bravo/panel", http.StatusOK)
	mustHave(t, "limited agent", body, `<span class="attn attn-limited">limited</span>`, "usage limit reached", "resets ")
	mustLack(t, "limited agent", body, `class="prompt"`)
	body = s.get("/web/agents/delta/panel", http.StatusOK)
	mustLack(t, "stopped agent", body, "<dt>Attention</dt>")
}

// The pages live on the stream, not on a poll, and offer notifications
// only as a button a person clicks (static/leo.js shows it).
func TestPagesLiveOnTheStream(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents = attentionAgents(time.Now())
	f.tasks["report"] = api.Task{Name: "report", Harness: "claude"}
	for _, c := range []struct{ path, live string }{
		{"/web/agents", `data-live="/web/partials/agents" data-live-on="agent.state agent.attention agent.resumed message.queued message.delivered message.failed turn.ended"`},
		{"/web/tasks", `data-live="/web/partials/tasks" data-live-on="task.run.started task.run.ended config.reloaded"`},
		{"/web/agents/echo", `data-live="/web/agents/echo/panel"`},
	} {
		body := s.get(c.path, http.StatusOK)
		mustHave(t, c.path, body, c.live, `<button type="button" id="notify-toggle" hidden>Notify me</button>`, `<script src="/static/leo.js" defer></script>`)
		mustLack(t, c.path, body, `hx-trigger="every 3s"`)
	}
	js := s.get("/static/leo.js", http.StatusOK)
	mustHave(t, "leo.js", js, `new EventSource("/web/events"`, "Notification.requestPermission", `"leo.notify"`)
	mustLack(t, "leo.js", js, "innerHTML")
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "plain",
		"a\nb\tc":                "a\nb\tc",
		"esc\x1b[31mred":         "esc [31mred",
		"nul\x00del\x7fc1\u0085": "nul del c1 ",
		"bad\xffutf8":            "bad\uFFFDutf8",
		"<b>kept</b>":            "<b>kept</b>", // html/template escapes it
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// A usage limit that holds an agent's queue says until when, on the list
// and on the agent's page; without a hold nothing is said.
func TestHeldUntilShowsOnTheListAndThePage(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents = attentionAgents(time.Now().Add(-3 * time.Minute))
	held := time.Now().Add(40 * time.Minute)
	b := f.agents["bravo"]
	b.HeldUntil = &held
	f.agents["bravo"] = b
	for _, path := range []string{"/web/agents", "/web/agents/bravo"} {
		mustHave(t, path, s.get(path, http.StatusOK), `<div class="hint held-until">messages held until `, "leo delivers them then")
	}
	mustLack(t, "alpha's page", s.get("/web/agents/alpha", http.StatusOK), "held-until")
}
