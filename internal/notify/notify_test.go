package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/notify"
	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { os.Exit(hermetic.Main(m)) }

const (
	secretPath  = "/services/T000/XXXXSECRET"
	secretValue = "s3cr3t-token-value"
)

// syncBuffer is the daemon log the tests read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is one engine reading one bus, over a config the test can swap.
type env struct {
	t      *testing.T
	dir    string
	cfg    atomic.Pointer[config.Config]
	bus    *events.Bus
	eng    *notify.Engine
	log    *syncBuffer
	clk    clock.Clock
	scopes map[string][2]string // agent -> template, task
	ran    chan notify.Command  // every command run, as the seam saw it
}

type envOption func(*notify.Options)

func newEnv(t *testing.T, yaml string, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), log: &syncBuffer{}, clk: clock.New(), scopes: map[string][2]string{},
		ran: make(chan notify.Command, 100)}
	e.setConfig(yaml)
	o := notify.Options{
		Config: e.cfg.Load,
		AgentScope: func(agent string) (string, string, bool) {
			s, ok := e.scopes[agent]
			return s[0], s[1], ok
		},
		Log: slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Run: func(ctx context.Context, clk clock.Clock, c notify.Command) ([]byte, error) {
			e.ran <- c
			return notify.Exec(ctx, clk, c)
		},
		Environ:   func() []string { return []string{"PATH=" + os.Getenv("PATH")} },
		Dir:       e.dir,
		UserAgent: "leo/test",
	}
	for _, fn := range opts {
		fn(&o)
	}
	if o.Clock != nil {
		e.clk = o.Clock
	}
	e.eng = notify.New(o)
	e.bus = events.New(1, 0, 0, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.eng.Run(ctx, e.bus)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		e.eng.Close()
	})
	testutil.WaitFor(t, 5*time.Second, func() bool { return e.bus.Readers() == 1 }, "the engine reads the bus")
	return e
}

func (e *env) setConfig(yaml string) {
	e.t.Helper()
	c, err := config.Parse([]byte(yaml), filepath.Join(e.dir, "leo.yaml"), config.WithGetenv(func(k string) string {
		return map[string]string{"TOK": secretValue, "HOME": e.dir}[k]
	}))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		e.t.Fatalf("config: %v", err)
	}
	e.cfg.Store(c)
}

// noSecrets fails when text holds a secret of these tests.
func noSecrets(t *testing.T, what, text string, extra ...string) {
	t.Helper()
	for _, s := range append([]string{secretValue, "XXXXSECRET", "hunter2", "services/T000"}, extra...) {
		if strings.Contains(text, s) {
			t.Errorf("%s carries a secret (%s):\n%s", what, s, text)
		}
	}
}

// hook is a webhook server on loopback.
type hook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []api.Notification
	reqs   []*http.Request
	answer func(n int) int // status of the nth request (1-based); nil: 200
	block  chan struct{}   // when not nil, every request waits for it
	hits   atomic.Int32
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := int(h.hits.Add(1))
		var got api.Notification
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("webhook body is not a notification: %v\n%s", err, body)
		}
		h.mu.Lock()
		h.got = append(h.got, got)
		h.reqs = append(h.reqs, r)
		answer, block := h.answer, h.block
		h.mu.Unlock()
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
			}
		}
		status := http.StatusOK
		if answer != nil {
			status = answer(n)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(func() {
		h.mu.Lock()
		if h.block != nil {
			close(h.block)
			h.block = nil
		}
		h.mu.Unlock()
		h.srv.Close()
	})
	return h
}

func (h *hook) url() string { return h.srv.URL + secretPath }

func (h *hook) notifications() []api.Notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

func (h *hook) names() []string {
	var out []string
	for _, n := range h.notifications() {
		out = append(out, n.Notify)
	}
	return out
}

func needsInput(agent, promptText string) api.Event {
	p := &api.Prompt{Kind: api.PromptPermission, Text: promptText, Choices: []string{"Yes", "No"}}
	p.ID = api.PromptID(p.Kind, p.Text, p.Choices)
	return api.Event{Type: api.EventAgentAttention, Agent: agent,
		Attention: &api.Attention{State: api.AttentionNeedsInput, Detail: "asks to run " + promptText, Prompt: p}}
}

func status(e *env, target string) api.NotifierStatus {
	for _, s := range e.eng.Status().Notifiers {
		if s.Target == target {
			return s
		}
	}
	return api.NotifierStatus{}
}

// A command notifier gets the notification as JSON on its stdin, and its
// env: through its environment, never its arguments.
func TestCommandGetsTheNotificationOnStdinAndEnvThroughTheEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "got")
	e := newEnv(t, `notify:
  - command: [sh, -c, 'cat > "$OUT.json"; printf %s "$TOKEN" > "$OUT.token"; printf %s "$LEO_NOTIFY_EVENT $LEO_NOTIFY_NOTIFIER" > "$OUT.event"']
    events: [needs_input]
    env: {TOKEN: "${TOK}", OUT: "`+out+`"}
`)
	e.bus.Publish(needsInput("x", "touch x"))
	testutil.WaitFor(t, 10*time.Second, func() bool { return status(e, "notify[0].command").Sent == 1 }, "the command ran")

	data, err := os.ReadFile(out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var n api.Notification
	if err := json.Unmarshal(data, &n); err != nil {
		t.Fatalf("stdin is not a notification: %v\n%s", err, data)
	}
	if n.Notify != api.NotifyNeedsInput || n.Agent != "x" || n.Notifier != "notify[0]" || n.Test ||
		n.Event.Type != api.EventAgentAttention || n.Event.Seq == 0 || n.Event.Attention == nil ||
		n.Event.Attention.Prompt == nil || n.Event.Attention.Prompt.Text != "touch x" ||
		n.Text != "agent x needs input: asks to run touch x" {
		t.Errorf("stdin = %s", data)
	}
	if tok, _ := os.ReadFile(out + ".token"); string(tok) != secretValue {
		t.Errorf("the command's environment has TOKEN=%q", tok)
	}
	if ev, _ := os.ReadFile(out + ".event"); string(ev) != "needs_input notify[0]" {
		t.Errorf("LEO_NOTIFY_EVENT LEO_NOTIFY_NOTIFIER = %q", ev)
	}
	c := <-e.ran
	if strings.Contains(strings.Join(c.Argv, " "), secretValue) || !slices.Contains(c.Env, "TOKEN="+secretValue) || c.Dir != e.dir {
		t.Errorf("the seam saw argv %q, dir %q, TOKEN in env: %v", c.Argv, c.Dir, slices.Contains(c.Env, "TOKEN="+secretValue))
	}
	noSecrets(t, "the log", e.log.String())
}

// A webhook gets a POST of the notification's JSON.
func TestWebhookGetsThePost(t *testing.T) {
	h := newHook(t)
	e := newEnv(t, "notify:\n  - {webhook: \""+h.url()+"\", events: [idle, task_failed]}\n")
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "ok", FirstLine: "all done"})
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "error", Reason: "boom"}) // not idle
	e.bus.Publish(api.Event{Type: api.EventTaskRunEnded, Task: "t", Run: "r1", State: string(api.OutcomeTimeout), Reason: "ran 30m"})
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(h.notifications()) == 2 }, "two posts")

	got := h.notifications()
	if got[0].Notify != api.NotifyIdle || got[0].Text != "agent x finished its turn: all done" || got[0].Event.FirstLine != "all done" {
		t.Errorf("first post = %+v", got[0])
	}
	if got[1].Notify != api.NotifyTaskFailed || got[1].Task != "t" || got[1].Text != "task t timed out: ran 30m" || got[1].Event.Run != "r1" {
		t.Errorf("second post = %+v", got[1])
	}
	h.mu.Lock()
	r := h.reqs[0]
	h.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != secretPath || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != "leo/test" {
		t.Errorf("request %s %s, content type %q, user agent %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("User-Agent"))
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return status(e, "notify[0].webhook").Sent == 2 }, "both counted")
	noSecrets(t, "the log", e.log.String(), h.srv.URL)
}

// A failing webhook is tried again after 1s, then 2s (the engine's clock),
// and counts as sent once it answers.
func TestFailingWebhookIsRetriedWithBackoff(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	h := newHook(t)
	h.answer = func(n int) int {
		if n < 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	e := newEnv(t, "notify:\n  - {webhook: \""+h.url()+"\", events: [idle], retries: 3}\n", func(o *notify.Options) { o.Clock = clk })
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "ok"})

	retrying := func(attempt int) {
		t.Helper()
		testutil.WaitFor(t, 10*time.Second, func() bool {
			return strings.Contains(e.log.String(), "trying again") && strings.Contains(e.log.String(), "attempt="+strconv.Itoa(attempt))
		}, "the retry after attempt "+strconv.Itoa(attempt))
	}
	retrying(1)
	clk.Advance(999 * time.Millisecond)
	if n := h.hits.Load(); n != 1 {
		t.Fatalf("%d tries before the first backoff (1s) passed", n)
	}
	clk.Advance(time.Millisecond)
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.hits.Load() == 2 }, "the second try, 1s later")
	retrying(2)
	clk.Advance(1999 * time.Millisecond)
	if n := h.hits.Load(); n != 2 {
		t.Fatalf("%d tries before the second backoff (2s) passed", n)
	}
	clk.Advance(time.Millisecond)
	testutil.WaitFor(t, 10*time.Second, func() bool { return status(e, "notify[0].webhook").Sent == 1 }, "the third try succeeds")
	s := status(e, "notify[0].webhook")
	if s.Failed != 0 || s.Failing || s.LastOK == nil || h.hits.Load() != 3 {
		t.Errorf("status %+v after %d tries", s, h.hits.Load())
	}
	if !strings.Contains(e.log.String(), "the webhook answered 500 Internal Server Error") {
		t.Errorf("the log does not say why:\n%s", e.log.String())
	}
	noSecrets(t, "the log", e.log.String(), h.srv.URL)
}

// Retries are bounded, and a webhook that gave up is a problem /health
// shows, by its field and never its URL, until it works again.
func TestAFailingNotifierIsAProblemUntilItWorks(t *testing.T) {
	h := newHook(t)
	var fail atomic.Bool
	fail.Store(true)
	h.answer = func(int) int {
		if fail.Load() {
			return http.StatusNotFound // permanent: not tried again
		}
		return http.StatusOK
	}
	e := newEnv(t, "templates:\n  a:\n    notify:\n      - {webhook: \""+h.url()+"\", events: [errored], retries: 5}\n")
	e.scopes["x"] = [2]string{"a", ""}
	e.bus.Publish(api.Event{Type: api.EventAgentAttention, Agent: "x", Attention: &api.Attention{State: api.AttentionErrored, Detail: "API Error"}})
	testutil.WaitFor(t, 10*time.Second, func() bool { return status(e, "templates.a.notify[0].webhook").Failed == 1 }, "it gives up")
	if n := h.hits.Load(); n != 1 {
		t.Errorf("a 404 was tried %d times; another try cannot change it", n)
	}
	probs := e.eng.Problems()
	if len(probs) != 1 || !strings.HasPrefix(probs[0], "notify: the webhook of templates.a.notify[0] is failing: errored notification failed after 1 attempt(s): the webhook answered 404 Not Found") {
		t.Errorf("problems = %q", probs)
	}
	noSecrets(t, "the problems", strings.Join(probs, "\n"), h.srv.URL)

	fail.Store(false)
	e.bus.Publish(api.Event{Type: api.EventAgentAttention, Agent: "x", Attention: &api.Attention{State: api.AttentionIdle}})
	e.bus.Publish(api.Event{Type: api.EventAgentAttention, Agent: "x", Attention: &api.Attention{State: api.AttentionErrored, Detail: "again"}})
	testutil.WaitFor(t, 10*time.Second, func() bool { return status(e, "templates.a.notify[0].webhook").Sent == 1 }, "it works again")
	if probs := e.eng.Problems(); len(probs) != 0 {
		t.Errorf("problems after a success = %q", probs)
	}
}

// A command that hangs is killed at its deadline (the engine's clock),
// with everything it started.
func TestHangingCommandIsKilledAtItsDeadline(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	pids := filepath.Join(t.TempDir(), "pids")
	e := newEnv(t, `notify:
  - command: [sh, -c, 'sleep 1000 & echo $$ $! > "$PIDS.tmp"; mv "$PIDS.tmp" "$PIDS"; wait']
    env: {PIDS: "`+pids+`"}
    events: [crash_loop]
    timeout: 5s
    retries: 0
`, func(o *notify.Options) { o.Clock = clk })
	e.bus.Publish(api.Event{Type: api.EventAgentExited, Agent: "x", Failures: api.CrashLoopFailures})
	var leader, child int
	testutil.WaitFor(t, 10*time.Second, func() bool {
		data, err := os.ReadFile(pids)
		f := strings.Fields(string(data))
		if err != nil || len(f) != 2 {
			return false
		}
		leader, _ = strconv.Atoi(f[0])
		child, _ = strconv.Atoi(f[1])
		return clk.Pending() == 1
	}, "the command runs, its deadline armed")
	clk.Advance(4999 * time.Millisecond)
	if s := status(e, "notify[0].command"); s.Failed != 0 || proc.Start(leader) == "" {
		t.Fatalf("stopped before its deadline: %+v", s)
	}
	clk.Advance(time.Millisecond)
	testutil.WaitFor(t, 10*time.Second, func() bool { return status(e, "notify[0].command").Failed == 1 }, "it is killed at 5s")
	if s := status(e, "notify[0].command"); !strings.Contains(s.LastError, "sh ran longer than its timeout 5s: its process group was killed") {
		t.Errorf("last error %q", s.LastError)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return proc.Start(leader) == "" && proc.Start(child) == "" },
		"the command and the sleep it started are gone")
}

// A webhook that hangs holds up nothing but its own queue: the other
// notifiers get theirs, the stream is read at once, and the hung one's
// queue drops its oldest when full, which /health reports.
func TestHangingWebhookDoesNotSlowOtherNotifiersOrTheBus(t *testing.T) {
	hung, fast := newHook(t), newHook(t)
	hung.block = make(chan struct{})
	e := newEnv(t, "notify:\n  - {webhook: \""+hung.url()+"\", events: [idle], timeout: 5m, retries: 0}\n"+
		"  - {webhook: \""+fast.url()+"\", events: [idle]}\n", func(o *notify.Options) { o.QueueMax = 8 })
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "ok", FirstLine: "first"})
	testutil.WaitFor(t, 10*time.Second, func() bool { return hung.hits.Load() == 1 && len(fast.notifications()) == 1 },
		"both got the first; the hung one holds it")

	const burst = 5000
	start := time.Now()
	for i := range burst {
		e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "ok", FirstLine: "turn " + strconv.Itoa(i)})
	}
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "ok", FirstLine: "last"})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("publishing %d events took %s", burst, took)
	}
	testutil.WaitFor(t, 20*time.Second, func() bool {
		got := fast.notifications()
		return len(got) > 0 && got[len(got)-1].Event.FirstLine == "last"
	}, "the fast notifier gets the last event while the other hangs")
	if hung.hits.Load() != 1 {
		t.Errorf("the hung webhook was asked %d times", hung.hits.Load())
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		s := status(e, "notify[0].webhook")
		return s.Dropped > 0 && s.Failing && s.Queued == 8
	}, "the hung one's queue is full and drops its oldest")
	probs := strings.Join(e.eng.Problems(), "\n")
	if !strings.Contains(probs, "notify: the webhook of notify[0] is failing: a idle notification was dropped: 8 were waiting") || strings.Contains(probs, "notify[1]") {
		t.Errorf("problems = %s", probs)
	}
	noSecrets(t, "the problems and log", probs+e.log.String(), hung.srv.URL, fast.srv.URL)
}

// One needs_input per prompt, one crash_loop per loop, errored and
// limited when the agent enters them; working never.
func TestEventsAreNotifiedOncePerChange(t *testing.T) {
	h := newHook(t)
	e := newEnv(t, "notify:\n  - {webhook: \""+h.url()+"\", events: [needs_input, errored, limited, resumed, crash_loop]}\n")
	attn := func(s api.AttentionState, detail string) api.Event {
		return api.Event{Type: api.EventAgentAttention, Agent: "x", Attention: &api.Attention{State: s, Detail: detail}}
	}
	for _, ev := range []api.Event{
		needsInput("x", "touch a"),
		needsInput("x", "touch a"), // the same prompt again: no
		needsInput("x", "touch b"), // another prompt: yes
		attn(api.AttentionWorking, "go"),
		attn(api.AttentionErrored, "e1"),
		attn(api.AttentionErrored, "e2"), // still errored: no
		attn(api.AttentionLimited, "limit"),
		{Type: api.EventAgentResumed, Agent: "x", Reason: "the limit's reset came"},
		{Type: api.EventAgentExited, Agent: "x", Failures: 1},
		{Type: api.EventAgentExited, Agent: "x", Failures: 3},
		{Type: api.EventAgentExited, Agent: "x", Failures: 4}, // the same loop: no
		{Type: api.EventAgentExited, Agent: "x", Failures: 0}, // it lived: the loop is over
		{Type: api.EventAgentExited, Agent: "x", Failures: 3},
		{Type: api.EventAgentState, Agent: "x", State: "starting"},
		attn(api.AttentionErrored, "e3"), // after a new launch: yes
	} {
		e.bus.Publish(ev)
	}
	e.bus.Publish(needsInput("y", "last"))
	want := []string{"needs_input", "needs_input", "errored", "limited", "resumed", "crash_loop", "crash_loop", "errored", "needs_input"}
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(h.names()) == len(want) }, "the notifications")
	if got := h.names(); !slices.Equal(got, want) {
		t.Errorf("notified %v, want %v", got, want)
	}
}

// An agent's events go to its template's list, or its persistent task's;
// a task run's to the task's; anything else (and a scope without a list)
// to the top level's. A reload's lists apply to the next event.
func TestNotifiersComeFromTheEventsScope(t *testing.T) {
	top, tmpl, task := newHook(t), newHook(t), newHook(t)
	yaml := "notify:\n  - {webhook: \"" + top.url() + "\", events: [idle, task_succeeded]}\n" +
		"templates:\n  a:\n    notify:\n      - {webhook: \"" + tmpl.url() + "\", events: [idle]}\n  quiet:\n    notify: []\n  plain: {}\n" +
		"tasks:\n  t:\n    prompt_file: p.md\n    runtime: persistent\n    notify:\n      - {webhook: \"" + task.url() + "\", events: [idle, task_succeeded]}\n"
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "notify: []\n")
	e.dir = dir
	if err := os.WriteFile(filepath.Join(dir, "workspace", "p.md"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.setConfig(yaml)
	e.scopes["in-a"] = [2]string{"a", ""}
	e.scopes["in-quiet"] = [2]string{"quiet", ""}
	e.scopes["in-plain"] = [2]string{"plain", ""}
	e.scopes["of-t"] = [2]string{"", "t"}
	for _, agent := range []string{"in-a", "in-quiet", "in-plain", "of-t", "unknown"} {
		e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: agent, State: "ok"})
	}
	e.bus.Publish(api.Event{Type: api.EventTaskRunEnded, Task: "t", State: string(api.OutcomeSucceeded)})
	e.bus.Publish(api.Event{Type: api.EventTaskRunEnded, Task: "other", State: string(api.OutcomeSucceeded)})
	agents := func(h *hook) []string {
		var out []string
		for _, n := range h.notifications() {
			out = append(out, n.Agent+n.Task)
		}
		return out
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		return len(top.notifications()) == 3 && len(tmpl.notifications()) == 1 && len(task.notifications()) == 2
	}, "each scope's notifiers")
	if got := agents(top); !slices.Equal(got, []string{"in-plain", "unknown", "other"}) {
		t.Errorf("top level got %v", got)
	}
	if got := agents(tmpl); !slices.Equal(got, []string{"in-a"}) {
		t.Errorf("templates.a got %v", got)
	}
	if got := agents(task); !slices.Equal(got, []string{"of-t", "t"}) || task.notifications()[0].Notifier != "tasks.t.notify[0]" {
		t.Errorf("tasks.t got %v", got)
	}

	e.setConfig("notify:\n  - {webhook: \"" + tmpl.url() + "\", events: [idle]}\n")
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "in-plain", State: "ok"})
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(tmpl.notifications()) == 2 }, "the reloaded list")
	if len(top.notifications()) != 3 {
		t.Errorf("the old list still got events")
	}
}

// No error or log line of a notifier carries its URL (or its parts) or an
// env value, whatever the failure.
func TestSecretsNeverInLogsOrErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://user:hunter2@" + ln.Addr().String() + secretPath + "?key=XXXXSECRET"
	ln.Close()
	e := newEnv(t, `notify:
  - webhook: "`+closed+`"
    events: [idle]
    retries: 0
  - command: [sh, -c, 'echo "the token is $TOKEN" >&2; exit 3']
    env: {TOKEN: "${TOK}"}
    events: [idle]
    retries: 0
  - command: [/no/such/program-`+secretValue+`]
    env: {TOKEN: "${TOK}"}
    events: [idle]
    retries: 0
`)
	e.bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "x", State: "ok"})
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(e.eng.Problems()) == 3 }, "all three fail")
	st, _ := json.Marshal(e.eng.Status())
	all := strings.Join(e.eng.Problems(), "\n") + string(st) + e.log.String()
	noSecrets(t, "problems, status and log", all, ln.Addr().String(), "key=")
	for _, want := range []string{"connection refused", "sh exited with status 3: the token is ***", "the token is ***"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	res, err := e.eng.Test(context.Background(), api.NotifyTestRequest{Event: api.NotifyIdle})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	noSecrets(t, "the test's result", string(out), ln.Addr().String(), "key=")
}

// `leo notify test` sends a sample to each notifier listening for the
// event, past the queues, and says how each went.
func TestTestSendsASampleToEachNotifier(t *testing.T) {
	h, hung := newHook(t), newHook(t)
	h.answer = func(int) int { return http.StatusOK }
	out := filepath.Join(t.TempDir(), "stdin")
	e := newEnv(t, `notify:
  - webhook: "`+h.url()+`"
    command: [sh, -c, 'cat > "`+out+`"']
    events: [needs_input, idle]
  - command: [sh, -c, 'exit 7']
    events: [needs_input]
  - command: [sh, -c, 'exit 0']
    events: [idle]
templates:
  a:
    notify:
      - {webhook: "`+hung.url()+`", events: [needs_input], timeout: 5m}
`)
	// A notification stuck in the template's queue does not hold the test.
	hung.block = make(chan struct{})
	e.scopes["x"] = [2]string{"a", ""}
	e.bus.Publish(needsInput("x", "stuck"))
	testutil.WaitFor(t, 10*time.Second, func() bool { return hung.hits.Load() == 1 }, "a notification hangs")

	res, err := e.eng.Test(context.Background(), api.NotifyTestRequest{Scope: "notify"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Event != api.NotifyNeedsInput || len(res.Results) != 3 {
		t.Fatalf("result %+v", res)
	}
	want := []struct {
		target string
		ok     bool
		err    string
	}{
		{"notify[0].command", true, ""},
		{"notify[0].webhook", true, ""},
		{"notify[1].command", false, "sh exited with status 7"},
	}
	for i, w := range want {
		r := res.Results[i]
		if r.Target != w.target || r.OK != w.ok || r.Error != w.err {
			t.Errorf("result %d = %+v, want %+v", i, r, w)
		}
	}
	got := h.notifications()
	if len(got) != 1 || !got[0].Test || got[0].Notify != api.NotifyNeedsInput || got[0].Agent != "sample" ||
		got[0].Event.Attention == nil || got[0].Event.Attention.Prompt == nil || !strings.HasPrefix(got[0].Text, "[leo notify test] agent sample needs input") {
		t.Errorf("the webhook got %+v", got)
	}
	if data, _ := os.ReadFile(out); !bytes.Contains(data, []byte(`"test":true`)) {
		t.Errorf("the command got %s", data)
	}
	if probs := e.eng.Problems(); len(probs) != 0 {
		t.Errorf("a failed test made a problem: %q", probs)
	}

	if _, err := e.eng.Test(context.Background(), api.NotifyTestRequest{Event: "nope"}); !api.HasCode(err, api.CodeInvalidArgs) {
		t.Errorf("unknown event: %v", err)
	}
	if _, err := e.eng.Test(context.Background(), api.NotifyTestRequest{Event: api.NotifyCrashLoop}); !api.HasCode(err, api.CodeNotFound) ||
		err.Error() != "no notifier in leo.yaml listens for crash_loop (add it to a notifier's events:)" {
		t.Errorf("no listener: %v", err)
	}
	for _, name := range api.NotifyEvents {
		ev := notify.Sample(name, time.Now())
		if ev.Type == "" {
			t.Errorf("no sample of %s", name)
		}
	}
}

// Text is one line whatever the harness wrote.
func TestNotificationTextIsOneLine(t *testing.T) {
	h := newHook(t)
	e := newEnv(t, "notify:\n  - {webhook: \""+h.url()+"\", events: [needs_input]}\n")
	e.bus.Publish(needsInput("x", "rm -rf /\n\x1b[2J\x00evil\u2028more"))
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(h.notifications()) == 1 }, "the post")
	n := h.notifications()[0]
	if strings.ContainsAny(n.Text, "\n\x1b\x00\u2028") || n.Text != "agent x needs input: asks to run rm -rf / [2J evil more" {
		t.Errorf("text %q", n.Text)
	}
	if n.Event.Attention.Prompt.Text != "rm -rf /\n\x1b[2J\x00evil\u2028more" {
		t.Errorf("the event is not as published: %q", n.Event.Attention.Prompt.Text)
	}
}

// Output cut at its bound never shows part of a secret the cut made
// unrecognisable.
func TestCutOutputHidesAHalfSecret(t *testing.T) {
	e := newEnv(t, `notify:
  - command: [sh, -c, 'head -c 16375 /dev/zero | tr "\0" a; printf "\n%s\n" "$TOKEN"; exit 2']
    env: {TOKEN: "${TOK}"}
    events: [idle]
`)
	res, err := e.eng.Test(context.Background(), api.NotifyTestRequest{Event: api.NotifyIdle})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || !strings.HasPrefix(res.Results[0].Error, "sh exited with status 2: aaaa") {
		t.Errorf("result %+v", res.Results)
	}
	noSecrets(t, "the result and the log", res.Results[0].Error+e.log.String(), secretValue[:4])
}
