// Package leoproc runs the real leo binary for the end-to-end tests, fault
// tests and benchmarks (e2e, e2e/fault, e2e/perf): `leo service` as its own
// process (so it can be SIGKILLed) in an isolated world — its own HOME,
// CODEX_HOME and XDG dirs, LEO_HOME, the fake harnesses first on PATH —
// over the real tmux server of that home and the real socket. Waits poll a
// condition with a deadline; nothing sleeps to hope.
//
// A test binary using it calls Cleanup from TestMain, after m.Run.
package leoproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// Harnesses are the registered harnesses; every world has a template for
// each, named after its harness.
var Harnesses = testutil.Harnesses()

// build is one program built for the test binary, once.
type build struct {
	once sync.Once
	path string
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*build{} // by import path
	// buildRoot holds every build, one dir each; Cleanup removes it.
	buildRoot string
)

// Build builds the package importPath once per test binary, as an
// executable called name in a directory of its own, and returns its path.
func Build(tb testing.TB, importPath, name string) string {
	tb.Helper()
	buildsMu.Lock()
	b, ok := builds[importPath]
	if !ok {
		b = &build{}
		builds[importPath] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		dir, err := buildDir(importPath)
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		b.err = testutil.GoBuild(importPath, b.path)
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

func buildDir(importPath string) (string, error) {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if buildRoot == "" {
		root, err := os.MkdirTemp("", "leo-e2e-bin-")
		if err != nil {
			return "", fmt.Errorf("build %s: %w", importPath, err)
		}
		buildRoot = root
	}
	return os.MkdirTemp(buildRoot, filepath.Base(importPath)+"-")
}

// Binary builds cmd/leo once per test binary and returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	return Build(tb, "github.com/blackpaw-studio/leo/cmd/leo", "leo")
}

// Cleanup removes what Build built; call it from TestMain after m.Run.
func Cleanup() {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if buildRoot != "" {
		_ = os.RemoveAll(buildRoot)
	}
}

// World is one isolated user with one leo home.
type World struct {
	TB testing.TB
	// Home is the leo home (LEO_HOME), inside the user's HOME.
	Home home.Home
	// UserEnv is HOME, CODEX_HOME and the XDG dirs (testutil.FakeHome).
	UserEnv map[string]string
	// HarnessLog is FAKE_HARNESS_LOG: one JSON line per launch and message.
	HarnessLog string
	// Workspaces is the parent of each template's workspace.
	Workspaces string
	// Bin is the world's own directory of fake harnesses, first on PATH
	// after PathPrefix (see Install).
	Bin string
	// Client talks to the home's daemon (whichever process it is).
	Client *client.Client
	// PathPrefix, if set, goes first on the PATH of leo processes (a
	// stand-in tmux, say). ExtraEnv is added to their environment.
	PathPrefix string
	ExtraEnv   map[string]string

	fakeDir string
	tmpDir  string
}

// New makes a world whose PATH holds the fake harnesses onPath (all of
// Harnesses when none is named) and registers, for the end of the test,
// the kill of its tmux server (after every daemon of it is gone).
func New(tb testing.TB, onPath ...string) *World {
	tb.Helper()
	uh := testutil.FakeHome(tb)
	root := filepath.Join(uh["HOME"], "lh")
	w := &World{
		TB:         tb,
		Home:       home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")},
		UserEnv:    uh,
		HarnessLog: filepath.Join(uh["HOME"], "harness.log"),
		Workspaces: filepath.Join(uh["HOME"], "ws"),
		Bin:        filepath.Join(uh["HOME"], "bin"),
		fakeDir:    testutil.FakeHarnessDir(tb),
		tmpDir:     otherFSTempDir(tb, uh["HOME"]),
	}
	for _, d := range []string{root, w.Workspaces, w.Bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	if len(onPath) == 0 {
		onPath = Harnesses
	}
	for _, h := range onPath {
		w.Install(h)
	}
	w.Client = client.New(w.Home)
	tb.Cleanup(w.Client.Close)
	tb.Cleanup(w.killTmux) // registered first, so it runs after daemons stop
	return w
}

// Install puts the fake harness h on the world's PATH (in Bin); a running
// daemon finds it without a restart.
func (w *World) Install(h string) {
	w.TB.Helper()
	if err := os.Symlink(filepath.Join(w.fakeDir, "fakeharness"), filepath.Join(w.Bin, h)); err != nil && !os.IsExist(err) {
		w.TB.Fatal(err)
	}
}

// TmpDir is the TMPDIR the daemon runs with.
func (w *World) TmpDir() string { return w.tmpDir }

// otherFSTempDir makes the world's TMPDIR, on another filesystem than the
// home when the machine has one (/dev/shm is a tmpfs on Linux), as on the
// many systems whose /tmp is a tmpfs: then nothing written to TMPDIR can be
// renamed into the home, and state files must be written beside
// themselves. Falls back to a dir in the home.
func otherFSTempDir(tb testing.TB, userHome string) string {
	tb.Helper()
	var home, shm syscall.Stat_t
	if syscall.Stat(userHome, &home) == nil && syscall.Stat("/dev/shm", &shm) == nil && home.Dev != shm.Dev {
		if d, err := os.MkdirTemp("/dev/shm", "leo-e2e-tmp-"); err == nil {
			tb.Cleanup(func() { _ = os.RemoveAll(d) })
			return d
		}
	}
	d := filepath.Join(userHome, "tmp")
	if err := os.MkdirAll(d, 0o700); err != nil {
		tb.Fatal(err)
	}
	return d
}

// Env is the environment of every leo process of this world. Its PATH is
// PathPrefix, the world's fakes and the test tools, never a system
// directory: a claude installed in /usr/bin is not this world's.
func (w *World) Env() []string {
	first := []string{w.Bin}
	if w.PathPrefix != "" {
		first = []string{w.PathPrefix, w.Bin}
	}
	path := testutil.ToolPATH(w.TB, first...)
	env := []string{
		"PATH=" + path,
		"LEO_HOME=" + w.Home.Root,
		"TERM=xterm-256color",
		"TMPDIR=" + w.tmpDir,
	}
	if v := os.Getenv("TMUX_TMPDIR"); v != "" {
		env = append(env, "TMUX_TMPDIR="+v)
	}
	for k, v := range w.UserEnv {
		env = append(env, k+"="+v)
	}
	for k, v := range w.ExtraEnv {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

func (w *World) getenv(k string) string {
	for _, kv := range w.Env() {
		if key, v, _ := strings.Cut(kv, "="); key == k {
			return v
		}
	}
	return ""
}

// WriteConfig writes leo.yaml with one template per harness (named after
// it, workspace Workspaces/<harness>); knobs are env vars (fake harness
// knobs) for every template. FAKE_HARNESS_LOG is always set.
func (w *World) WriteConfig(knobs map[string]string) {
	w.TB.Helper()
	w.WriteConfigExtra("", knobs)
}

// WriteConfigExtra is WriteConfig with extra, YAML at the indentation of a
// template's settings ("    idle_suspend_after: 2s\n"), in every template.
func (w *World) WriteConfigExtra(extra string, knobs map[string]string) {
	w.TB.Helper()
	env := map[string]string{"FAKE_HARNESS_LOG": w.HarnessLog}
	maps.Copy(env, knobs)
	keys := slices.Sorted(maps.Keys(env))
	var b strings.Builder
	b.WriteString("defaults:\n  harness: claude\ntemplates:\n")
	for _, h := range Harnesses {
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n%s    env:\n", h, h, filepath.Join(w.Workspaces, h), extra)
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s: %q\n", k, env[k])
		}
	}
	if err := os.WriteFile(w.Home.ConfigPath, []byte(b.String()), 0o600); err != nil {
		w.TB.Fatal(err)
	}
}

// Daemon is one `leo service` process.
type Daemon struct {
	Cmd    *exec.Cmd
	PID    int
	stderr *syncBuf
	done   chan struct{}
}

// Stderr is what the daemon logged so far.
func (d *Daemon) Stderr() string { return d.stderr.String() }

// Done is closed when the process has exited (and been reaped).
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Exited reports whether the process has exited.
func (d *Daemon) Exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Kill signals the daemon and waits until it is reaped (SIGKILL if a
// gentler signal is not obeyed in 20 s).
func (d *Daemon) Kill(sig syscall.Signal) {
	if d.Exited() {
		return
	}
	_ = d.Cmd.Process.Signal(sig)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.Cmd.Process.Kill()
		<-d.done
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// StartProcess runs `leo service` without waiting for it to be ready. The
// daemon is stopped (SIGTERM) at the end of the test if still running; its
// log is printed if the test failed.
func (w *World) StartProcess() *Daemon {
	w.TB.Helper()
	cmd := exec.Command(Binary(w.TB), "service")
	cmd.Env = w.Env()
	return w.StartCommand(cmd)
}

// StartCommand is StartProcess for a daemon command the caller built (as
// a service manager would run it: its own argv, env and process group).
func (w *World) StartCommand(cmd *exec.Cmd) *Daemon {
	w.TB.Helper()
	d := &Daemon{Cmd: cmd, stderr: &syncBuf{}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		w.TB.Fatal(err)
	}
	d.PID = cmd.Process.Pid
	go func() { _ = cmd.Wait(); close(d.done) }()
	w.TB.Cleanup(func() {
		d.Kill(syscall.SIGTERM)
		if w.TB.Failed() {
			w.TB.Logf("daemon pid %d log:\n%s", d.PID, tail(d.Stderr(), 60))
		}
	})
	return d
}

// Start runs `leo service` and waits (up to timeout) for /health ready.
// It returns the daemon and how long it took to become ready.
func (w *World) Start(timeout time.Duration) (*Daemon, time.Duration) {
	w.TB.Helper()
	t0 := time.Now()
	d := w.StartProcess()
	if err := w.WaitReady(d, timeout); err != nil {
		w.TB.Fatal(err)
	}
	return d, time.Since(t0)
}

// WaitReady polls /health until this daemon process reports ready.
func (w *World) WaitReady(d *Daemon, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		h, err := w.Client.Health(ctx)
		cancel()
		switch {
		case err == nil && h.Ready && h.PID == d.PID:
			return nil
		case err == nil && h.PID != d.PID:
			last = fmt.Errorf("health answered by pid %d", h.PID)
		case err == nil:
			last = fmt.Errorf("not ready yet")
		default:
			last = err
		}
		if d.Exited() {
			return fmt.Errorf("daemon pid %d exited before ready: %v\n%s", d.PID, d.Cmd.ProcessState, tail(d.Stderr(), 40))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon pid %d not ready after %v: %v\n%s", d.PID, timeout, last, tail(d.Stderr(), 40))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Leo runs the leo CLI with args in this world and returns stdout.
func (w *World) Leo(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, Binary(w.TB), args...)
	cmd.Env = w.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("leo %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// TmuxSocket is the -L name of the tmux server this home's daemon uses.
func (w *World) TmuxSocket() string {
	return w.Home.TmuxSocket(home.DefaultRoot(w.getenv))
}

// TmuxArgs is the argv prefix of a tmux client on this home's server.
func (w *World) TmuxArgs(args ...string) []string {
	return append([]string{"-L", w.TmuxSocket(), "-f", "/dev/null"}, args...)
}

// Tmux runs one tmux command on the home's server.
func (w *World) Tmux(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", w.TmuxArgs(args...)...)
	cmd.Env = w.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Pane is one pane on the home's tmux server.
type Pane struct {
	Session string
	PaneID  string
	PID     int
	Dead    bool
}

// Panes lists every pane of the server (an absent server is no panes).
func (w *World) Panes() ([]Pane, error) {
	out, err := w.Tmux("list-panes", "-a", "-F", "#{session_name} #{pane_id} #{pane_pid} #{pane_dead}")
	if err != nil {
		if strings.Contains(err.Error(), "no server running") || strings.Contains(err.Error(), "error connecting") {
			return nil, nil
		}
		return nil, err
	}
	var panes []Pane
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		// Agent session names never hold a space ([a-z0-9-]); tmux
		// 3.3a prints a tab in a -F format as '_'.
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("list-panes line %q", line)
		}
		pid, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("list-panes line %q: %v", line, err)
		}
		panes = append(panes, Pane{Session: f[0], PaneID: f[1], PID: pid, Dead: f[3] == "1"})
	}
	return panes, nil
}

// AgentPanes is Panes restricted to agent sessions (leo-*), by session.
// A session listed twice (split window) keeps every pane: callers check
// there is one.
func (w *World) AgentPanes() (map[string][]Pane, error) {
	panes, err := w.Panes()
	if err != nil {
		return nil, err
	}
	out := map[string][]Pane{}
	for _, p := range panes {
		if strings.HasPrefix(p.Session, "leo-") {
			out[p.Session] = append(out[p.Session], p)
		}
	}
	return out, nil
}

// StateRecord is the part of a state/agents.json record these tests read.
type StateRecord struct {
	Name    string         `json:"name"`
	State   api.AgentState `json:"state"`
	PaneID  string         `json:"pane_id"`
	PanePID int            `json:"pane_pid"`
	// InFlight and Queue are the agent's durable delivery queue: the
	// message pasted but not known to be submitted, and those waiting.
	InFlight *StateMessage  `json:"in_flight"`
	Queue    []StateMessage `json:"queue"`
}

// StateMessage is a saved message of a record (id and text).
type StateMessage struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// ReadAgentsFile parses state/agents.json strictly (unknown fields are
// fine, but it must be one valid JSON document of the expected shape).
func (w *World) ReadAgentsFile() ([]StateRecord, error) {
	data, err := os.ReadFile(w.Home.AgentsPath())
	if err != nil {
		return nil, err
	}
	var f struct {
		Version int           `json:"version"`
		Agents  []StateRecord `json:"agents"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s does not parse: %v", w.Home.AgentsPath(), err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s has trailing data after the JSON document", w.Home.AgentsPath())
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, want 1", w.Home.AgentsPath(), f.Version)
	}
	return f.Agents, nil
}

// SpawnMany spawns n agents of the templates in turn (named <prefix>-<i>),
// parallel calls through the client, and waits until every one is running.
func (w *World) SpawnMany(ctx context.Context, prefix string, n, parallel int, timeout time.Duration) {
	w.TB.Helper()
	sem := make(chan struct{}, parallel)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("%s-%03d", prefix, i)
			if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: Harnesses[i%len(Harnesses)], Name: name}); err != nil {
				errs <- fmt.Errorf("spawn %s: %w", name, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		w.TB.Fatal(err)
	}
	w.WaitAll(timeout, "every agent running", func(as []api.Agent) bool {
		if len(as) < n {
			return false
		}
		for _, a := range as {
			if a.State != api.StateRunning {
				return false
			}
		}
		return true
	})
}

// WaitAll polls the agent list until cond holds.
func (w *World) WaitAll(timeout time.Duration, what string, cond func([]api.Agent) bool) []api.Agent {
	w.TB.Helper()
	var as []api.Agent
	var err error
	testutil.WaitFor(w.TB, timeout, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		as, err = w.Client.List(ctx)
		return err == nil && cond(as)
	}, what)
	return as
}

// Delivery polls agent name until its delivery id has an outcome and
// returns it; nil if none came within timeout.
func (w *World) Delivery(name, id string, timeout time.Duration) *api.Delivery {
	w.TB.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		a, err := w.Client.Get(ctx, name)
		cancel()
		if err != nil {
			w.TB.Fatalf("get %s for the outcome of %s: %v", name, id, err)
		}
		for _, d := range a.Deliveries {
			if d.ID == id {
				return &d
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// HarnessEvent is one line of the fake harnesses' log (FAKE_HARNESS_LOG):
// a launch (Argv) or, with Event "", a submitted message.
type HarnessEvent struct {
	Argv    []string `json:"argv"`
	PID     int      `json:"pid"`
	Event   string   `json:"event"`
	Message *string  `json:"message"`
	// Child is the pid of a process a hanging fake started (hang_child).
	Child int `json:"child"`
}

// HarnessEvents reads the fake harnesses' log; the test fails if it cannot.
func (w *World) HarnessEvents() []HarnessEvent {
	w.TB.Helper()
	data, err := os.ReadFile(w.HarnessLog)
	if err != nil {
		w.TB.Fatal(err)
	}
	var out []HarnessEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev HarnessEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// Submitted lists, in order, the messages the fake TUIs logged as
// submitted.
func (w *World) Submitted() []string {
	w.TB.Helper()
	var out []string
	for _, ev := range w.HarnessEvents() {
		if ev.Event == "" && ev.Message != nil {
			out = append(out, *ev.Message)
		}
	}
	return out
}

// SubmittedCounts counts, per text, the messages the fake TUIs logged as
// submitted.
func (w *World) SubmittedCounts() map[string]int {
	w.TB.Helper()
	counts := map[string]int{}
	for _, m := range w.Submitted() {
		counts[m]++
	}
	return counts
}

// Launches are the argvs harness h was started with as a TUI, in order
// (opencode's `session list` runs are not launches).
func (w *World) Launches(h string) [][]string {
	w.TB.Helper()
	var out [][]string
	for _, ev := range w.HarnessEvents() {
		if len(ev.Argv) == 0 || filepath.Base(ev.Argv[0]) != h || (len(ev.Argv) > 1 && ev.Argv[1] == "session") {
			continue
		}
		out = append(out, ev.Argv)
	}
	return out
}

// killTmux kills the home's tmux server, removes the socket file it
// leaves, and waits (bounded) for the harness processes to go.
func (w *World) killTmux() {
	panes, _ := w.Panes()
	_, _ = w.Tmux("kill-server")
	// A daemon SIGKILLed while its tmux client was starting the server can
	// leave a server that comes up after kill-server ran; with its socket
	// file removed below nothing could reach it again. Kill every process
	// still running on this server: by its socket file, never by the
	// socket name alone (another home's server may share it).
	env := w.Env()
	pids, _ := tmux.ProcsOnSocket(w.TmuxSocket(), env)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if path := tmux.SocketPathOf(w.TmuxSocket(), env); path != "" {
		_ = os.Remove(path)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range panes {
		for p.PID > 0 && syscall.Kill(p.PID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
