package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/blackpaw-studio/leo/internal/api"
)

// notificationSpy stands in for the browser's Notification API: it
// records each notification ("title|body") in window.leoSeen and each
// permission request in window.leoAsked, and grants what is asked. The
// page's script reaches the API through the global at the time of use, so
// the spy sees exactly what a person would be shown.
const notificationSpy = `(() => {
	window.leoSeen = [];
	window.leoAsked = 0;
	let permission = "default";
	function Spy(title, opts) {
		window.leoSeen.push(title + "|" + ((opts && opts.body) || ""));
		this.close = function () {};
	}
	Object.defineProperty(Spy, "permission", { get: () => permission });
	Spy.requestPermission = function (cb) {
		window.leoAsked++;
		permission = "granted";
		if (cb) cb(permission);
		return Promise.resolve(permission);
	};
	window.Notification = Spy;
})(); undefined`

// signal posts a claude hook payload for agent through the daemon's hook
// route, as leo's hook command does when claude runs it.
func (s *site) signal(t *testing.T, agent string, payload map[string]any) {
	t.Helper()
	a, err := s.w.Client.Get(context.Background(), agent)
	if err != nil {
		t.Fatal(err)
	}
	payload["session_id"] = a.SessionID
	raw, _ := json.Marshal(payload)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.w.Client.TurnEnd(ctx, api.TurnEndReport{Agent: agent, Harness: "claude", Payload: raw}); err != nil {
		t.Fatalf("hook report for %s: %v", agent, err)
	}
}

func permissionRequest(command string) map[string]any {
	return map[string]any{"hook_event_name": "PermissionRequest", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command, "description": "make a file"}}
}

func toolRan() map[string]any {
	return map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "touch x"}, "tool_response": map[string]any{"stdout": ""}}
}

// firstRow is the agent in the Agents page's first row.
const firstRow = `(document.querySelector("#agents-list tbody tr[data-agent]") || {dataset: {}}).dataset.agent`

// Issue 18 in a real browser: an agent that needs input shows at the top
// of the Agents page with its prompt — live, from the event stream,
// without a reload — and goes back when it is answered; a notification
// shows only once a person clicked Notify me; the agent's page shows the
// attention too.
func TestBrowserNeedsInputLive(t *testing.T) {
	s := startSite(t)
	shots := artifacts(t)
	ctx := context.Background()
	// "aaa" sorts first by name: only attention can put "asker" above it.
	for _, name := range []string{"aaa", "asker"} {
		if _, err := s.w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	s.w.WaitAll(60*time.Second, "aaa and asker running and idle", func(as []api.Agent) bool {
		n := 0
		for _, a := range as {
			if a.State == api.StateRunning && a.Attention != nil && a.Attention.State == api.AttentionIdle {
				n++
			}
		}
		return n == 2
	})

	b := newBrowser(t)
	b.do("open the agents page", chromedp.Navigate(s.base+"/web/agents"))
	b.login(s, "/web/agents")
	b.waitJS("the stream open", `document.documentElement.dataset.stream === "open"`, 30*time.Second)
	b.waitJS("aaa first, both idle", firstRow+` === "aaa" && document.querySelector('tr[data-agent="asker"]').dataset.attention === "idle"`, 10*time.Second)
	b.do("spy on notifications, mark the page", chromedp.Evaluate[chromedp.Void](notificationSpy+"; window.leoNoReload = true; undefined"))
	b.waitJS("the Notify me button", `!document.querySelector("#notify-toggle").hidden && document.querySelector("#notify-toggle").innerText === "Notify me"`, 5*time.Second)

	// Before any click: an agent that needs input shows, and nothing is
	// asked or notified.
	s.signal(t, "asker", permissionRequest("touch first.txt"))
	b.waitJS("asker at the top with its prompt, live",
		firstRow+` === "asker" && document.querySelector('tr[data-agent="asker"]').dataset.attention === "needs_input" && (document.querySelector('tr[data-prompt-for="asker"] .prompt-text') || {innerText: ""}).innerText.includes("touch first.txt")`, 20*time.Second)
	if asked, seen := b.evalInt("window.leoAsked"), b.evalInt("window.leoSeen.length"); asked != 0 || seen != 0 {
		t.Fatalf("without a click: %d permission requests, %d notifications", asked, seen)
	}
	if att := b.text(`tr[data-agent="asker"] .attention`); !strings.Contains(att, "needs input") {
		t.Fatalf("asker's attention cell: %q", att)
	}
	s.signal(t, "asker", toolRan())
	b.waitJS("asker back below aaa once answered", firstRow+` === "aaa" && !document.querySelector('tr[data-prompt-for="asker"]') && document.querySelector('tr[data-agent="asker"]').dataset.attention !== "needs_input"`, 20*time.Second)

	// The click asks the browser, once; then entering needs_input notifies.
	b.do("click Notify me", chromedp.Click(chromedp.CSS("#notify-toggle")))
	b.waitJS("notifications on", `document.querySelector("#notify-toggle").innerText === "Notifications on" && window.leoAsked === 1`, 5*time.Second)
	hostile := `touch "<b>bold</b>" && echo <script>alert(1)</script>`
	s.signal(t, "asker", permissionRequest(hostile))
	b.waitJS("asker at the top again, the hostile command as text",
		firstRow+fmt.Sprintf(` === "asker" && (document.querySelector('tr[data-prompt-for="asker"] .prompt-text') || {innerText: ""}).innerText.includes(%q)`, hostile), 20*time.Second)
	if n := b.evalInt(`document.querySelectorAll('#agents-list b, #agents-list script').length`); n != 0 {
		t.Fatalf("the prompt's text became %d elements", n)
	}
	b.waitJS("a notification for asker", `window.leoSeen.length === 1 && window.leoSeen[0].startsWith("leo: asker needs input|") && window.leoSeen[0].includes("<b>bold</b>")`, 10*time.Second)
	b.waitJS("still the same page", `window.leoNoReload === true`, time.Second)
	s.clean(t, "agents page", b.html())
	b.shoot(shots, "agents-needs-input")

	// The agent's page: the attention and what it asks.
	b.do("open asker", chromedp.Click(chromedp.CSS(`#agents-list a[href="/web/agents/asker"]`)))
	b.waitJS("asker's page with its prompt", `location.pathname === "/web/agents/asker" && document.querySelector("#agent-attention").innerText.includes("needs input") && document.querySelector("#agent-attention .prompt-text").innerText.includes(`+fmt.Sprintf("%q", hostile)+`)`, 10*time.Second)
	b.waitJS("the stream open on the agent page", `document.documentElement.dataset.stream === "open"`, 30*time.Second)
	b.shoot(shots, "agent-needs-input")
	b.do("mark the agent page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))
	s.signal(t, "asker", toolRan())
	b.waitJS("the prompt gone from asker's page once answered", `window.leoNoReload === true && !document.querySelector("#agent-attention .prompt") && !document.querySelector("#agent-attention").innerText.includes("needs input")`, 20*time.Second)
	b.noErrors()
}

// evalInt evaluates a JavaScript expression whose value is a number.
func (b *browser) evalInt(expr string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](expr))
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

// The Tasks page follows its task's runs from the stream: a run started
// elsewhere (the CLI's client) shows as running, then its outcome, without
// a reload.
func TestBrowserTasksLive(t *testing.T) {
	s := startSite(t)
	b := newBrowser(t)
	b.do("open the tasks page", chromedp.Navigate(s.base+"/web/tasks"))
	b.login(s, "/web/tasks")
	b.waitJS("the stream open", `document.documentElement.dataset.stream === "open" && !!document.querySelector('#tasks-list tr[data-task="report"]')`, 30*time.Second)
	b.do("mark the page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))
	if _, err := s.w.Client.RunTask(context.Background(), "report", false); err != nil {
		t.Fatal(err)
	}
	b.waitJS("the run's outcome in the list, live", `window.leoNoReload === true && document.querySelector('#tasks-list tr[data-task="report"]').innerText.includes("succeeded")`, 60*time.Second)
	b.noErrors()
}
