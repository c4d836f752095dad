package browser_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// liveAgents is the daemon's fake agent manager whose conversations a test
// changes while the daemon serves them (daemontest.Agents.Conversations is
// read unlocked, so it is set before the daemon starts only).
type liveAgents struct {
	*daemontest.Agents
	mu    sync.Mutex
	convs map[string]api.Conversation
}

func (l *liveAgents) Conversation(_ context.Context, name string, q api.ConversationQuery) (api.Conversation, error) {
	if _, err := l.Get(name); err != nil {
		return api.Conversation{}, err
	}
	l.mu.Lock()
	c := l.convs[name]
	c.Turns = slices.Clone(c.Turns)
	l.mu.Unlock()
	c.Agent = name
	if c.Turns == nil {
		c.Turns = []api.Turn{}
	}
	if q.Last > 0 && len(c.Turns) > q.Last {
		c.Turns = c.Turns[len(c.Turns)-q.Last:]
	}
	return c, nil
}

// setTurn adds turn to name's conversation, or replaces the turn of its id.
func (l *liveAgents) setTurn(name string, turn api.Turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.convs[name]
	if i := slices.IndexFunc(c.Turns, func(t api.Turn) bool { return t.ID == turn.ID }); i >= 0 {
		c.Turns[i] = turn
	} else {
		c.Turns = append(c.Turns, turn)
	}
	l.convs[name] = c
}

// convSite is an in-process daemon (daemon.Run, its web server on a free
// loopback port) over liveAgents, and the publisher of its event stream:
// the test says what the agent did, in the conversation and on the
// stream, as the real manager does once a harness's record shows it.
func convSite(t *testing.T, agents *liveAgents) (*site, func(api.Event)) {
	t.Helper()
	root := testutil.ShortTempDir(t, "leo-bc")
	h := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	port := leoproc.FreePort(t)
	yaml := fmt.Sprintf("defaults:\n  harness: claude\ntemplates:\n  claude:\n    workspace: %s\n", filepath.Join(root, "ws")) + leoproc.WebSection(port, true)
	if err := os.WriteFile(h.ConfigPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var bus atomic.Pointer[events.Publisher]
	opts := daemon.Options{
		Home: h, Version: "test", Stderr: testWriter{t}, DefaultRoot: filepath.Join(root, "not-default"),
		NewAgents: func(d daemon.AgentDeps) (daemon.Agents, error) {
			bus.Store(&d.Events)
			return agents, nil
		},
		ShutdownTimeout: 5 * time.Second,
	}
	d := daemontest.Start(t, h, func(ctx context.Context) error { return daemon.Run(ctx, opts) })
	d.WaitReady(t, 30*time.Second)
	testutil.WaitFor(t, 30*time.Second, func() bool {
		hl, err := d.Client.Health(context.Background())
		return err == nil && hl.Web != nil && hl.Web.Serving
	}, "the web server serving")
	tok, err := apitoken.Read(h.TokenPath())
	if err != nil {
		t.Fatal(err)
	}
	publish := func(e api.Event) { (*bus.Load()).Publish(e) }
	return &site{base: fmt.Sprintf("http://127.0.0.1:%d", port), token: tok}, publish
}

// testWriter sends the daemon's log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// lastTurn is the newest (bottom) turn of the agent page's conversation.
const lastTurn = `[...document.querySelectorAll("#conversation li.turn")].pop()`

// Issue 19 in a real browser: the agent page shows its conversation
// chat-style beside the screen, and a turn that starts and ends shows
// there live — from the event stream, without a reload — at the bottom,
// with its sender, its tools (a long input folded), its reply, outcome
// and usage, and today's usage beside; every text of it as text. A tool a
// person unfolded stays unfolded when the conversation is fetched again.
func TestBrowserConversationLive(t *testing.T) {
	fake := daemontest.New()
	now := time.Now().UTC()
	fake.Put(api.Agent{Name: "talker", Harness: "claude", Template: "claude", State: api.StateRunning, StartedAt: &now,
		UsageToday: &api.Usage{InputTokens: 100, OutputTokens: 20}})
	first := api.Turn{ID: "t1", StartedAt: now.Add(-time.Minute), EndedAt: &now, User: api.TurnUser{Text: "hello there", Sender: api.SenderCLI},
		Reply: api.TurnReply{Text: "Hello! How can I help?"}, Outcome: api.OutcomeTurnOK, Usage: &api.Usage{InputTokens: 100, OutputTokens: 20}}
	agents := &liveAgents{Agents: fake, convs: map[string]api.Conversation{"talker": {ConversationID: "sess-1", Turns: []api.Turn{first}}}}
	s, publish := convSite(t, agents)
	shots := artifacts(t)

	b := newBrowser(t)
	b.do("open talker", chromedp.Navigate(s.base+"/web/agents/talker"))
	b.login(s, "/web/agents/talker")
	b.waitJS("the first turn", lastTurn+`.dataset.turn === "t1" && `+lastTurn+`.innerText.includes("Hello! How can I help?") && `+lastTurn+`.querySelector(".sender").innerText === "cli"`, 10*time.Second)
	b.waitJS("the stream open", `document.documentElement.dataset.stream === "open"`, 30*time.Second)
	b.do("mark the page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))

	// A message from the web starts a turn: it shows as running.
	hostile := "<script>alert(1)</script> <b>bold</b> \x1b[31mred"
	started := now.Add(time.Second)
	turn := api.Turn{ID: "t2", StartedAt: started, User: api.TurnUser{Text: hostile, Sender: api.SenderWeb, MessageID: "m-2"}, Outcome: api.OutcomeTurnRunning}
	agents.setTurn("talker", turn)
	publish(api.Event{Type: api.EventTurnStarted, Agent: "talker", MessageID: "m-2", FirstLine: "<script>"})
	b.waitJS("the new turn running at the bottom, live",
		`window.leoNoReload === true && `+lastTurn+`.dataset.turn === "t2" && `+lastTurn+`.dataset.outcome === "running" && `+lastTurn+`.querySelector(".sender").innerText === "web" && `+lastTurn+fmt.Sprintf(`.querySelector(".msg-user .msg-text").innerText === %q`, "<script>alert(1)</script> <b>bold</b>  [31mred"), 30*time.Second)

	// It ends: tools, reply, outcome and usage; today's usage grows.
	long := `{"command":"` + strings.Repeat("echo </details><script>x</script>; ", 12) + `"}`
	ended := started.Add(3 * time.Second)
	cost := 0.0042
	turn.EndedAt, turn.Outcome, turn.CostUSD = &ended, api.OutcomeTurnOK, &cost
	turn.Tools = []api.ToolCall{{Name: "Read", Input: `{"file_path":"notes.md"}`}, {Name: "Bash", Input: long}}
	turn.Reply = api.TurnReply{Text: "Done: </div><img src=x onerror=alert(2)>"}
	turn.Usage = &api.Usage{InputTokens: 1500, OutputTokens: 300, CacheReadTokens: 9000}
	agents.setTurn("talker", turn)
	a, _ := fake.Get("talker")
	a.UsageToday = &api.Usage{InputTokens: 1600, OutputTokens: 320, CacheReadTokens: 9000}
	fake.Put(a)
	publish(api.Event{Type: api.EventTurnEnded, Agent: "talker", MessageID: "m-2", State: "ok", FirstLine: "Done"})
	b.waitJS("the turn's end, live", `window.leoNoReload === true && `+lastTurn+`.dataset.outcome === "ok" && `+lastTurn+`.querySelector(".msg-reply").innerText === "Done: </div><img src=x onerror=alert(2)>"`, 30*time.Second)
	b.waitJS("its tools: the short input open, the long one folded",
		`(() => { const d = `+lastTurn+`.querySelectorAll("details.tool"); return d.length === 2 && d[0].open && d[0].querySelector("summary").innerText === "Read" && !d[1].open && d[1].querySelector("pre").textContent.includes("</details><script>x</script>") })()`, 5*time.Second)
	b.waitJS("its usage", lastTurn+`.querySelector(".usage").innerText === "1500 in / 300 out, cache 9000 read / 0 written, $0.0042"`, 5*time.Second)
	b.waitJS("today's usage, live", `document.querySelector("#agent-usage-today").innerText.startsWith("1600 in / 320 out")`, 30*time.Second)
	if n := b.evalInt(`document.querySelectorAll("#conversation script, #conversation img, #conversation b").length`); n != 0 {
		t.Fatalf("the turn's text became %d elements", n)
	}
	if n := b.evalInt(`document.querySelectorAll("#conversation li.turn").length`); n != 2 {
		t.Fatalf("%d turns shown, want 2", n)
	}

	// A person unfolds the long input; the next turn's events fetch the
	// conversation again, and it stays unfolded.
	b.do("unfold the long input", chromedp.Click(chromedp.CSS(`#conversation li.turn[data-turn="t2"] details.tool:nth-of-type(2) summary`)))
	b.waitJS("unfolded", `document.querySelector('#conversation li.turn[data-turn="t2"] details.tool:nth-of-type(2)').open`, 5*time.Second)
	agents.setTurn("talker", api.Turn{ID: "t3", StartedAt: ended.Add(time.Second), User: api.TurnUser{Text: "typed by hand"}, Outcome: api.OutcomeTurnRunning})
	publish(api.Event{Type: api.EventTurnStarted, Agent: "talker"})
	b.waitJS("a turn typed in the TUI, live", lastTurn+`.dataset.turn === "t3" && `+lastTurn+`.querySelector(".sender").innerText === "typed in the TUI"`, 30*time.Second)
	b.waitJS("the unfolded input still unfolded", `window.leoNoReload === true && document.querySelector('#conversation li.turn[data-turn="t2"] details.tool:nth-of-type(2)').open`, 5*time.Second)
	s.clean(t, "agent page", b.html())
	b.shoot(shots, "agent-conversation")
	b.noErrors()
}
