// Package e2e drives the real leo binary: `leo service` as its own process
// over a real tmux server and the real socket, fake harnesses on PATH, an
// isolated HOME per test. Daemons are killed with SIGKILL where the issue
// says so; nothing here sleeps to hope, every wait has a deadline.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

var (
	leoOnce sync.Once
	leoBin  string
	leoErr  error
)

// leoBinary builds cmd/leo once per test binary.
func leoBinary(t testing.TB) string {
	t.Helper()
	leoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "leo-e2e-bin-")
		if err != nil {
			leoErr = err
			return
		}
		leoBin = filepath.Join(dir, "leo")
		cmd := exec.Command("go", "build", "-o", leoBin, "github.com/blackpaw-studio/leo/cmd/leo")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			leoErr = fmt.Errorf("go build cmd/leo: %v\n%s", err, out)
		}
	})
	if leoErr != nil {
		t.Fatal(leoErr)
	}
	return leoBin
}

// world is one isolated user: HOME, LEO_HOME, a bin dir on PATH holding
// the fake harnesses (a test may leave claude out and add it later).
type world struct {
	t        testing.TB
	userHome map[string]string
	home     home.Home
	bin      string
	fakeDir  string
	harnLog  string
	ws       string
	client   *client.Client
}

func newWorld(t testing.TB, harnessesOnPath ...string) *world {
	t.Helper()
	if len(harnessesOnPath) == 0 {
		harnessesOnPath = []string{"claude", "codex", "opencode"}
	}
	uh := testutil.FakeHome(t)
	root := filepath.Join(uh["HOME"], "leo-home")
	w := &world{
		t:        t,
		userHome: uh,
		home:     home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")},
		bin:      filepath.Join(uh["HOME"], "bin"),
		fakeDir:  testutil.FakeHarnessDir(t),
		harnLog:  filepath.Join(uh["HOME"], "harness.log"),
		ws:       filepath.Join(uh["HOME"], "ws"),
	}
	if err := os.MkdirAll(w.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range harnessesOnPath {
		w.install(h)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	w.client = client.New(w.home)
	t.Cleanup(w.client.Close)
	// Runs after every daemon is gone (cleanups are last-in first-out).
	t.Cleanup(w.killTmux)
	return w
}

// install puts a fake harness on the world's PATH.
func (w *world) install(h string) {
	w.t.Helper()
	if err := os.Symlink(filepath.Join(w.fakeDir, "fakeharness"), filepath.Join(w.bin, h)); err != nil && !os.IsExist(err) {
		w.t.Fatal(err)
	}
}

func (w *world) env() []string {
	env := []string{
		"PATH=" + w.bin + ":/usr/local/bin:/usr/bin:/bin",
		"LEO_HOME=" + w.home.Root,
		"TERM=xterm-256color",
	}
	for k, v := range w.userHome {
		env = append(env, k+"="+v)
	}
	return env
}

// writeConfig writes leo.yaml with one template per harness; extra is
// YAML (template-body indentation) added to every template, knobs are
// env vars for every template.
func (w *world) writeConfig(extra string, knobs map[string]string) {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("defaults:\n  harness: claude\ntemplates:\n")
	env := map[string]string{"FAKE_HARNESS_LOG": w.harnLog}
	for k, v := range knobs {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, h := range []string{"claude", "codex", "opencode"} {
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n%s    env:\n", h, h, filepath.Join(w.ws, h), extra)
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s: %q\n", k, env[k])
		}
	}
	if err := os.WriteFile(w.home.ConfigPath, []byte(b.String()), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// daemon is one `leo service` process.
type daemon struct {
	cmd    *exec.Cmd
	stderr *syncBuf
	done   chan struct{}
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

// startDaemon runs `leo service` and waits until /health says ready.
func (w *world) startDaemon() *daemon {
	w.t.Helper()
	d := w.spawnDaemon()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		h, err := w.client.Health(ctx)
		if err == nil && h.Ready {
			return d
		}
		select {
		case <-d.done:
			w.t.Fatalf("daemon exited before ready: %v\n%s", d.cmd.ProcessState, d.stderr.String())
		case <-ctx.Done():
			w.t.Fatalf("daemon not ready: %v\n%s", err, d.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *world) spawnDaemon() *daemon {
	w.t.Helper()
	cmd := exec.Command(leoBinary(w.t), "service")
	cmd.Env = w.env()
	d := &daemon{cmd: cmd, stderr: &syncBuf{}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { cmd.Wait(); close(d.done) }()
	w.t.Cleanup(func() {
		d.kill(syscall.SIGTERM)
		if w.t.Failed() {
			w.t.Logf("daemon %d stderr:\n%s", cmd.Process.Pid, d.stderr.String())
		}
	})
	return d
}

// kill signals the daemon and waits for it to be gone.
func (d *daemon) kill(sig syscall.Signal) {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(sig)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// tmuxSocket is the -L name the daemon of this home uses.
func (w *world) tmuxSocket() string {
	return w.home.TmuxSocket(filepath.Join(w.userHome["HOME"], ".leo"))
}

func (w *world) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", w.tmuxSocket(), "-f", "/dev/null"}, args...)...)
	cmd.Env = w.env()
	out, err := cmd.Output()
	return string(out), err
}

func (w *world) killTmux() {
	_, _ = w.tmux("kill-server")
	// Let the fakes exit before the temp dirs go.
	deadline := time.Now().Add(5 * time.Second)
	for _, ev := range w.events() {
		for ev.PID > 0 && syscall.Kill(ev.PID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// sessions lists the agent sessions on the daemon's tmux server with their
// pane pid.
func (w *world) sessions() map[string]int {
	out, err := w.tmux("list-panes", "-a", "-F", "#{session_name} #{pane_pid}")
	got := map[string]int{}
	if err != nil {
		return got
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var name string
		var pid int
		if _, err := fmt.Sscanf(line, "%s %d", &name, &pid); err == nil && strings.HasPrefix(name, "leo-") {
			got[name] = pid
		}
	}
	return got
}

type harnessEvent struct {
	Argv    []string `json:"argv"`
	PID     int      `json:"pid"`
	Event   string   `json:"event"`
	Message *string  `json:"message"`
}

func (w *world) events() []harnessEvent {
	data, err := os.ReadFile(w.harnLog)
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

// launches are the TUI launches (argv) whose cwd is the workspace of
// template h... identified by the binary name.
func (w *world) launches(h string) [][]string {
	var out [][]string
	for _, ev := range w.events() {
		if len(ev.Argv) == 0 || filepath.Base(ev.Argv[0]) != h || (len(ev.Argv) > 1 && ev.Argv[1] == "session") {
			continue
		}
		out = append(out, ev.Argv)
	}
	return out
}

func (w *world) submitted() []string {
	var out []string
	for _, ev := range w.events() {
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

func (w *world) get(name string) api.Agent {
	w.t.Helper()
	a, err := w.client.Get(context.Background(), name)
	if err != nil {
		w.t.Fatalf("get %s: %v", name, err)
	}
	return a
}

func (w *world) waitDelivered(name, id string) {
	w.t.Helper()
	var d *api.Delivery
	waitFor(w.t, "outcome of "+id, 60*time.Second, func() bool {
		a, err := w.client.Get(context.Background(), name)
		if err != nil {
			return false
		}
		for _, x := range a.Deliveries {
			if x.ID == id {
				x := x
				d = &x
				return true
			}
		}
		return false
	})
	if d.Status != "delivered" {
		w.t.Fatalf("message %s to %s: %s %s", id, name, d.Status, d.Error)
	}
}

func (w *world) send(name, msg string) string {
	w.t.Helper()
	res, err := w.client.Send(context.Background(), name, msg)
	if err != nil {
		w.t.Fatalf("send to %s: %v", name, err)
	}
	return res.ID
}

func hasSeq(argv, seq []string) bool {
	for i := 0; i+len(seq) <= len(argv); i++ {
		ok := true
		for j := range seq {
			if argv[i+j] != seq[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func resumeArgs(h, id string) []string {
	switch h {
	case "claude":
		return []string{"--resume", id}
	case "codex":
		return []string{"resume", id}
	}
	return []string{"-s", id}
}
