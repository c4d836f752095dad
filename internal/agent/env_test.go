package agent

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// harnesses are the registered adapters, every behaviour is proven for
// each; the test config defines a template named after each.
var harnesses = testutil.Harnesses()

// testEnv is one isolated world: a leo home, a private tmux server, the
// fake harnesses on PATH, a fake user home for the harnesses' own files,
// and a config with one template per harness.
type testEnv struct {
	t         testing.TB
	home      home.Home
	tmux      *tmux.Server
	fakeDir   string
	userHome  map[string]string
	harnLog   string
	workspace string
	cfg       atomic.Pointer[config.Config]
	logBuf    *syncBuffer
	resolver  binpath.Resolver
	extraEnv  map[string]string
	tmpl      map[string]string // extra YAML lines per template
	// dropped templates are left out of the config (a reload removing them).
	dropped map[string]bool
	// width of agent panes (0: the manager's default); readyTimeout of
	// deliveries (0: 20 s).
	width        int
	readyTimeout time.Duration
	// landTimeout of deliveries made by managers created from now on (0:
	// the driver's default).
	landTimeout time.Duration
	// tasks are persistent tasks in the config: name → harness and extra
	// YAML lines (each gets the templates' env).
	tasks map[string]taskSpec
	// tuneOpts, when set, adjusts the Options of managers created from now
	// on.
	tuneOpts func(*Options)
}

type taskSpec struct {
	harness, yaml string
	env           map[string]string // on top of the templates' env
}

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

type envOption func(*testEnv)

// withEnv adds template env vars (fake knobs) to every template.
func withEnv(kv map[string]string) envOption {
	return func(e *testEnv) {
		for k, v := range kv {
			e.extraEnv[k] = v
		}
	}
}

// withPaneWidth makes agent panes width columns wide.
func withPaneWidth(width int) envOption {
	return func(e *testEnv) { e.width = width }
}

// withReadyTimeout bounds a delivery's wait for an idle, empty input line.
func withReadyTimeout(d time.Duration) envOption {
	return func(e *testEnv) { e.readyTimeout = d }
}

// withTemplateYAML adds YAML lines (already indented for a template body)
// to every template.
func withTemplateYAML(lines string) envOption {
	return func(e *testEnv) {
		for _, h := range harnesses {
			e.tmpl[h] += lines
		}
	}
}

func newEnv(t testing.TB, opts ...envOption) *testEnv {
	t.Helper()
	root := t.TempDir()
	e := &testEnv{
		t:         t,
		home:      home.Home{Root: filepath.Join(root, "leo"), ConfigPath: filepath.Join(root, "leo", "leo.yaml")},
		fakeDir:   testutil.FakeHarnessDir(t),
		userHome:  testutil.FakeHome(t),
		harnLog:   filepath.Join(root, "harness.log"),
		workspace: filepath.Join(root, "ws"),
		logBuf:    &syncBuffer{},
		extraEnv:  map[string]string{},
		tmpl:      map[string]string{},
	}
	for _, o := range opts {
		o(e)
	}
	if err := e.home.EnsureState(); err != nil {
		t.Fatal(err)
	}
	path := e.fakeDir + string(os.PathListSeparator) + os.Getenv("PATH")
	e.resolver = binpath.Resolver{Getenv: func(k string) string {
		if k == "PATH" {
			return path
		}
		return os.Getenv(k)
	}}
	// Runs after the tmux server is killed (cleanups run last-in first-out):
	// let every fake exit before its temp dirs are removed.
	t.Cleanup(e.waitFakesGone)
	e.tmux = testutil.NewTmux(t, testutil.WithPATH(path))
	e.writeConfig()
	return e
}

func (e *testEnv) writeConfig() {
	e.t.Helper()
	var b strings.Builder
	b.WriteString("defaults:\n  harness: claude\ntemplates:\n")
	env := map[string]string{"FAKE_HARNESS_LOG": e.harnLog}
	for k, v := range e.userHome {
		env[k] = v
	}
	for k, v := range e.extraEnv {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, h := range harnesses {
		if e.dropped[h] {
			continue
		}
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n", h, h, filepath.Join(e.workspace, h))
		b.WriteString(e.tmpl[h])
		b.WriteString("    env:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s: %q\n", k, env[k])
		}
	}
	if len(e.tasks) > 0 {
		b.WriteString("tasks:\n")
		names := make([]string, 0, len(e.tasks))
		for n := range e.tasks {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ts := e.tasks[n]
			fmt.Fprintf(&b, "  %s:\n    runtime: persistent\n    harness: %s\n    schedule: \"0 7 * * *\"\n    prompt_file: prompt.md\n    workspace: %s\n",
				n, ts.harness, filepath.Join(e.workspace, "task-"+n))
			b.WriteString(ts.yaml)
			b.WriteString("    env:\n")
			for _, k := range keys {
				if _, own := ts.env[k]; !own {
					fmt.Fprintf(&b, "      %s: %q\n", k, env[k])
				}
			}
			own := make([]string, 0, len(ts.env))
			for k := range ts.env {
				own = append(own, k)
			}
			sort.Strings(own)
			for _, k := range own {
				fmt.Fprintf(&b, "      %s: %q\n", k, ts.env[k])
			}
		}
	}
	cfg, err := config.Parse([]byte(b.String()), e.home.ConfigPath)
	if err != nil {
		e.t.Fatalf("config: %v\n%s", err, b.String())
	}
	e.cfg.Store(cfg)
}

// fastPolicy keeps the documented shape (doubling, cap, the 15 s quick-exit
// rule) at test speed.
func fastPolicy() RestartPolicy {
	return RestartPolicy{Base: 100 * time.Millisecond, Max: 400 * time.Millisecond, ResetAfter: 10 * time.Minute, QuickResumeExit: 15 * time.Second}
}

// manager starts a Manager (Restore, then Run) over the env's home and tmux.
func (e *testEnv) manager(resolver ...binpath.Resolver) *Manager {
	e.t.Helper()
	m := e.newManager(resolver...)
	if err := m.Restore(context.Background()); err != nil {
		e.t.Fatalf("Restore: %v", err)
	}
	e.run(m)
	return m
}

func (e *testEnv) newManager(resolver ...binpath.Resolver) *Manager {
	e.t.Helper()
	r := e.resolver
	if len(resolver) > 0 {
		r = resolver[0]
	}
	opts := Options{
		Home:      e.home,
		Tmux:      e.tmux,
		Config:    func() *config.Config { return e.cfg.Load() },
		Resolver:  r,
		Log:       slog.New(slog.NewTextHandler(e.logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LeoBinary: "/bin/false",
		Policy:    fastPolicy(),
		Tick:      50 * time.Millisecond,
		Delivery:  delivery.Driver{ReadyTimeout: cmp.Or(e.readyTimeout, 20*time.Second), LandTimeout: e.landTimeout},
		Width:     e.width,
	}
	if e.tuneOpts != nil {
		e.tuneOpts(&opts)
	}
	m, err := New(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { m.Close() })
	return m
}

func (e *testEnv) run(m *Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	e.t.Cleanup(func() {
		cancel()
		<-done
		if e.t.Failed() {
			e.t.Logf("manager log:\n%s", e.logBuf.String())
		}
	})
}

// harnessEvent is one line of FAKE_HARNESS_LOG.
type harnessEvent struct {
	Argv    []string `json:"argv"`
	PID     int      `json:"pid"`
	Event   string   `json:"event"`
	Message *string  `json:"message"`
	Code    *int     `json:"code"`
	// SessionID is the conversation a "session" or "start" event names.
	SessionID string `json:"session_id"`
	// Folded: codex took the message into the turn that was running.
	Folded bool `json:"folded"`
}

func (e *testEnv) events() []harnessEvent {
	data, err := os.ReadFile(e.harnLog)
	if err != nil {
		return nil
	}
	var out []harnessEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev harnessEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// launches are the argv of every TUI launch of one harness, in order
// (headless `session list` calls excluded).
func (e *testEnv) launches(harnessName string) [][]string {
	var out [][]string
	for _, ev := range e.events() {
		if len(ev.Argv) == 0 || filepath.Base(ev.Argv[0]) != harnessName {
			continue
		}
		if len(ev.Argv) > 1 && ev.Argv[1] == "session" {
			continue
		}
		out = append(out, ev.Argv)
	}
	return out
}

// submitted are the messages the fakes took as turns (exact text), in order.
func (e *testEnv) submitted() []string {
	var out []string
	for _, ev := range e.events() {
		if ev.Message != nil && ev.Event == "" {
			out = append(out, *ev.Message)
		}
	}
	return out
}

func waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, timeout, cond, what)
}

func mustGet(t testing.TB, m *Manager, name string) api.Agent {
	t.Helper()
	a, err := m.Get(name)
	if err != nil {
		t.Fatalf("Get %s: %v", name, err)
	}
	return a
}

func (e *testEnv) waitState(m *Manager, name string, state api.AgentState) api.Agent {
	e.t.Helper()
	var last api.Agent
	waitFor(e.t, fmt.Sprintf("agent %s %s", name, state), 30*time.Second, func() bool {
		last = mustGet(e.t, m, name)
		return last.State == state
	})
	return last
}

func (e *testEnv) capture(m *Manager, name string) string {
	e.t.Helper()
	l, err := m.Logs(context.Background(), name, 100)
	if err != nil {
		e.t.Fatalf("Logs %s: %v", name, err)
	}
	return l.Text
}

// waitDelivered waits until the message with id has an outcome and fails
// the test unless it was delivered.
func waitDelivered(t testing.TB, m *Manager, name, id string) {
	t.Helper()
	var d *api.Delivery
	waitFor(t, "outcome of message "+id, 30*time.Second, func() bool {
		for _, x := range mustGet(t, m, name).Deliveries {
			if x.ID == id {
				x := x
				d = &x
				return true
			}
		}
		return false
	})
	if d.Status != "delivered" {
		t.Fatalf("message %s to %s: %s (%s)", id, name, d.Status, d.Error)
	}
}

func (e *testEnv) panePID(name string) int {
	e.t.Helper()
	list, err := e.tmux.ListPanes(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list {
		if p.SessionName == TmuxSession(name) {
			return p.PID
		}
	}
	return 0
}

func (e *testEnv) paneID(name string) string {
	e.t.Helper()
	list, err := e.tmux.ListPanes(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list {
		if p.SessionName == TmuxSession(name) {
			return p.PaneID
		}
	}
	return ""
}

// waitFakesGone waits (bounded) until every fake harness process the log
// names has exited.
func (e *testEnv) waitFakesGone() {
	deadline := time.Now().Add(5 * time.Second)
	for _, ev := range e.events() {
		if ev.PID <= 0 {
			continue
		}
		for syscall.Kill(ev.PID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// attachClient attaches a control-mode client (which tmux counts in
// session_attached, as it does a person's terminal) and returns its detach.
func attachClient(t testing.TB, e *testEnv, session string) func() {
	t.Helper()
	argv := e.tmux.AttachArgv(session) // binary -L sock -f /dev/null attach-session -t =name
	args := append([]string{}, argv[1:5]...)
	args = append(args, "-C")
	args = append(args, argv[5:]...)
	cmd := exec.Command(argv[0], args...)
	cmd.Env = e.tmux.AttachEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "client attached", 10*time.Second, func() bool {
		list, _ := e.tmux.ListPanes(context.Background())
		for _, p := range list {
			if p.SessionName == session && p.Attached > 0 {
				return true
			}
		}
		return false
	})
	var once sync.Once
	detach := func() {
		once.Do(func() {
			stdin.Close()
			cmd.Wait()
		})
	}
	t.Cleanup(detach)
	return detach
}
