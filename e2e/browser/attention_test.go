package browser_test

import (
	"context"
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

// ask sends agent a message whose turn makes the fake claude ask
// permission to run command (its prompt imitates the real 2.1.197's: see
// internal/testutil/fakeharness/claude_permission.go). Its hooks and its
// screen tell the daemon, as the real claude's do.
func (s *site) ask(t *testing.T, agent, command string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.w.Client.Send(ctx, agent, "please run it fake-ask:"+command); err != nil {
		t.Fatalf("send to %s: %v", agent, err)
	}
}

// answer presses 1 ("Yes") in agent's pane, as a person attached to it
// does.
func (s *site) answer(t *testing.T, agent string) {
	t.Helper()
	if _, err := s.w.Tmux("send-keys", "-t", "=leo-"+agent+":", "1"); err != nil {
		t.Fatal(err)
	}
}

// firstRow is the agent in the Agents page's first row.
const firstRow = `(document.querySelector("#agents-list tbody tr[data-agent]") || {dataset: {}}).dataset.agent`

// promptOf is the text of agent's prompt row on the Agents page.
func promptOf(agent string) string {
	return fmt.Sprintf(`(document.querySelector('tr[data-prompt-for=%q] .prompt-text') || {innerText: ""}).innerText`, agent)
}

// Issue 18 in a real browser: an agent that needs input (the fake claude's
// permission prompt, as the real one shows it) comes to the top of the
// Agents page with its prompt — live, from the event stream, without a
// reload — and goes back once it is answered in the TUI; a notification
// shows only after a person clicked Notify me; the agent's page shows the
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

	// Before any click: an agent that needs input shows, with claude's
	// words and choices, and nothing is asked or notified.
	s.ask(t, "asker", "touch first.txt")
	b.waitJS("asker at the top with its prompt, live",
		firstRow+` === "asker" && document.querySelector('tr[data-agent="asker"]').dataset.attention === "needs_input" && `+promptOf("asker")+`.includes("touch first.txt")`, 30*time.Second)
	b.waitJS("the prompt's choices", `[...document.querySelectorAll('tr[data-prompt-for="asker"] .prompt-choices li')].map(li => li.innerText).join("|").startsWith("Yes|Yes, and always allow")`, 10*time.Second)
	if asked, seen := b.evalInt("window.leoAsked"), b.evalInt("window.leoSeen.length"); asked != 0 || seen != 0 {
		t.Fatalf("without a click: %d permission requests, %d notifications", asked, seen)
	}
	if att := b.text(`tr[data-agent="asker"] .attention`); !strings.Contains(att, "needs input") {
		t.Fatalf("asker's attention cell: %q", att)
	}
	s.answer(t, "asker")
	b.waitJS("asker back below aaa once answered in the TUI", firstRow+` === "aaa" && !document.querySelector('tr[data-prompt-for="asker"]') && document.querySelector('tr[data-agent="asker"]').dataset.attention !== "needs_input"`, 30*time.Second)

	// The click asks the browser, once; then entering needs_input notifies.
	b.do("click Notify me", chromedp.Click(chromedp.CSS("#notify-toggle")))
	b.waitJS("notifications on", `document.querySelector("#notify-toggle").innerText === "Notifications on" && window.leoAsked === 1`, 5*time.Second)
	hostile := `touch "<b>bold</b>" <script>alert(1)</script>`
	s.ask(t, "asker", hostile)
	b.waitJS("asker at the top again, the hostile command as text",
		firstRow+fmt.Sprintf(` === "asker" && %s.includes(%q)`, promptOf("asker"), hostile), 30*time.Second)
	if n := b.evalInt(`document.querySelectorAll('#agents-list b, #agents-list script').length`); n != 0 {
		t.Fatalf("the prompt's text became %d elements", n)
	}
	b.waitJS("a notification for asker", `window.leoSeen.length === 1 && window.leoSeen[0].startsWith("leo: asker needs input|") && window.leoSeen[0].includes("<b>bold</b>")`, 10*time.Second)
	b.waitJS("still the same page", `window.leoNoReload === true`, time.Second)
	s.clean(t, "agents page", b.html())
	b.shoot(shots, "agents-needs-input")

	// The agent's page: the attention and what it asks, live too.
	b.do("open asker", chromedp.Click(chromedp.CSS(`#agents-list a[href="/web/agents/asker"]`)))
	b.waitJS("asker's page with its prompt", `location.pathname === "/web/agents/asker" && document.querySelector("#agent-attention").innerText.includes("needs input") && document.querySelector("#agent-attention .prompt-text").innerText.includes(`+fmt.Sprintf("%q", hostile)+`)`, 10*time.Second)
	b.waitJS("the stream open on the agent page", `document.documentElement.dataset.stream === "open"`, 30*time.Second)
	b.shoot(shots, "agent-needs-input")
	b.do("mark the agent page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))
	s.answer(t, "asker")
	b.waitJS("the prompt gone from asker's page once answered", `window.leoNoReload === true && !document.querySelector("#agent-attention .prompt") && !document.querySelector("#agent-attention").innerText.includes("needs input")`, 30*time.Second)
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
