package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/humantime"
)

// fakeDaemon is a socket handler with the daemon's agent, task, health
// and reload routes over in-memory records. It records every request
// ("METHOD /path body") so tests see what reached the daemon.
type fakeDaemon struct {
	mu      sync.Mutex
	calls   []string
	agents  map[string]api.Agent
	screen  map[string]string
	convs   map[string][]api.Conversation // by agent: the current first, then earlier ones
	tasks   map[string]api.Task
	runs    map[string][]api.TaskRun
	logs    map[string]string // task/run → text
	sent    []string
	fail    map[string]*api.Error // "METHOD /path" → the error to answer
	reload  api.ReloadResult
	started time.Time
}

func newFakeDaemon() *fakeDaemon {
	return &fakeDaemon{
		agents: map[string]api.Agent{}, screen: map[string]string{}, convs: map[string][]api.Conversation{}, tasks: map[string]api.Task{},
		runs: map[string][]api.TaskRun{}, logs: map[string]string{}, fail: map[string]*api.Error{},
		started: time.Now().Add(-90 * time.Minute),
	}
}

func (f *fakeDaemon) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// called reports whether a request "METHOD /path" (any body) reached it.
func (f *fakeDaemon) called(prefix string) bool {
	for _, c := range f.Calls() {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

func (f *fakeDaemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	if e := f.fail[r.Method+" "+r.URL.Path]; e != nil {
		writeError(w, e)
		return
	}
	mux := http.NewServeMux()
	notFound := func(kind, name string) { writeError(w, api.Errorf(api.CodeNotFound, "%s %q not found", kind, name)) }
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, 200, api.Health{Version: "v-daemon", PID: 4242, Started: f.started, Ready: true, Home: "/home/u/.leo",
			Tmux: "tmux 3.4", Agents: len(f.agents), Web: &api.WebState{URL: "http://127.0.0.1:8370", Serving: true},
			Problems: []string{"state/x.json was not understood; left alone"}})
	})
	mux.HandleFunc("GET /agents", func(w http.ResponseWriter, r *http.Request) {
		out := []api.Agent{}
		for _, a := range f.agents {
			out = append(out, a)
		}
		api.WriteJSON(w, 200, out)
	})
	mux.HandleFunc("GET /agents/{name}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := f.agents[r.PathValue("name")]
		if !ok {
			notFound("agent", r.PathValue("name"))
			return
		}
		api.WriteJSON(w, 200, a)
	})
	mux.HandleFunc("DELETE /agents/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		a, ok := f.agents[name]
		if !ok {
			notFound("agent", name)
			return
		}
		// As the daemon answers: a worktree holding work refuses the
		// delete unless forced or kept; the answer says what became of it.
		res := api.DeleteResult{OK: true, Agent: name}
		if wt := a.Worktree; wt != nil {
			q := r.URL.Query()
			force, keep := q.Get("force") == "true", q.Get("keep_worktree") == "true"
			if wt.Dirty && !force && !keep {
				writeError(w, api.Errorf(api.CodeWorktreeDirty, "agent %s not deleted: its worktree %s has uncommitted changes: notes.txt", name, wt.Path))
				return
			}
			res.Worktree = &api.WorktreeRemove{Path: wt.Path, Branch: wt.Branch, Removed: !keep, BranchDeleted: !keep}
			if keep {
				res.Worktree.BranchKept = "--keep-worktree"
			}
			if force && wt.Dirty {
				res.Worktree.DiscardedFiles = []string{"notes.txt"}
			}
		}
		delete(f.agents, name)
		api.WriteJSON(w, 200, res)
	})
	mux.HandleFunc("GET /agents/{name}/logs", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if _, ok := f.agents[name]; !ok {
			notFound("agent", name)
			return
		}
		api.WriteJSON(w, 200, api.Logs{Agent: name, Text: f.screen[name]})
	})
	mux.HandleFunc("GET /agents/{name}/conversation", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if _, ok := f.agents[name]; !ok {
			notFound("agent", name)
			return
		}
		// As the daemon answers: the current conversation or the one
		// named, its newest ?last= turns, the earlier ones' ids.
		all := f.convs[name]
		c := api.Conversation{Agent: name, Turns: []api.Turn{}}
		if len(all) > 0 {
			c = all[0]
		}
		if id := r.URL.Query().Get("conversation"); id != "" {
			found := false
			for _, e := range all {
				if e.ConversationID == id {
					c, found = e, true
				}
			}
			if !found {
				notFound("conversation", id)
				return
			}
		}
		if n, _ := strconv.Atoi(r.URL.Query().Get("last")); n > 0 && len(c.Turns) > n {
			c.Turns = c.Turns[len(c.Turns)-n:]
		}
		api.WriteJSON(w, 200, c)
	})
	mux.HandleFunc("POST /agents/spawn", func(w http.ResponseWriter, r *http.Request) {
		var req api.SpawnRequest
		_ = json.Unmarshal(body, &req)
		name := req.Name
		if name == "" {
			name = req.Template
		}
		if _, ok := f.agents[name]; ok {
			writeError(w, api.Errorf(api.CodeAgentExists, "agent %q already exists", name))
			return
		}
		now := time.Now()
		a := api.Agent{Name: name, Template: req.Template, Harness: "claude", State: api.StateRunning, StartedAt: &now, TmuxSession: "leo-" + name}
		f.agents[name] = a
		api.WriteJSON(w, 200, a)
	})
	mux.HandleFunc("POST /agents/{name}/{verb}", func(w http.ResponseWriter, r *http.Request) {
		name, verb := r.PathValue("name"), r.PathValue("verb")
		a, ok := f.agents[name]
		if !ok {
			notFound("agent", name)
			return
		}
		switch verb {
		case "answer":
			var req api.AnswerRequest
			_ = json.Unmarshal(body, &req)
			line := "answer " + req.Answer + " " + req.Prompt + " by " + r.Header.Get(api.SenderHeader)
			res := api.AnswerResult{Agent: name, Answer: req.Answer, Choice: "Yes", Cleared: true}
			if req.Text != "" {
				line += " text " + req.Text
				res.Choice = "Type something."
			}
			f.sent = append(f.sent, line)
			if a.Attention != nil && a.Attention.Prompt != nil {
				res.Prompt = *a.Attention.Prompt
			}
			api.WriteJSON(w, 200, res)
			return
		case "send":
			var req api.SendRequest
			_ = json.Unmarshal(body, &req)
			f.sent = append(f.sent, req.Message)
			api.WriteJSON(w, 200, api.SendResult{ID: fmt.Sprintf("m%d", len(f.sent)), Agent: name, Delivery: "queued", Queued: 1})
			return
		case "stop":
			a.State = api.StateStopped
		case "start", "restart", "reset":
			a.State = api.StateRunning
		}
		f.agents[name] = a
		api.WriteJSON(w, 200, a)
	})
	mux.HandleFunc("GET /tasks", func(w http.ResponseWriter, r *http.Request) {
		out := []api.Task{}
		for _, t := range f.tasks {
			out = append(out, t)
		}
		api.WriteJSON(w, 200, out)
	})
	mux.HandleFunc("GET /tasks/{name}", func(w http.ResponseWriter, r *http.Request) {
		t, ok := f.tasks[r.PathValue("name")]
		if !ok {
			notFound("task", r.PathValue("name"))
			return
		}
		api.WriteJSON(w, 200, t)
	})
	mux.HandleFunc("GET /tasks/{name}/history", func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, 200, api.TaskHistory{Runs: f.runs[r.PathValue("name")]})
	})
	mux.HandleFunc("GET /tasks/{name}/logs", func(w http.ResponseWriter, r *http.Request) {
		name, run := r.PathValue("name"), r.URL.Query().Get("run")
		text, ok := f.logs[name+"/"+run]
		if !ok {
			writeError(w, api.Errorf(api.CodeNotFound, "task %s has no run %q", name, run))
			return
		}
		api.WriteJSON(w, 200, api.TaskLog{Task: name, Run: run, Text: text})
	})
	mux.HandleFunc("POST /tasks/{name}/{verb}", func(w http.ResponseWriter, r *http.Request) {
		name, verb := r.PathValue("name"), r.PathValue("verb")
		t, ok := f.tasks[name]
		if !ok {
			notFound("task", name)
			return
		}
		switch verb {
		case "run":
			api.WriteJSON(w, 200, api.TaskRun{ID: "20260302T070000.000Z", Task: name, Trigger: api.TriggerManual, Outcome: api.OutcomeRunning})
			return
		case "enable", "disable":
			t.Enabled = verb == "enable"
			f.tasks[name] = t
			api.WriteJSON(w, 200, t)
		}
	})
	mux.HandleFunc("POST /config/reload", func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, 200, f.reload)
	})
	mux.ServeHTTP(w, r)
}

const pagesYAML = "templates:\n  assistant: {}\n  reviewer: {}\n"

// pagesSite is a logged-in site over a fake daemon.
func pagesSite(t *testing.T, yaml string) (*testSite, *fakeDaemon) {
	t.Helper()
	f := newFakeDaemon()
	s := newTestSite(t, yaml, f)
	s.login()
	return s, f
}

// get fetches a page; it must answer want.
func (s *testSite) get(path string, want int) string {
	s.t.Helper()
	status, _, body := s.do("GET", path, nil, nil)
	if status != want {
		s.t.Fatalf("GET %s = %d, want %d:\n%s", path, status, want, body)
	}
	return body
}

// post posts a form and expects the 303 to `to`; it returns the page
// the redirect lands on (which shows the flash).
func (s *testSite) post(path string, form url.Values, to string) string {
	s.t.Helper()
	status, hdr, body := s.postForm(path, form)
	if status != http.StatusSeeOther || hdr.Get("Location") != to {
		s.t.Fatalf("POST %s = %d to %q, want 303 to %q:\n%s", path, status, hdr.Get("Location"), to, body)
	}
	return s.get(to, http.StatusOK)
}

func mustHave(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, body)
		}
	}
}

func mustLack(t *testing.T, what, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s carries %q", what, b)
		}
	}
}

// flashOf is the text of the page's flash ("" when none).
func flashOf(body string) string {
	_, rest, ok := strings.Cut(body, `<div id="flash">`)
	if !ok {
		return ""
	}
	inner, _, _ := strings.Cut(rest, "</div>")
	return inner
}

func TestAgentsPageListsAgentsAndTemplates(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	started := time.Now().Add(-5 * time.Minute)
	f.agents["coder"] = api.Agent{Name: "coder", Template: "assistant", Harness: "codex", Model: "gpt-5.3-codex", State: api.StateRunning,
		Restarts: 2, StartedAt: &started, Queued: 3, LastExit: &api.Exit{At: time.Now().Add(-time.Hour), Signal: "SIGKILL"}}
	f.agents["idle"] = api.Agent{Name: "idle", Harness: "claude", State: api.StateStopped, LastError: "claude not found at boot"}
	body := s.get("/web/agents", http.StatusOK)
	mustHave(t, "agents page", body,
		`<a href="/web/agents/coder">coder</a>`, `<span class="badge">codex</span>`, "gpt-5.3-codex",
		`<td class="opt">2</td>`, "<td class=\"opt\">5m</td>", "signal SIGKILL, 1h ago", `<td class="opt">3</td>`,
		`state-stopped`, "claude not found at boot",
		`<option value="assistant">assistant</option>`, `<option value="reviewer">reviewer</option>`,
		`action="/web/agents/coder/stop"`, `action="/web/agents/idle/start"`, `action="/web/agents/coder/restart"`,
		`data-live="/web/partials/agents"`)
	mustLack(t, "agents page", body, `hx-trigger="every`) // the stream, not a poll
	// The list's buttons work without JavaScript: each form carries the
	// CSRF value.
	if n := strings.Count(body, `name="csrf" value="`+s.csrf()+`"`); n < 5 {
		t.Errorf("%d forms carry the CSRF value, want every one (5+)", n)
	}

	// The fragment fetched on the list's events: the list alone, no
	// layout, no flash taken.
	frag := s.get("/web/partials/agents", http.StatusOK)
	mustHave(t, "agents fragment", frag, `<div id="agents-list"`, `data-agent="coder"`, `data-agent="idle"`)
	mustLack(t, "agents fragment", frag, "<html", "<header")
}

func TestAgentsPageSaysWhenTheDaemonRefuses(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.fail["GET /agents"] = api.Errorf(api.CodeNotReady, "leo daemon is still restoring agents")
	body := s.get("/web/agents", http.StatusOK)
	mustHave(t, "agents page", body, "leo daemon is still restoring agents", `id="spawn-form"`)
	mustHave(t, "agents fragment", s.get("/web/partials/agents", http.StatusOK), "leo daemon is still restoring agents")
}

// Without JavaScript: the spawn form posts, the daemon's route gets the
// request, the browser is sent back (303) and the next page shows the
// flash once.
func TestSpawnPostsToTheDaemonAndFlashes(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	page := s.post("/web/agents/spawn", url.Values{"template": {"reviewer"}, "name": {" helper "}}, "/web/agents")
	if !f.called(`POST /agents/spawn {"template":"reviewer","name":"helper"}`) {
		t.Fatalf("the daemon got %q", f.Calls())
	}
	mustHave(t, "flash", flashOf(page), "flash-ok", "Spawned helper (claude) from template reviewer.")
	mustHave(t, "agents page after spawn", page, `data-agent="helper"`)
	if again := s.get("/web/agents", http.StatusOK); flashOf(again) != "" {
		t.Fatalf("the flash showed twice: %q", flashOf(again))
	}

	// The daemon's refusal is the flash, never a 500.
	f.fail["POST /agents/spawn"] = api.Errorf(api.CodeClaudeNotFound, "%s", claude.NotFoundMessage)
	page = s.post("/web/agents/spawn", url.Values{"template": {"assistant"}}, "/web/agents")
	mustHave(t, "flash", flashOf(page), "flash-error", claude.NotFoundMessage)

	// A name that breaks the rule never becomes a request.
	n := len(f.Calls())
	page = s.post("/web/agents/spawn", url.Values{"template": {"assistant"}, "name": {"../health"}}, "/web/agents")
	mustHave(t, "flash", flashOf(page), "flash-error", "invalid agent name")
	for _, c := range f.Calls()[n:] {
		if strings.HasPrefix(c, "POST") {
			t.Fatalf("a bad name reached the daemon: %q", c)
		}
	}
	page = s.post("/web/agents/spawn", url.Values{"template": {""}}, "/web/agents")
	mustHave(t, "flash", flashOf(page), "choose a template")
}

func TestSpawnNeedsTheCSRFValue(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	status, _, _ := s.do("POST", "/web/agents/spawn", strings.NewReader("template=assistant"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if status != http.StatusForbidden || f.called("POST") {
		t.Fatalf("spawn without CSRF = %d, daemon got %q", status, f.Calls())
	}
}

func TestAgentButtonsReachTheDaemonAndReturn(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateRunning}
	for _, c := range []struct{ verb, back, to, state string }{
		{"stop", "/web/agents", "/web/agents", "stopped"},
		{"start", "", "/web/agents/coder", "running"},
		{"restart", "/web/agents/coder", "/web/agents/coder", "running"},
		{"reset", "//evil.example/web/", "/web/agents/coder", "running"},
		{"stop", "https://evil.example/", "/web/agents/coder", "stopped"},
	} {
		page := s.post("/web/agents/coder/"+c.verb, url.Values{"back": {c.back}, "confirm": {"yes"}}, c.to)
		if !f.called("POST /agents/coder/" + c.verb) {
			t.Fatalf("%s did not reach the daemon: %q", c.verb, f.Calls())
		}
		mustHave(t, c.verb+" flash", flashOf(page), "flash-ok", "coder: now "+c.state)
	}
	n := len(f.Calls())
	status, _, _ := s.postForm("/web/agents/coder/kill", nil)
	if status != http.StatusNotFound || len(f.Calls()) != n {
		t.Fatalf("an unknown verb = %d and reached the daemon: %q", status, f.Calls()[n:])
	}
	if status, hdr, _ := s.postForm("/web/agents/ghost/stop", nil); status != http.StatusSeeOther || hdr.Get("Location") != "/web/agents/ghost" {
		t.Fatalf("stop of a missing agent = %d to %q", status, hdr.Get("Location"))
	}
	mustHave(t, "flash", flashOf(s.get("/web/agents/ghost", http.StatusNotFound)), "flash-error", `agent &#34;ghost&#34; not found`)
}

// The message goes to the daemon's send exactly as typed: escape
// sequences, a paste terminator, newlines and all (the daemon's send is
// the one edge that makes text safe).
func TestSendPassesTheMessageAsTyped(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateRunning}
	msg := "hi\x1b[201~\r\nrm -rf /\x03 <b>bold</b> " + strings.Repeat("é", 5000)
	page := s.post("/web/agents/coder/send", url.Values{"message": {msg}}, "/web/agents/coder")
	f.mu.Lock()
	sent := append([]string(nil), f.sent...)
	f.mu.Unlock()
	if len(sent) != 1 || sent[0] != msg {
		t.Fatalf("the daemon got %q", sent)
	}
	mustHave(t, "flash", flashOf(page), "flash-ok", "Message m1 to coder: queued.")
	page = s.post("/web/agents/coder/send", url.Values{"message": {"  \n"}}, "/web/agents/coder")
	mustHave(t, "flash", flashOf(page), "flash-error", "the message is empty")
	if len(f.sent) != 1 {
		t.Fatal("an empty message was sent")
	}
	// Invalid UTF-8 is refused, not turned into U+FFFD on its way to the
	// daemon (issue 15).
	page = s.post("/web/agents/coder/send", url.Values{"message": {"a\xffb"}}, "/web/agents/coder")
	mustHave(t, "flash", flashOf(page), "flash-error", "invalid UTF-8 byte 0xff")
	if len(f.sent) != 1 {
		t.Fatalf("invalid UTF-8 was sent: %q", f.sent)
	}
}

func TestAgentPageShowsDetailsAndTheScreen(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Template: "assistant", Harness: "opencode", State: api.StateRunning, Workspace: "/w/coder",
		SessionID: "ses_1", TmuxSession: "leo-coder", EnvKeys: []string{"API_KEY"},
		Deliveries: []api.Delivery{{ID: "m9", Status: "failed", At: time.Now(), Error: "the pane never got ready"}}}
	f.screen["coder"] = "echo: hello <script>alert(1)</script>\x00 done"
	body := s.get("/web/agents/coder", http.StatusOK)
	mustHave(t, "agent page", body, `<span class="badge">opencode</span>`, "/w/coder", "ses_1", "leo-coder", "<code>API_KEY</code>",
		"the pane never got ready", `id="send-form"`, `<textarea id="message" name="message"`,
		`href="/web/agents/coder/confirm/reset"`, `hx-get="/web/agents/coder/screen" hx-trigger="every 2s"`,
		"echo: hello &lt;script&gt;alert(1)&lt;/script&gt;")
	mustLack(t, "agent page", body, "<script>alert", "\x00")
	if !f.called("GET /agents/coder/logs?lines=60") {
		t.Fatalf("the screen was not read from the pane: %q", f.Calls())
	}

	// The screen fragment htmx refreshes.
	frag := s.get("/web/agents/coder/screen", http.StatusOK)
	if !strings.HasPrefix(frag, `<pre class="screen" id="screen"`) || !strings.Contains(frag, "echo: hello &lt;script&gt;") {
		t.Fatalf("screen fragment:\n%s", frag)
	}

	// A missing agent is the layout with the daemon's message, 404.
	body = s.get("/web/agents/ghost", http.StatusNotFound)
	mustHave(t, "missing agent", body, `agent &#34;ghost&#34; not found`, "<header")
	mustLack(t, "missing agent", body, `id="send-form"`)
	mustHave(t, "missing agent's screen", s.get("/web/agents/ghost/screen", http.StatusOK), "the screen could not be read")
}

// htmx posts the same forms with HX-Request: the answer is the same 303
// (the browser's XHR follows it), and the page it lands on holds the
// elements the forms hx-select (#agents-list, #agent-panel, #send-form,
// #task-body) and the #flash they swap out of band.
func TestHTMXPostsLandOnPagesHoldingTheirTargets(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateRunning}
	f.tasks["nightly"] = api.Task{Name: "nightly", Runtime: "oneshot", Harness: "claude", Enabled: true}
	hx := map[string]string{"HX-Request": "true", "Content-Type": "application/x-www-form-urlencoded", csrfHeader: s.csrf()}
	status, hdr, _ := s.do("POST", "/web/agents/coder/stop", strings.NewReader("back=%2Fweb%2Fagents"), hx)
	if status != http.StatusSeeOther || hdr.Get("Location") != "/web/agents" {
		t.Fatalf("htmx stop = %d → %q", status, hdr.Get("Location"))
	}
	status, _, page := s.do("GET", "/web/agents", nil, map[string]string{"HX-Request": "true"})
	if status != 200 {
		t.Fatalf("GET after the htmx post = %d", status)
	}
	mustHave(t, "page after htmx stop", page, `<div id="agents-list"`, `<div id="flash"><p class="flash flash-ok"`, "Stop coder: now stopped.",
		`hx-target="#agents-list" hx-select="#agents-list" hx-swap="outerHTML" hx-select-oob="#flash"`)
	agent := s.get("/web/agents/coder", http.StatusOK)
	mustHave(t, "agent page", agent, `<div id="agent-panel" `, `hx-target="#agent-panel"`, `hx-select-oob="#flash,#agent-panel"`, `hx-target="#send-form" hx-select="#send-form"`)
	task := s.get("/web/tasks/nightly", http.StatusOK)
	mustHave(t, "task page", task, `<div id="task-body">`, `hx-target="#task-body" hx-select="#task-body"`)
	// The CSRF value htmx sends as a header is in the page (the body's
	// hx-headers), and a logged-out fragment asks htmx to go to the login.
	mustHave(t, "layout", page, `hx-headers='{"X-CSRF-Token": "`+s.csrf()+`"}'`)
	s.client.Jar = nil
	status, hdr, _ = s.do("GET", "/web/partials/agents", nil, map[string]string{"HX-Request": "true"})
	if status != http.StatusUnauthorized || hdr.Get("HX-Redirect") != "/login" {
		t.Fatalf("logged-out fragment = %d %q", status, hdr.Get("HX-Redirect"))
	}
}

func TestTasksPageAndActions(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	next := time.Date(2031, 5, 6, 7, 0, 0, 0, time.UTC)
	f.tasks["nightly"] = api.Task{Name: "nightly", Runtime: "oneshot", Harness: "codex", HarnessInherited: true, Schedule: "0 3 * * *",
		ScheduleWords: "every day at 03:00", Timezone: "Europe/Berlin", Enabled: true, NextRun: &next,
		LastRun: &api.TaskRun{Outcome: api.OutcomeFailed, Reason: api.ReasonTimeout, Start: time.Now()}}
	f.tasks["watch"] = api.Task{Name: "watch", Runtime: "persistent", Harness: "claude", Agent: "watcher", Timezone: "Local"}
	body := s.get("/web/tasks", http.StatusOK)
	mustHave(t, "tasks page", body, `<a href="/web/tasks/nightly">nightly</a>`, `<span class="badge inherited" title="inherited from defaults.harness">codex</span>`,
		`<span class="badge">claude</span>`, `title="0 3 * * *">every day at 03:00`, "Europe/Berlin", next.Local().Format("2006-01-02 15:04"),
		`<span class="outcome-failed">failed</span> <span class="hint">(timeout)</span>`, "manual only", "persistent → watcher",
		`action="/web/tasks/nightly/run"`, `action="/web/tasks/nightly/disable"`, `action="/web/tasks/watch/enable"`)

	page := s.post("/web/tasks/nightly/run", url.Values{"back": {"/web/tasks"}}, "/web/tasks")
	mustHave(t, "run flash", flashOf(page), "flash-ok", "Started a run of nightly (20260302T070000.000Z).")
	if !f.called(`POST /tasks/nightly/run {}`) {
		t.Fatalf("run now did not reach the daemon without waiting: %q", f.Calls())
	}
	page = s.post("/web/tasks/nightly/disable", nil, "/web/tasks/nightly")
	mustHave(t, "disable flash", flashOf(page), "Task nightly disabled.")
	mustHave(t, "task page after disable", page, `action="/web/tasks/nightly/enable"`)
	page = s.post("/web/tasks/nightly/enable", nil, "/web/tasks/nightly")
	mustHave(t, "enable flash", flashOf(page), "Task nightly enabled.")

	f.fail["POST /tasks/nightly/run"] = api.Errorf(api.CodeTaskRunning, "task nightly is running (started 07:00)")
	page = s.post("/web/tasks/nightly/run", nil, "/web/tasks/nightly")
	mustHave(t, "run refused", flashOf(page), "flash-error", "task nightly is running (started 07:00)")
	if status, _, _ := s.postForm("/web/tasks/nightly/delete", nil); status != http.StatusNotFound {
		t.Fatalf("unknown task verb = %d", status)
	}
}

func TestTaskPageShowsHistoryAndRunLogs(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.tasks["nightly"] = api.Task{Name: "nightly", Runtime: "oneshot", Harness: "claude", Timezone: "UTC", Enabled: true}
	t0 := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	code := 1
	cost := 0.0123
	f.runs["nightly"] = []api.TaskRun{
		{ID: "20260301T030000.000Z", Task: "nightly", Trigger: api.TriggerSchedule, Start: t0, End: t0.Add(83 * time.Second), Outcome: api.OutcomeSucceeded,
			Usage: &api.Usage{InputTokens: 1200, OutputTokens: 340}, CostUSD: &cost},
		{ID: "20260302T030000.000Z", Task: "nightly", Trigger: api.TriggerManual, Start: t0.Add(24 * time.Hour), End: t0.Add(24*time.Hour + 2*time.Second),
			Outcome: api.OutcomeFailed, Reason: api.ReasonExitStatus, Message: "claude exited with status 1", ExitCode: &code},
	}
	f.logs["nightly/20260301T030000.000Z"] = "the reply\n<img src=x onerror=alert(1)>"
	body := s.get("/web/tasks/nightly", http.StatusOK)
	mustHave(t, "task page", body, "1200 in / 340 out, $0.0123", "1m23s", "claude exited with status 1", "(exit_status)",
		`href="/web/tasks/nightly/runs/20260301T030000.000Z"`)
	// Oldest first, as leo task history lists them.
	if strings.Index(body, `data-run="20260302T030000.000Z"`) < strings.Index(body, `data-run="20260301T030000.000Z"`) {
		t.Fatal("history is not oldest first")
	}
	// Times say their zone.
	mustHave(t, "task page", body, humantime.Stamp(t0))
	if !strings.Contains(humantime.Stamp(t0), " ") || strings.HasSuffix(humantime.Stamp(t0), ":00") {
		t.Fatalf("stamp %q has no zone", humantime.Stamp(t0))
	}
	if !f.called("GET /tasks/nightly/history?limit=50") {
		t.Fatalf("history not asked for: %q", f.Calls())
	}
	log := s.get("/web/tasks/nightly/runs/20260301T030000.000Z", http.StatusOK)
	mustHave(t, "run log", log, `<pre class="log" id="run-log">the reply`+"\n"+`&lt;img src=x onerror=alert(1)&gt;</pre>`)
	// The raw stream is folded below the outcome.
	if i, j := strings.Index(log, `id="run-outcome"`), strings.Index(log, `<details id="run-raw">`); i < 0 || j < i || j > strings.Index(log, `id="run-log"`) {
		t.Fatalf("the raw log is not folded below the outcome:\n%s", log)
	}
	mustHave(t, "missing run", s.get("/web/tasks/nightly/runs/nope", http.StatusNotFound), `task nightly has no run &#34;nope&#34;`)
	mustHave(t, "missing task", s.get("/web/tasks/ghost", http.StatusNotFound), `task &#34;ghost&#34; not found`)
}

func TestServicePageShowsHealthAndTheLogTail(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	var log strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&log, "time=x level=INFO msg=line-%04d\n", i)
	}
	if err := os.WriteFile(s.srv.opts.LogPath, []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	body := s.get("/web/service", http.StatusOK)
	mustHave(t, "service page", body, "v-daemon", "4242", "1h (since", "tmux 3.4", "not found", claude.NotFoundMessage,
		"serving at <code>http://127.0.0.1:8370</code>", "state/x.json was not understood", `id="reload-form"`,
		"msg=line-0999</pre>", "msg=line-0800\n")
	mustLack(t, "service page", body, "msg=line-0799")

	f.reload = api.ReloadResult{OK: true, Warnings: []string{"templates.x: model unknown"}}
	page := s.post("/web/service/reload", nil, "/web/service")
	mustHave(t, "reload flash", flashOf(page), "flash-ok", "Reloaded leo.yaml.", "templates.x: model unknown")
	f.fail["POST /config/reload"] = api.Errorf(api.CodeConfigError, "leo.yaml: templates.x.harness: unknown harness \"nope\"")
	page = s.post("/web/service/reload", nil, "/web/service")
	mustHave(t, "reload refused", flashOf(page), "flash-error", "templates.x.harness: unknown harness")

	// No log file yet: said, not an error page.
	if err := os.Remove(s.srv.opts.LogPath); err != nil {
		t.Fatal(err)
	}
	mustHave(t, "service page without a log", s.get("/web/service", http.StatusOK), `id="log-error"`, "--supervised")
	// The daemon down: the page still renders, with why.
	f.fail["GET /health"] = api.Errorf(api.CodeInternal, "health failed")
	mustHave(t, "service page, health failing", s.get("/web/service", http.StatusOK), "health failed", `id="reload-form"`)
}

// The tail reads at most maxBytes from the end, whatever the file's size:
// a huge log is not read whole.
func TestTailFileReadsOnlyTheEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "service.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A 4 GiB sparse hole, then three lines: reading it whole would take
	// seconds and gigabytes.
	if _, err := f.WriteAt([]byte("partial line\nlast-but-one\nlast\n"), 4<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	got, err := tailFile(p, 2, 20)
	if err != nil || got != "last-but-one\nlast" {
		t.Fatalf("tail = %q, %v", got, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("tail of a 4 GiB file took %v", d)
	}
	if got, _ := tailFile(p, 10, 26); got != "last-but-one\nlast" {
		t.Fatalf("a line cut by the byte bound must be dropped: %q", got)
	}
	if _, err := tailFile(t.TempDir(), 2, 20); err == nil {
		t.Fatal("a directory tailed")
	}
}

// Nothing rendered carries an env value or the token: every page and
// fragment, with agents and tasks whose config holds a marked secret.
func TestNoPageCarriesTheTokenOrEnvValues(t *testing.T) {
	const marker = "s3cr3t-ENV-VALUE-9f1c"
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := "templates:\n  x:\n    env:\n      API_KEY: " + marker + "\n      OTHER: \"" + marker + "-2\"\n" +
		"tasks:\n  nightly:\n    schedule: \"0 3 * * *\"\n    workspace: " + ws + "\n    prompt_file: p.md\n    env:\n      TASK_KEY: " + marker + "\n"
	s, f := pagesSite(t, yaml)
	f.agents["x"] = api.Agent{Name: "x", Template: "x", Harness: "claude", State: api.StateRunning, EnvKeys: []string{"API_KEY", "OTHER"}}
	f.screen["x"] = "screen"
	f.tasks["nightly"] = api.Task{Name: "nightly", Runtime: "oneshot", Harness: "claude", Enabled: true}
	f.runs["nightly"] = []api.TaskRun{{ID: "r1", Task: "nightly", Outcome: api.OutcomeSucceeded}}
	f.logs["nightly/r1"] = "out"
	check := func(what, body string) {
		t.Helper()
		mustLack(t, what, body, marker, s.token)
	}
	for _, p := range []string{"/web/agents", "/web/partials/agents", "/web/agents/x", "/web/agents/x/screen", "/web/tasks",
		"/web/tasks/nightly", "/web/tasks/nightly/runs/r1", "/web/service", "/web/agents/ghost", "/login"} {
		_, _, body := s.do("GET", p, nil, nil)
		check(p, body)
	}
	for _, p := range []string{"/web/agents/spawn", "/web/agents/x/stop", "/web/agents/x/send", "/web/tasks/nightly/run", "/web/service/reload"} {
		status, hdr, body := s.postForm(p, url.Values{"template": {"x"}, "name": {"y"}, "message": {"m"}})
		check(p, body+fmt.Sprint(hdr))
		if status == http.StatusSeeOther {
			_, _, page := s.do("GET", hdr.Get("Location"), nil, nil)
			check(p+" → "+hdr.Get("Location"), page)
		}
	}
}

// Under Referrer-Policy no-referrer a browser posts forms with "Origin:
// null", which the guard refuses: every form of the UI would fail (the
// browser test found it). same-origin keeps the real Origin on our own
// posts.
func TestReferrerPolicyKeepsTheOriginOfFormPosts(t *testing.T) {
	s, _ := pagesSite(t, pagesYAML)
	_, hdr, _ := s.do("GET", "/login", nil, nil)
	if got := hdr.Get("Referrer-Policy"); got != "same-origin" {
		t.Fatalf("Referrer-Policy = %q, want same-origin", got)
	}
}

// Recent messages say what each message was, who sent it, what became
// of it and why; a compaction is labelled, never shown as a message.
func TestAgentPageRecentMessagesSayWhatAndWho(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	at := time.Now().Add(-3 * time.Minute)
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateRunning, Deliveries: []api.Delivery{
		{ID: "m1", Status: "delivered", At: at, FirstLine: "fix the <b>build</b>"},
		{ID: "m2", Status: "failed", At: at, From: "agent reviewer", FirstLine: "looks good", Error: "the pane never got ready"},
		{ID: "c1", Status: "delivered", At: at, Kind: api.DeliveryCompact},
	}}
	body := s.get("/web/agents/coder", http.StatusOK)
	mustHave(t, "recent messages", body, "fix the &lt;b&gt;build&lt;/b&gt;", "you (leo agent send or the web)",
		"looks good", "<td>agent reviewer</td>", "the pane never got ready", `<span class="badge">compaction</span>`,
		"3m ago", humantime.Stamp(at))
	mustLack(t, "recent messages", body, "<b>build")
}

// The agent page's details are fetched again on the agent's events (their
// own partial), which follows the agent's state; a deleted agent answers
// 286.
func TestAgentPanelRefreshesWithTheState(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateRunning}
	mustHave(t, "agent page", s.get("/web/agents/coder", http.StatusOK), `data-live="/web/agents/coder/panel"`, `data-live-agent="coder"`)
	panel := s.get("/web/agents/coder/panel", http.StatusOK)
	mustHave(t, "panel", panel, `<div id="agent-panel"`, "state-running", `data-action="stop"`, `name="csrf" value="`+s.csrf()+`"`)
	mustLack(t, "panel", panel, "<html", "<header")
	f.mu.Lock()
	a := f.agents["coder"]
	a.State, a.LastError = api.StateStopped, "claude exited"
	f.agents["coder"] = a
	f.mu.Unlock()
	panel = s.get("/web/agents/coder/panel", http.StatusOK)
	mustHave(t, "panel after a stop", panel, "state-stopped", "claude exited", `data-action="start"`)
	f.mu.Lock()
	delete(f.agents, "coder")
	f.mu.Unlock()
	mustHave(t, "panel of a gone agent", s.get("/web/agents/coder/panel", 286), "not found")
}

// Only the actions that apply: no start on a running agent, no stop,
// restart or reset on a stopped one; delete only when stopped.
func TestAgentActionsFollowTheState(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["up"] = api.Agent{Name: "up", Harness: "claude", State: api.StateRunning}
	f.agents["down"] = api.Agent{Name: "down", Harness: "claude", State: api.StateStopped}
	f.agents["booting"] = api.Agent{Name: "booting", Harness: "claude", State: api.StateStarting}
	for _, c := range []struct {
		name       string
		have, lack []string
	}{
		{"up", []string{`data-action="stop"`, `data-action="restart"`, `data-action="reset"`}, []string{`data-action="start"`, `data-action="delete"`}},
		{"down", []string{`data-action="start"`, `data-action="delete"`}, []string{`data-action="stop"`, `data-action="restart"`, `data-action="reset"`}},
		{"booting", []string{`data-action="stop"`}, []string{`data-action="start"`, `data-action="restart"`, `data-action="reset"`, `data-action="delete"`}},
	} {
		body := s.get("/web/agents/"+c.name+"/panel", http.StatusOK)
		mustHave(t, c.name, body, c.have...)
		mustLack(t, c.name, body, c.lack...)
	}
}

// Reset and delete discard something: each goes through a page saying
// what, and a post without confirm=yes reaches nothing.
func TestResetAndDeleteAreConfirmed(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["up"] = api.Agent{Name: "up", Harness: "claude", State: api.StateRunning}
	f.agents["down"] = api.Agent{Name: "down", Harness: "claude", State: api.StateStopped}

	page := s.get("/web/agents/up/confirm/reset", http.StatusOK)
	mustHave(t, "reset confirmation", page, "discards the agent&#39;s conversation", `action="/web/agents/up/reset"`,
		`name="confirm" value="yes"`, `name="csrf" value="`+s.csrf()+`"`)
	page = s.post("/web/agents/up/reset", url.Values{}, "/web/agents/up/confirm/reset")
	mustHave(t, "unconfirmed reset", flashOf(page), "flash-error", "not confirmed")
	if f.called("POST /agents/up/reset") {
		t.Fatal("an unconfirmed reset reached the daemon")
	}
	page = s.post("/web/agents/up/reset", url.Values{"confirm": {"yes"}}, "/web/agents/up")
	mustHave(t, "reset", flashOf(page), "flash-ok", "Reset up: now running.")

	// Delete: refused while running, done when stopped.
	page = s.post("/web/agents/up/delete", url.Values{"confirm": {"yes"}}, "/web/agents/up")
	mustHave(t, "delete of a running agent", flashOf(page), "flash-error", "it is running; stop it first")
	if f.called("DELETE") {
		t.Fatal("a running agent was deleted")
	}
	mustHave(t, "delete confirmation", s.get("/web/agents/down/confirm/delete", http.StatusOK), "Its workspace and files stay")
	s.post("/web/agents/down/delete", url.Values{}, "/web/agents/down/confirm/delete")
	if f.called("DELETE") {
		t.Fatal("an unconfirmed delete reached the daemon")
	}
	page = s.post("/web/agents/down/delete", url.Values{"confirm": {"yes"}}, "/web/agents")
	mustHave(t, "delete", flashOf(page), "flash-ok", "Deleted down.")
	if !f.called("DELETE /agents/down") {
		t.Fatalf("the daemon got %q", f.Calls())
	}
	s.get("/web/agents/up/confirm/start", http.StatusNotFound)
	// Without the CSRF value nothing is deleted.
	f.agents["down"] = api.Agent{Name: "down", Harness: "claude", State: api.StateStopped}
	n := len(f.Calls())
	status, _, _ := s.do("POST", "/web/agents/down/delete", strings.NewReader("confirm=yes"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if status != http.StatusForbidden || len(f.Calls()) != n {
		t.Fatalf("delete without CSRF = %d, daemon got %q", status, f.Calls()[n:])
	}
}

// A worktree agent from the web: the spawn form asks for its own
// worktree, branch and base; the delete page says what the worktree
// holds, a delete that would lose work is refused in the daemon's words,
// and keep or force do what they say and the flash says what became of
// the worktree and branch.
func TestWorktreeAgentsFromTheWeb(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	page := s.get("/web/agents", http.StatusOK)
	mustHave(t, "spawn form", page, `name="worktree" value="yes"`, `name="branch"`, `name="base"`)
	s.post("/web/agents/spawn", url.Values{"template": {"reviewer"}, "worktree": {"yes"}, "branch": {" feature/x "}, "base": {"main"}}, "/web/agents")
	if !f.called(`POST /agents/spawn {"template":"reviewer","worktree":true,"branch":"feature/x","base":"main"}`) {
		t.Fatalf("the daemon got %q", f.Calls())
	}

	wt := &api.Worktree{Repo: "/src/app", Path: "/wt/coder", Branch: "leo/coder", Base: "main", Dirty: true, Ahead: 1}
	f.agents["coder"] = api.Agent{Name: "coder", Harness: "claude", State: api.StateStopped, Worktree: wt}
	page = s.get("/web/agents/coder/confirm/delete", http.StatusOK)
	mustHave(t, "delete confirmation", page, `id="confirm-worktree"`, "<code>/wt/coder</code>", "uncommitted changes, 1 commit(s) on neither the base nor a remote",
		`name="worktree" value="keep"`, `name="worktree" value="force"`)
	page = s.post("/web/agents/coder/delete", url.Values{"confirm": {"yes"}}, "/web/agents/coder")
	mustHave(t, "delete of a dirty worktree", flashOf(page), "flash-error", "uncommitted changes: notes.txt")
	if _, ok := f.agents["coder"]; !ok {
		t.Fatal("the refused delete deleted the agent")
	}
	page = s.post("/web/agents/coder/delete", url.Values{"confirm": {"yes"}, "worktree": {"force"}}, "/web/agents")
	mustHave(t, "forced delete", flashOf(page), "flash-ok", "Deleted coder. Removed worktree /wt/coder; discarded 1 uncommitted change(s): notes.txt; deleted branch leo/coder.")
	if !f.called("DELETE /agents/coder?force=true") {
		t.Fatalf("the daemon got %q", f.Calls())
	}

	f.agents["kept"] = api.Agent{Name: "kept", Harness: "claude", State: api.StateStopped, Worktree: &api.Worktree{Path: "/wt/kept", Branch: "leo/kept", Dirty: true}}
	page = s.post("/web/agents/kept/delete", url.Values{"confirm": {"yes"}, "worktree": {"keep"}}, "/web/agents")
	mustHave(t, "kept delete", flashOf(page), "flash-ok", "Deleted kept. Kept worktree /wt/kept and branch leo/kept.")
	if !f.called("DELETE /agents/kept?keep_worktree=true") {
		t.Fatalf("the daemon got %q", f.Calls())
	}
	// A plain agent's delete page offers no worktree choices.
	f.agents["plain"] = api.Agent{Name: "plain", Harness: "claude", State: api.StateStopped}
	mustLack(t, "plain delete confirmation", s.get("/web/agents/plain/confirm/delete", http.StatusOK), `name="worktree"`)
}

// The run log leads with the prompt, the reply and the outcome.
func TestRunLogShowsPromptReplyAndOutcomeFirst(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("Summarise <today>."), 0o600); err != nil {
		t.Fatal(err)
	}
	s, f := pagesSite(t, pagesYAML+"tasks:\n  nightly:\n    schedule: \"0 3 * * *\"\n    prompt_file: p.md\n    workspace: "+ws+"\n")
	t0 := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	f.tasks["nightly"] = api.Task{Name: "nightly", Runtime: "oneshot", Harness: "claude", Timezone: "UTC", Enabled: true}
	f.runs["nightly"] = []api.TaskRun{{ID: "r1", Task: "nightly", Trigger: api.TriggerSchedule, Start: t0, End: t0.Add(1500 * time.Millisecond),
		Outcome: api.OutcomeFailed, Reason: api.ReasonExitStatus, Message: "claude exited with status 1", Reply: "All quiet."}}
	f.logs["nightly/r1"] = `{"type":"system","subtype":"init"}` + "\n" + `{"type":"result","result":"All quiet."}`
	body := s.get("/web/tasks/nightly/runs/r1", http.StatusOK)
	mustHave(t, "run log", body, `<pre class="log" id="run-prompt">Summarise &lt;today&gt;.</pre>`, `<pre class="log" id="run-reply">All quiet.</pre>`,
		"claude exited with status 1", "(exit_status)", "<dd>1.5s</dd>", humantime.Stamp(t0), `<details id="run-raw">`)
	if strings.Index(body, "run-prompt") > strings.Index(body, "run-raw") || strings.Index(body, "run-reply") > strings.Index(body, "run-raw") {
		t.Fatal("the raw stream comes before the prompt and reply")
	}
}

// A worktree agent's page shows its branch, whether it has uncommitted
// changes, and how many commits nothing else has.
func TestAgentPageShowsTheWorktree(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.agents["coder"] = api.Agent{Name: "coder", Template: "assistant", Harness: "claude", State: api.StateRunning, Workspace: "/wt/coder",
		TmuxSession: "leo-coder", Worktree: &api.Worktree{Repo: "/src/app", Path: "/wt/coder", Branch: "leo/coder", Base: "main", Dirty: true, Ahead: 2}}
	body := s.get("/web/agents/coder", http.StatusOK)
	mustHave(t, "agent page", body, `<dt>Branch</dt><dd id="agent-worktree"><code>leo/coder</code>`, "from <code>main</code>",
		"uncommitted changes", "2 commit(s) on neither the base nor a remote", "worktree <code>/wt/coder</code> of <code>/src/app</code>")
	f.agents["plain"] = api.Agent{Name: "plain", Template: "assistant", Harness: "claude", State: api.StateRunning, TmuxSession: "leo-plain"}
	mustLack(t, "agent page without a worktree", s.get("/web/agents/plain", http.StatusOK), `id="agent-worktree"`)
}

// A limited last run shows its outcome and when the limit resets.
func TestTasksPageShowsALimitedRun(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	reset := time.Date(2031, 5, 6, 7, 0, 0, 0, time.UTC)
	f.tasks["nightly"] = api.Task{Name: "nightly", Runtime: "oneshot", Harness: "codex", Timezone: "Local", Enabled: true,
		LastRun: &api.TaskRun{Outcome: api.OutcomeLimited, Reason: api.ReasonUsageLimit, ResetsAt: &reset, Start: time.Now()}}
	body := s.get("/web/tasks", http.StatusOK)
	mustHave(t, "tasks page", body, `<span class="outcome-limited">limited</span> <span class="hint">(usage_limit)</span> <span class="hint resets-at">resets `+reset.Local().Format("2006-01-02 15:04"))
}
