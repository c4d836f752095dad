package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// longInput is a tool input long enough to start folded.
var longInput = `{"file_path":"/w/main.go","old_string":"` + strings.Repeat("a", 200) + `","new_string":"b"}`

// coderConversation is a conversation as the daemon answers it: a turn
// from each sender, each outcome, tools short and long, usage and cost.
func coderConversation(at time.Time) api.Conversation {
	end := func(d time.Duration) *time.Time { e := at.Add(d); return &e }
	cost := 0.0123
	return api.Conversation{Agent: "coder", ConversationID: "sess-2", Earlier: []string{"sess-1"}, Turns: []api.Turn{
		{ID: "t1", StartedAt: at, EndedAt: end(42 * time.Second), User: api.TurnUser{Text: "fix the build\nplease", Sender: api.SenderCLI, MessageID: "m-1"},
			Tools: []api.ToolCall{{Name: "Bash", Input: `{"command":"go test ./..."}`}, {Name: "Edit", Input: longInput}},
			Reply: api.TurnReply{Text: "The build is green."}, Outcome: api.OutcomeTurnOK,
			Usage: &api.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 5000, CacheWriteTokens: 200}, CostUSD: &cost},
		{ID: "t2", StartedAt: at.Add(time.Minute), EndedAt: end(61 * time.Second), User: api.TurnUser{Text: "what did you change?"},
			Outcome: api.OutcomeTurnError, Error: "API Error: 500 overloaded"},
		{ID: "t3", StartedAt: at.Add(2 * time.Minute), EndedAt: end(125 * time.Second), User: api.TurnUser{Text: "nightly report", Sender: api.SenderTask("nightly")},
			Reply: api.TurnReply{Text: "Half a rep"}, Outcome: api.OutcomeTurnInterrupted, Error: "interrupted by the user"},
		{ID: "t4", StartedAt: at.Add(3 * time.Minute), User: api.TurnUser{Text: "review this", Sender: api.SenderAgent("reviewer")},
			Usage: &api.Usage{InputTokens: 10, OutputTokens: 2}, Outcome: api.OutcomeTurnRunning},
		{ID: "t5", StartedAt: at.Add(4 * time.Minute), User: api.TurnUser{Text: "from the browser", Sender: api.SenderWeb}, Outcome: api.OutcomeTurnRunning},
	}}
}

func coderSite(t *testing.T) (*testSite, *fakeDaemon) {
	t.Helper()
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateRunning, TmuxSession: "leo-coder",
		UsageToday: &api.Usage{InputTokens: 12000, OutputTokens: 3400, CacheReadTokens: 90000}}
	f.convs["coder"] = []api.Conversation{coderConversation(time.Now().Add(-10 * time.Minute)),
		{Agent: "coder", ConversationID: "sess-1", Turns: []api.Turn{{ID: "old1", StartedAt: time.Now().Add(-time.Hour),
			User: api.TurnUser{Text: "before the reset", Sender: api.SenderCLI}, Reply: api.TurnReply{Text: "an old reply"}, Outcome: api.OutcomeTurnOK}}}}
	return s, f
}

// inOrder fails unless each of wants is in body, each after the one
// before.
func inOrder(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	at := 0
	for _, w := range wants {
		i := strings.Index(body[at:], w)
		if i < 0 {
			t.Fatalf("%s: %q not after the previous ones (%v):\n%s", what, w, wants, body)
		}
		at += i + len(w)
	}
}

// The agent page shows the conversation chat-style beside the screen:
// each turn's message with who sent it, the tools (a long input folded),
// the reply, the outcome with its error, the usage; the newest at the
// bottom. The partial the page fetches again on events is the same.
func TestAgentPageShowsTheConversation(t *testing.T) {
	s, _ := coderSite(t)
	page := s.get("/web/agents/coder", http.StatusOK)
	inOrder(t, "page", page, `<div class="agent-split">`, `<h2 id="chat-h">Conversation</h2>`, `<div id="conversation"`, `id="send-form"`, `<h2 id="screen-h">Screen</h2>`, `id="screen"`)
	part := s.get("/web/agents/coder/conversation", http.StatusOK)
	if strings.Contains(part, "<html") || strings.Contains(part, `id="agent-panel"`) {
		t.Fatalf("the partial is more than the conversation:\n%s", part)
	}
	for what, body := range map[string]string{"page": page, "partial": part} {
		mustHave(t, what, body,
			`<div id="conversation" class="conversation" data-live="/web/agents/coder/conversation" data-live-on="turn.started turn.ended message.delivered agent.attention" data-live-agent="coder" data-running data-conversation="sess-2">`,
			// Who sent each message.
			`<span class="badge sender" data-sender="cli">cli</span>`,
			`<span class="badge sender" data-sender="">typed in the TUI</span>`,
			`<span class="badge sender" data-sender="task nightly">task nightly</span>`,
			`<span class="badge sender" data-sender="agent reviewer">agent reviewer</span>`,
			`<span class="badge sender" data-sender="web">web</span>`,
			`<div class="msg-text">fix the build`+"\n"+`please</div>`,
			// Tools: a short input open, a long one folded with a peek.
			`<details class="tool" data-fold="t1/0" open><summary><code>Bash</code></summary>`,
			`<pre class="tool-input">{&#34;command&#34;:&#34;go test ./...&#34;}</pre>`,
			`<details class="tool" data-fold="t1/1"><summary><code>Edit</code> <span class="hint tool-peek">`,
			strings.ReplaceAll(longInput, `"`, "&#34;"),
			// Reply, outcome, usage.
			`<div class="msg msg-reply"><div class="msg-text">The build is green.</div></div>`,
			`<span class="outcome outcome-ok">ok</span>`, `<span class="hint">42s</span>`,
			`<span class="hint usage">1200 in / 340 out, cache 5000 read / 200 written, $0.0123</span>`,
			`<span class="outcome outcome-error">error</span> <span class="turn-error">API Error: 500 overloaded</span>`,
			`<span class="outcome outcome-interrupted">interrupted</span> <span class="turn-error">interrupted by the user</span>`,
			`<span class="outcome outcome-running">running…</span> <span class="hint usage">10 in / 2 out</span>`,
			// Earlier conversations are a link away.
			`<a href="/web/agents/coder" aria-current="page">current</a>`,
			`<a href="/web/agents/coder?conversation=sess-1" title="sess-1"><code>sess-1</code></a>`)
		inOrder(t, what, body, `data-turn="t1"`, `data-turn="t2"`, `data-turn="t3"`, `data-turn="t4"`, `data-turn="t5"`)
		mustLack(t, what, body, `data-fold="t1/1" open`, "Show all")
		if n := strings.Count(body, `<li class="turn`); n != 5 {
			t.Errorf("%s: %d turns, want 5", what, n)
		}
	}
	// Today's usage, on the page and compactly in the list.
	mustHave(t, "page", page, `<dt>Usage today</dt><dd id="agent-usage-today">12000 in / 3400 out, cache 90000 read / 0 written</dd>`,
		`data-live-on="agent.state agent.attention agent.resumed message.queued message.delivered message.failed turn.ended"`)
	for _, p := range []string{"/web/agents", "/web/partials/agents"} {
		mustHave(t, p, s.get(p, http.StatusOK), `<th class="opt">Today</th>`, `<td class="opt usage-today">12.0k in / 3.4k out</td>`)
	}
}

// The page shows the newest turns, with a link to all of them; an earlier
// conversation is one link away and its page follows it (the partial's
// URL keeps what was asked).
func TestConversationNewestAllAndEarlier(t *testing.T) {
	s, f := coderSite(t)
	at := time.Now().Add(-time.Hour)
	var many []api.Turn
	for i := range conversationTurns + 10 {
		many = append(many, api.Turn{ID: fmt.Sprintf("n%02d", i), StartedAt: at.Add(time.Duration(i) * time.Second),
			User: api.TurnUser{Text: fmt.Sprintf("message %d", i), Sender: api.SenderCLI}, Outcome: api.OutcomeTurnOK})
	}
	f.convs["coder"][0].Turns = many

	page := s.get("/web/agents/coder", http.StatusOK)
	if !f.called(fmt.Sprintf("GET /agents/coder/conversation?last=%d", conversationTurns+1)) {
		t.Fatalf("the page did not ask for the newest %d (+1) turns: %v", conversationTurns, f.Calls())
	}
	if n := strings.Count(page, `<li class="turn`); n != conversationTurns {
		t.Fatalf("%d turns shown, want the newest %d", n, conversationTurns)
	}
	mustHave(t, "page", page, `data-turn="n59"`, `<p class="hint conv-more">The newest 50 turns. <a href="/web/agents/coder?all=1" id="conv-all">Show all</a></p>`)
	mustLack(t, "page", page, `data-turn="n09"`)
	inOrder(t, "page", page, `data-turn="n10"`, `data-turn="n11"`, `data-turn="n59"`)

	all := s.get("/web/agents/coder?all=1", http.StatusOK)
	if n := strings.Count(all, `<li class="turn`); n != conversationTurns+10 {
		t.Fatalf("?all=1: %d turns, want %d", n, conversationTurns+10)
	}
	mustHave(t, "all", all, `data-live="/web/agents/coder/conversation?all=1"`, `data-turn="n00"`, `<a href="/web/agents/coder">Only the newest</a>`)
	if !slices.Contains(f.Calls(), "GET /agents/coder/conversation") {
		t.Fatalf("?all=1 did not ask for every turn (no last=): %v", f.Calls())
	}

	earlier := s.get("/web/agents/coder?conversation=sess-1", http.StatusOK)
	mustHave(t, "earlier", earlier, `data-live="/web/agents/coder/conversation?conversation=sess-1"`, `data-conversation="sess-1"`,
		`before the reset`, `an old reply`, `<a href="/web/agents/coder">current</a>`)
	mustLack(t, "earlier", earlier, `data-turn="n59"`)
	part := s.get("/web/agents/coder/conversation?conversation=sess-1", http.StatusOK)
	mustHave(t, "earlier partial", part, `data-turn="old1"`, `before the reset`)

	// One the daemon does not know: said in place, the page still works.
	gone := s.get("/web/agents/coder?conversation=nope", http.StatusOK)
	mustHave(t, "unknown", gone, `The conversation could not be read: conversation &#34;nope&#34; not found`, `id="send-form"`, `id="agent-panel"`)
}

// A harness whose record leo cannot read (or any failed read) costs the
// conversation only: the page, its panel and screen still show.
func TestConversationReadFailureKeepsThePage(t *testing.T) {
	s, f := coderSite(t)
	f.fail["GET /agents/coder/conversation"] = api.Errorf(api.CodeUnsupported, "agent coder: harness pi keeps no conversation record leo can read")
	page := s.get("/web/agents/coder", http.StatusOK)
	mustHave(t, "page", page, `<p class="hint conv-error" role="status">The conversation could not be read: agent coder: harness pi keeps no conversation record leo can read</p>`,
		`id="agent-panel"`, `id="screen"`, `id="send-form"`, `data-live="/web/agents/coder/conversation"`)
	part := s.get("/web/agents/coder/conversation", http.StatusOK)
	mustHave(t, "partial", part, "keeps no conversation record")
	f.convs["coder"] = nil
	delete(f.fail, "GET /agents/coder/conversation")
	mustHave(t, "empty", s.get("/web/agents/coder/conversation", http.StatusOK), `<p class="empty">No turns in this conversation yet: send a message below.</p>`)
}

// Every text of a turn — the message, the reply, a tool's name and input,
// the error, the ids — is the harness's or a sender's: it is escaped as
// text, never HTML, control characters blanked, however long.
func TestConversationTextIsEscaped(t *testing.T) {
	s, f := coderSite(t)
	huge := strings.Repeat("<i>x</i>&", 120000) // ~1 MiB
	f.convs["coder"] = []api.Conversation{{Agent: "coder", ConversationID: `c"><script>alert(0)</script>`,
		Earlier: []string{`e"><img src=x onerror=alert(9)>`}, Turns: []api.Turn{{
			ID: `t"><script>alert(1)</script>`, StartedAt: time.Now(),
			User: api.TurnUser{Text: "<script>alert(2)</script>\x1b[31mred\x1b[0m\x00 \x07bell", Sender: `agent <b>x</b>`},
			Tools: []api.ToolCall{
				{Name: `<img src=x onerror=alert(3)>`, Input: `{"command":"</pre><script>alert(4)</script>"}`},
				{Name: "Write", Input: `{"content":"` + strings.Repeat("</details><script>alert(5)</script>", 20) + `"}`},
			},
			Reply:   api.TurnReply{Text: "done </div></li></ol><script>alert(6)</script>\x1b]0;title\x07" + huge},
			Outcome: `error" onmouseover="alert(7)`, Error: "<b>boom</b>\x1b[2J",
		}}}}
	for _, p := range []string{"/web/agents/coder", "/web/agents/coder/conversation"} {
		body := s.get(p, http.StatusOK)
		mustLack(t, p, body, "<script>alert", "<img src=x", "<b>x</b>", "<b>boom</b>", "<i>x</i>", "\x1b", "\x00", "\x07",
			`" onmouseover="alert(7)`, `</pre><script>`, `</details><script>`)
		mustHave(t, p, body,
			`&lt;script&gt;alert(2)&lt;/script&gt; [31mred [0m   bell`,
			`data-sender="agent &lt;b&gt;x&lt;/b&gt;">agent &lt;b&gt;x&lt;/b&gt;</span>`,
			`<code>&lt;img src=x onerror=alert(3)&gt;</code>`,
			`{&#34;command&#34;:&#34;&lt;/pre&gt;&lt;script&gt;alert(4)&lt;/script&gt;&#34;}`,
			`&lt;/details&gt;&lt;script&gt;alert(5)&lt;/script&gt;`,
			`done &lt;/div&gt;&lt;/li&gt;&lt;/ol&gt;&lt;script&gt;alert(6)&lt;/script&gt; ]0;title `,
			`<span class="turn-error">&lt;b&gt;boom&lt;/b&gt; [2J</span>`,
			`data-turn="t&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`,
			`data-conversation="c&#34;&gt;&lt;script&gt;alert(0)&lt;/script&gt;"`)
		// The huge reply is all there, as text.
		if n := strings.Count(body, "&lt;i&gt;x&lt;/i&gt;&amp;"); n != 120000 {
			t.Errorf("%s: the huge reply shows %d of its 120000 pieces", p, n)
		}
		if strings.Count(body, "<li class=") != 1 || strings.Count(body, "</ol>") != 1 {
			t.Errorf("%s: the turn's text changed the page's structure", p)
		}
	}
}
