package handover

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/handover/handovertest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/service"
)

const appLabel = "studio.blackpaw.leo.daemon"

// fakeDaemon is the home's socket: up or down, ready or not, and a drain
// that answers err.
type fakeDaemon struct {
	mu       sync.Mutex
	up       bool
	ready    bool
	pid      int
	started  time.Time
	drainErr error
	calls    []string
}

func (d *fakeDaemon) record(c string) { d.calls = append(d.calls, c) }

func (d *fakeDaemon) Health(context.Context) (api.Health, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record("health")
	if !d.up {
		return api.Health{}, api.Errorf(api.CodeDaemonDown, "no leo daemon answers")
	}
	return api.Health{PID: d.pid, Started: d.started, Ready: d.ready}, nil
}

func (d *fakeDaemon) Drain(context.Context, api.DrainRequest) (api.DrainResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record("drain")
	if d.drainErr != nil {
		return api.DrainResult{}, d.drainErr
	}
	return api.DrainResult{Drained: true, Paused: true}, nil
}

func (d *fakeDaemon) ResumeDeliveries(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record("resume")
	return nil
}

func (d *fakeDaemon) set(up, ready bool, pid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.up, d.ready, d.pid, d.started = up, ready, pid, time.Now()
}

func (d *fakeDaemon) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// world is a fake HOME with ~/Library/LaunchAgents, a leo home, the fake
// launchctl and the fake daemon. A launchd job that runs the daemon holds
// daemon.lock: a bootout that succeeds stops it (the lock is freed), a
// bootstrap that succeeds starts one (the lock is taken) unless the test
// says otherwise.
type world struct {
	t        *testing.T
	fake     *handovertest.Launchctl
	userHome string
	h        home.Home
	daemon   *fakeDaemon
	env      map[string]string

	mu   sync.Mutex
	lock *lockfile.Lock
	// stickyLock: a bootout leaves the lock held (lock_timeout).
	stickyLock bool
	// deadStart: a bootstrap starts no daemon (not_ready).
	deadStart bool
	// onBootstrap runs before the fake's bootstrap.
	onBootstrap func()
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, fake: handovertest.New(t), userHome: t.TempDir(), daemon: &fakeDaemon{}}
	w.h = home.Home{Root: filepath.Join(w.userHome, ".leo")}
	w.h.ConfigPath = filepath.Join(w.h.Root, "leo.yaml")
	if err := w.h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.userHome, "Library", "LaunchAgents"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = map[string]string{"HOME": w.userHome}
	t.Cleanup(func() { w.freeLock() })
	return w
}

func (w *world) opts() Options {
	return Options{
		Home:          w.h,
		GOOS:          "darwin",
		Getenv:        func(k string) string { return w.env[k] },
		UserHome:      w.userHome,
		UID:           501,
		Runner:        w,
		Launchctl:     w.fake.Path(),
		Daemon:        w.daemon,
		Version:       "1.4.0",
		BinaryVersion: func(context.Context, string) (string, error) { return "1.4.0", nil },
		DrainTimeout:  time.Second,
		LockTimeout:   300 * time.Millisecond,
		ReadyTimeout:  300 * time.Millisecond,
		Poll:          5 * time.Millisecond,
	}
}

// Run runs the fake launchctl, then plays launchd's part for the daemon.
func (w *world) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if len(args) > 0 && args[0] == "bootstrap" && w.onBootstrap != nil {
		w.onBootstrap()
	}
	out, err := service.ExecRunner{}.Run(ctx, name, args...)
	if err != nil || len(args) == 0 {
		return out, err
	}
	switch args[0] {
	case "bootout":
		w.daemon.set(false, false, 0)
		if !w.stickyLock {
			w.freeLock()
		}
	case "bootstrap":
		if !w.deadStart {
			w.fake.SetRunning(strings.TrimSuffix(filepath.Base(args[2]), ".plist"), os.Getpid())
			w.takeLock()
			w.daemon.set(true, true, 2002)
		}
	}
	return out, nil
}

// takeLock holds daemon.lock as a running daemon does.
func (w *world) takeLock() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lock != nil {
		return
	}
	l, err := lockfile.Acquire(w.h.LockPath(), w.h.Root)
	if err != nil {
		w.t.Fatal(err)
	}
	w.lock = l
}

func (w *world) freeLock() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lock != nil {
		_ = w.lock.Release()
		w.lock = nil
	}
}

func (w *world) lockHeld() bool {
	held, _, err := lockfile.Probe(w.h.LockPath())
	if err != nil {
		w.t.Fatal(err)
	}
	return held
}

// runningDaemon is a daemon of the job label, loaded, holding the lock,
// answering its socket.
func (w *world) runningDaemon(label string) {
	w.fake.SetRunning(label, os.Getpid()) // the lock below is this process's
	w.takeLock()
	w.daemon.set(true, true, 1001)
}

func (w *world) loaded(label string) { w.fake.SetLoaded(label) }

func (w *world) isLoaded(label string) bool { return w.fake.Loaded(label) }

func (w *world) failVerb(verb string, code int) { w.fake.Fail(verb, code) }

func (w *world) calls() []string { return w.fake.Calls() }

func (w *world) plist() string {
	return filepath.Join(w.userHome, "Library", "LaunchAgents", "com.blackpaw.leo.plist")
}
func (w *world) backup() string { return w.plist() + ".handed-over" }

// cliBinary is the CLI install's leo (an executable file).
func (w *world) cliBinary() string {
	p := filepath.Join(w.userHome, "bin", "leo")
	writeFile(w.t, p, "#!/bin/sh\n", 0o755)
	return p
}

// writePlist writes the CLI's plist as `leo service install` does, at path.
func (w *world) writePlist(path string, env map[string]string) {
	w.t.Helper()
	data, err := service.Plist{
		Label:                service.CLILabel,
		ProgramArguments:     []string{w.cliBinary(), "service", "--supervised"},
		EnvironmentVariables: env,
		RunAtLoad:            true,
		KeepAlive:            true,
		ProcessType:          "Interactive",
	}.Encode()
	if err != nil {
		w.t.Fatal(err)
	}
	writeFile(w.t, path, string(data), 0o644)
}

// writeMarker writes a valid managed.json (the spec's example) with its
// self_path and tmux_path present.
func (w *world) writeMarker() {
	w.t.Helper()
	self := filepath.Join(w.h.Root, "app", "bin", "leo")
	tmux := filepath.Join(w.h.Root, "app", "tmux", "3.6a", "tmux")
	writeFile(w.t, self, "#!/bin/sh\n", 0o755)
	writeFile(w.t, tmux, "#!/bin/sh\n", 0o755)
	data, _ := json.Marshal(map[string]any{
		"version": 1, "manager": "Leo.app", "bundle_id": "studio.blackpaw.leo.macos",
		"launchd_label": appLabel, "self_path": "~/.leo/app/bin/leo", "tmux_path": "~/.leo/app/tmux/3.6a/tmux",
		"env": map[string]string{"PATH": "/opt/homebrew/bin:/usr/bin:/bin"},
	})
	writeFile(w.t, w.h.MarkerPath(), string(data), 0o600)
}

func writeFile(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// blockPath makes p a non-empty directory, so renaming a file onto it fails.
func blockPath(t *testing.T, p string) {
	t.Helper()
	writeFile(t, filepath.Join(p, "keep"), "x", 0o644)
}

// failure asserts err is a *Failure with step and code, and returns it.
func failure(t *testing.T, err error, step string, code api.Code) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *Failure %s/%s", err, err, step, code)
	}
	if f.Step != step || f.Code != code {
		t.Fatalf("failure = step %q error %q (%s), want step %q error %q", f.Step, f.Code, f.Message, step, code)
	}
	body, _ := json.Marshal(f.JSONBody())
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	if obj["ok"] != false || obj["step"] != step || obj["error"] != string(code) || obj["message"] == "" {
		t.Fatalf("failure object %s", body)
	}
	return f
}

func resultJSON(t *testing.T, res Result) map[string]any {
	t.Helper()
	body, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func wantCalls(t *testing.T, w *world, want ...string) {
	t.Helper()
	if got := w.calls(); !slices.Equal(got, want) {
		t.Fatalf("launchctl calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

var toApp = Request{ToApp: true, Label: appLabel}
var toCLI = Request{ToCLI: true}
