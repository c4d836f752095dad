package browser_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
)

// Issue 17.13-15 in a real browser: recent messages say what was sent, by
// whom, and what became of it; the buttons follow the agent's state as it
// changes (the details follow the event stream); reset and delete are confirmed first; a task
// is created from the web.
func TestBrowserMessagesActionsAndNewTask(t *testing.T) {
	s := startSite(t)
	if _, err := s.w.Client.Spawn(context.Background(), api.SpawnRequest{Template: "claude", Name: "web2"}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.do("open web2", chromedp.Navigate(s.base+"/web/agents/web2"))
	b.login(s, "/web/agents/web2")
	b.waitJS("web2 running, its buttons those of a running agent",
		`document.querySelector("#agent-state").innerText.startsWith("running") && !!document.querySelector('#agent-panel [data-action="stop"]') && !document.querySelector('#agent-panel [data-action="start"]') && !document.querySelector('#agent-panel [data-action="delete"]')`, 60*time.Second)

	// 13: the message's first line, its sender, its status.
	b.do("send a message",
		chromedp.SendKeys(chromedp.CSS("#message"), "water the tomatoes\nand the basil"),
		chromedp.Click(chromedp.CSS("#send")),
	)
	b.waitJS("the message in recent messages",
		`(() => { const r = document.querySelector("#agent-panel table.deliveries tbody tr"); return r && r.innerText.includes("water the tomatoes") && !r.innerText.includes("and the basil") && r.innerText.includes("you (leo agent send or the web)") && r.innerText.includes("delivered") })()`, 60*time.Second)

	// 15: reset goes through a confirmation page.
	b.clickLive("reset", `#agent-panel a[data-action="reset"]`)
	b.waitJS("the reset confirmation", `location.pathname === "/web/agents/web2/confirm/reset" && document.querySelector("#confirm-what").innerText.includes("discards the agent's conversation")`, 10*time.Second)
	b.do("confirm the reset", chromedp.Click(chromedp.CSS(`button[data-action="confirm-reset"]`)))
	b.waitJS("back on web2 after the reset", `location.pathname === "/web/agents/web2" && document.querySelector("#flash").innerText.includes("Reset web2")`, 60*time.Second)

	// 17: a stop made elsewhere (the CLI) shows without a reload, and so
	// do the buttons of a stopped agent.
	b.do("mark the page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))
	if _, err := s.w.Client.Stop(context.Background(), "web2"); err != nil {
		t.Fatal(err)
	}
	b.waitJS("the stop shown from the stream",
		`window.leoNoReload === true && document.querySelector("#agent-state").innerText.startsWith("stopped") && !!document.querySelector('#agent-panel [data-action="start"]') && !document.querySelector('#agent-panel [data-action="stop"]') && !document.querySelector('#agent-panel [data-action="reset"]')`, 30*time.Second)

	// 15: delete a stopped agent, confirmed.
	b.clickLive("delete", `#agent-panel a[data-action="delete"]`)
	b.waitJS("the delete confirmation", `location.pathname === "/web/agents/web2/confirm/delete"`, 10*time.Second)
	b.do("confirm the delete", chromedp.Click(chromedp.CSS(`button[data-action="confirm-delete"]`)))
	b.waitJS("the agents page after the delete", `location.pathname === "/web/agents" && document.querySelector("#flash").innerText.includes("Deleted web2.") && !document.querySelector('#agents-list tr[data-agent="web2"]')`, 30*time.Second)
	if _, err := s.w.Client.Get(context.Background(), "web2"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("web2 after the delete: %v", err)
	}

	// 15: a new task from the config page.
	b.do("open the config page", chromedp.Navigate(s.base+"/web/config"))
	b.do("open a new task's form", chromedp.Click(chromedp.CSS("#new-task")))
	b.waitJS("the new task form", `!!document.querySelector("#config-form #name") && document.querySelector("#scope").value === "tasks"`, 10*time.Second)
	b.do("fill in the new task",
		chromedp.SendKeys(chromedp.CSS("#name"), "weekly"),
		chromedp.SendKeys(chromedp.CSS("#field-schedule"), "0 9 * * 1"),
		chromedp.SendKeys(chromedp.CSS("#field-prompt_file"), "prompt.md"),
		chromedp.SendKeys(chromedp.CSS("#field-workspace"), s.w.Workspaces+"/task-report"),
		chromedp.Click(chromedp.CSS("#save")),
	)
	b.waitJS("the new task saved", `location.pathname === "/web/config/tasks/weekly" && !!document.querySelector("#flash .flash-ok")`, 30*time.Second)
	c, err := config.Load(s.w.Home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if tk, ok := c.Tasks["weekly"]; !ok || tk.Schedule != "0 9 * * 1" || tk.PromptFile != "prompt.md" {
		t.Fatalf("tasks.weekly in leo.yaml: %+v", tk)
	}
	b.do("open tasks", chromedp.Navigate(s.base+"/web/tasks"))
	b.waitJS("the new task listed", `!!document.querySelector('#tasks-list tr[data-task="weekly"]')`, 10*time.Second)
	if row := b.text(`#tasks-list tr[data-task="weekly"]`); !strings.Contains(row, "Monday") && !strings.Contains(row, "Mon") {
		t.Logf("weekly row: %q", row)
	}
	s.clean(t, "tasks page", b.html())
	b.noErrors()
}
