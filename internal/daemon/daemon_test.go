package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

const validConfig = `defaults:
  harness: claude
templates:
  assistant:
    workspace: ./agents/assistant
`

// newHome makes a leo home with a valid leo.yaml under a short temp path
// (unix socket paths are limited to ~104 bytes).
func newHome(t *testing.T) home.Home {
	t.Helper()
	root := testutil.ShortTempDir(t, "leo-d")
	h := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	writeFile(t, h.ConfigPath, validConfig)
	return h
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testPATH is a PATH with tmux on it and a fresh empty directory first
// (returned) where a test may install a fake claude.
func testPATH(t *testing.T) (path, binDir string) {
	t.Helper()
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is required: %v", err)
	}
	binDir = t.TempDir()
	return binDir + string(os.PathListSeparator) + filepath.Dir(tmuxPath), binDir
}

func resolverFor(path string) binpath.Resolver {
	return binpath.Resolver{Getenv: func(k string) string {
		if k == "PATH" {
			return path
		}
		return ""
	}}
}

// running is a daemon of a test, in-process, with its fake agent manager.
type running struct {
	*daemontest.Daemon
	agents *daemontest.Agents
	deps   *atomic.Pointer[daemon.AgentDeps]
}

// options returns daemon options for h with a fake agent manager.
func options(t *testing.T, h home.Home, fake *daemontest.Agents, deps *atomic.Pointer[daemon.AgentDeps]) daemon.Options {
	path, _ := testPATH(t)
	return daemon.Options{
		Home:     h,
		Version:  "test",
		Stderr:   &testWriter{t: t},
		Resolver: resolverFor(path),
		NewAgents: func(d daemon.AgentDeps) (daemon.Agents, error) {
			if deps != nil {
				deps.Store(&d)
			}
			return fake, nil
		},
		ReadyWait:       5 * time.Second,
		ShutdownTimeout: 5 * time.Second,
	}
}

// start runs a daemon in-process until the test ends and waits for its
// socket to answer (not for ready).
func start(t *testing.T, opts daemon.Options, fake *daemontest.Agents) *running {
	t.Helper()
	r := &running{
		Daemon: daemontest.Start(t, opts.Home, func(ctx context.Context) error { return daemon.Run(ctx, opts) }),
		agents: fake,
	}
	waitFor(t, 10*time.Second, "the daemon's socket to answer", func() bool {
		if exited, err := r.Exited(); exited {
			t.Fatalf("daemon exited early: %v", err)
		}
		_, err := r.Client.Health(context.Background())
		return err == nil
	})
	return r
}

func startReady(t *testing.T, h home.Home) *running {
	t.Helper()
	fake := daemontest.New()
	deps := &atomic.Pointer[daemon.AgentDeps]{}
	r := start(t, options(t, h, fake, deps), fake)
	r.deps = deps
	r.WaitReady(t, 10*time.Second)
	return r
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func runOnce(t *testing.T, opts daemon.Options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return daemon.Run(ctx, opts)
}

func TestSecondDaemonIsRefusedWithTheOwnersPID(t *testing.T) {
	h := newHome(t)
	first := startReady(t, h)
	sockBefore := statIno(t, h.SocketPath())

	second := daemontest.New()
	opts2 := options(t, h, second, nil)
	opts2.Supervised = true // it must not even open service.log
	err := runOnce(t, opts2)
	want := fmt.Sprintf("another leo daemon owns %s (pid %d)", h.Root, os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("second daemon: got %v, want %q", err, want)
	}
	var coded interface{ ErrorCode() api.Code }
	if !errors.As(err, &coded) || coded.ErrorCode() != api.CodeDaemonRunning {
		t.Fatalf("second daemon error carries no daemon_running code: %#v", err)
	}
	// The loser touched nothing: the first daemon's socket is the same file
	// and still answers.
	if got := statIno(t, h.SocketPath()); got != sockBefore {
		t.Fatalf("socket inode changed from %d to %d: the non-holder replaced it", sockBefore, got)
	}
	if _, err := first.Client.Health(context.Background()); err != nil {
		t.Fatalf("first daemon stopped answering after the second was refused: %v", err)
	}
	select {
	case <-second.RestoreStarted():
		t.Fatal("the refused daemon reached boot restore")
	default:
	}
	if _, err := os.Stat(h.ServiceLogPath()); err == nil {
		t.Fatal("the refused daemon opened service.log")
	}
}

func statIno(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func TestStaleSocketIsReplacedByTheLockHolder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stale func(t *testing.T, path string)
	}{
		{"dead socket", func(t *testing.T, path string) {
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close()
		}},
		{"regular file", func(t *testing.T, path string) { writeFile(t, path, "junk") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			if err := h.EnsureState(); err != nil {
				t.Fatal(err)
			}
			tc.stale(t, h.SocketPath())
			r := startReady(t, h)
			if _, err := r.Client.Health(context.Background()); err != nil {
				t.Fatalf("health over the new socket: %v", err)
			}
			fi, err := os.Lstat(h.SocketPath())
			if err != nil || fi.Mode().Type() != os.ModeSocket {
				t.Fatalf("leo.sock is not a socket: %v %v", fi.Mode(), err)
			}
		})
	}
}

func TestNonHolderNeverRemovesAStaleSocket(t *testing.T) {
	// A daemon that loses the lock must leave even a dead socket alone: only
	// the holder may decide it is stale.
	h := newHome(t)
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	holder, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	writeFile(t, h.SocketPath(), "left by someone")
	ino := statIno(t, h.SocketPath())

	err = runOnce(t, options(t, h, daemontest.New(), nil))
	var held *lockfile.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("Run = %v, want *lockfile.HeldError", err)
	}
	if got := statIno(t, h.SocketPath()); got != ino {
		t.Fatal("the non-holder removed or replaced leo.sock")
	}
}

func TestSocketIsMode0600WhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	h := newHome(t)
	startReady(t, h)
	fi, err := os.Stat(h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("leo.sock mode %v, want 0600", fi.Mode().Perm())
	}
	st, err := os.Stat(h.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v, want 0700", st.Mode().Perm())
	}
}

func TestHealthIsNotReadyUntilBootRestoreIsDone(t *testing.T) {
	h := newHome(t)
	fake := daemontest.New()
	fake.RestoreGate = make(chan struct{})
	opts := options(t, h, fake, nil)
	opts.ReadyWait = 50 * time.Millisecond
	r := start(t, opts, fake)
	<-fake.RestoreStarted()

	hl, err := r.Client.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if hl.Ready {
		t.Fatal("ready:true while boot restore is running")
	}
	if hl.PID != os.Getpid() || hl.Version != "test" || hl.Home != h.Root {
		t.Fatalf("health = %+v", hl)
	}
	// Agent routes wait for restore, then answer not_ready.
	_, err = r.Client.List(context.Background())
	if !client.IsNotReady(err) {
		t.Fatalf("list during restore: %v, want not_ready", err)
	}
	if fake.Running() {
		t.Fatal("supervision started before restore finished")
	}

	close(fake.RestoreGate)
	waitFor(t, 5*time.Second, "ready:true", func() bool {
		hl, err := r.Client.Health(context.Background())
		return err == nil && hl.Ready
	})
	if _, err := r.Client.List(context.Background()); err != nil {
		t.Fatalf("list after restore: %v", err)
	}
	waitFor(t, 5*time.Second, "supervision to run", fake.Running)
}

func TestRequestDuringRestoreIsAnsweredOnceReady(t *testing.T) {
	h := newHome(t)
	fake := daemontest.New()
	fake.RestoreGate = make(chan struct{})
	r := start(t, options(t, h, fake, nil), fake)
	<-fake.RestoreStarted()

	got := make(chan error, 1)
	go func() {
		_, err := r.Client.List(context.Background())
		got <- err
	}()
	time.AfterFunc(20*time.Millisecond, func() { close(fake.RestoreGate) })
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("list that waited for restore: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("list never answered")
	}
}

func TestHealthFindsClaudeInstalledAfterStartWithoutRestart(t *testing.T) {
	h := newHome(t)
	path, binDir := testPATH(t)
	fake := daemontest.New()
	opts := options(t, h, fake, nil)
	opts.Resolver = resolverFor(path)
	r := start(t, opts, fake)

	hl, err := r.Client.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if hl.Claude.Found || hl.Claude.Path != "" {
		t.Fatalf("claude reported %+v before it exists", hl.Claude)
	}
	if !strings.HasPrefix(hl.Tmux, "tmux ") {
		t.Fatalf("health tmux = %q, want the checked `tmux -V`", hl.Tmux)
	}
	claude := filepath.Join(binDir, "claude")
	writeFile(t, claude, "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(claude, 0o755); err != nil {
		t.Fatal(err)
	}
	hl, err = r.Client.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !hl.Claude.Found || hl.Claude.Path != claude {
		t.Fatalf("after installing claude: %+v, want found at %s", hl.Claude, claude)
	}
	if err := os.Remove(claude); err != nil {
		t.Fatal(err)
	}
	hl, _ = r.Client.Health(context.Background())
	if hl.Claude.Found {
		t.Fatal("claude still reported found after it was removed")
	}
}

func TestHealthJSONShape(t *testing.T) {
	// The wire names are an API: {"version","pid","ready","home","claude":{"found"},"agents"}.
	h := newHome(t)
	startReady(t, h)
	conn, err := net.Dial("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /health HTTP/1.0\r\nHost: leo\r\n\r\n")
	buf := make([]byte, 4096)
	var body strings.Builder
	for {
		n, err := conn.Read(buf)
		body.Write(buf[:n])
		if err != nil {
			break
		}
	}
	text := body.String()
	for _, want := range []string{`"version":"test"`, fmt.Sprintf(`"pid":%d`, os.Getpid()), `"ready":true`, `"claude":{"found":false}`, `"agents":0`, "Content-Type: application/json"} {
		if !strings.Contains(text, want) {
			t.Errorf("health answer lacks %s:\n%s", want, text)
		}
	}
}

func TestUnmanagedHomeWithoutConfigExitsWithTheSeedText(t *testing.T) {
	h := newHome(t)
	os.Remove(h.ConfigPath)
	err := runOnce(t, options(t, h, daemontest.New(), nil))
	if err == nil || err.Error() != "no leo.yaml found — run 'leo setup' first" {
		t.Fatalf("Run = %v", err)
	}
	if !api.HasCode(err, api.CodeConfigError) {
		t.Fatalf("code %q, want config_error", api.CodeOf(err))
	}
	if _, err := os.Stat(h.ConfigPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an unmanaged daemon created leo.yaml")
	}
	if _, err := os.Stat(h.SocketPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a daemon that refused to start left a socket")
	}
	if held, _, _ := lockfile.Probe(h.LockPath()); held {
		t.Fatal("a daemon that refused to start kept the lock")
	}
}

func TestExplicitConfigIsNeverCreated(t *testing.T) {
	base := newHome(t)
	dir := filepath.Join(base.Root, "elsewhere")
	h, err := home.Resolve(filepath.Join(dir, "custom.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	opts := options(t, h, daemontest.New(), nil)
	called := false
	opts.FirstStart = func(context.Context, home.Home, *slog.Logger) error {
		called = true
		return nil
	}
	err = runOnce(t, opts)
	if err == nil || !api.HasCode(err, api.CodeConfigError) || !strings.Contains(err.Error(), h.ConfigPath) {
		t.Fatalf("Run = %v, want config_error naming %s", err, h.ConfigPath)
	}
	if called {
		t.Fatal("the first-start seam ran for an explicit --config")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Run created %s for a missing explicit config", dir)
	}

	// With its directory present, still nothing is created in its place.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runOnce(t, opts); err == nil {
		t.Fatal("Run succeeded without the explicit config file")
	}
	if _, err := os.Stat(h.ConfigPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("Run created the explicit config file")
	}
}

func TestFirstStartSeamMayWriteTheDefaultConfig(t *testing.T) {
	h := newHome(t)
	os.Remove(h.ConfigPath)
	fake := daemontest.New()
	opts := options(t, h, fake, nil)
	opts.FirstStart = func(_ context.Context, hh home.Home, _ *slog.Logger) error {
		return os.WriteFile(hh.ConfigPath, []byte(validConfig), 0o600)
	}
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)
}

func TestInvalidConfigRefusesToStartWithEveryFinding(t *testing.T) {
	h := newHome(t)
	writeFile(t, h.ConfigPath, `templates:
  one:
    harness: nosuch
  two:
    harness: alsonot
`)
	err := runOnce(t, options(t, h, daemontest.New(), nil))
	if !api.HasCode(err, api.CodeConfigError) {
		t.Fatalf("Run = %v, want config_error", err)
	}
	for _, want := range []string{`templates.one.harness "nosuch" is not a registered harness`, `templates.two.harness "alsonot" is not a registered harness`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestConfigReloadKeepsTheOldConfigOnInvalidInput(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	deps := r.deps.Load()
	before := deps.Config()
	if before == nil || before.Templates["assistant"] == nil {
		t.Fatalf("manager got no config: %+v", before)
	}

	writeFile(t, h.ConfigPath, "templates:\n  assistant:\n    harness: nosuch\n")
	_, err := r.Client.ReloadConfig(context.Background())
	if !client.IsConfigError(err) {
		t.Fatalf("reload of an invalid file: %v, want config_error", err)
	}
	if !strings.Contains(err.Error(), `templates.assistant.harness "nosuch" is not a registered harness`) {
		t.Fatalf("reload error lacks the finding: %v", err)
	}
	if deps.Config() != before {
		t.Fatal("an invalid reload replaced the running config")
	}
	if n := r.agents.ConfigChangedCalls(); n != 0 {
		t.Fatalf("ConfigChanged called %d times after a refused reload", n)
	}

	writeFile(t, h.ConfigPath, validConfig+"  coder:\n    harness: codex\n")
	res, err := r.Client.ReloadConfig(context.Background())
	if err != nil || !res.OK {
		t.Fatalf("reload of a valid file: %+v %v", res, err)
	}
	after := deps.Config()
	if after == before || after.Templates["coder"] == nil {
		t.Fatal("a valid reload did not swap the config in")
	}
	if n := r.agents.ConfigChangedCalls(); n != 1 {
		t.Fatalf("ConfigChanged called %d times, want 1", n)
	}

	os.Remove(h.ConfigPath)
	if _, err := r.Client.ReloadConfig(context.Background()); !client.IsConfigError(err) {
		t.Fatalf("reload with leo.yaml gone: %v, want config_error", err)
	}
	if deps.Config() != after {
		t.Fatal("a reload of a missing file replaced the running config")
	}
}

func TestGracefulShutdownLeavesAgentsAndFreesTheHome(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	if err := r.Stop(t); err != nil {
		t.Fatalf("Run returned %v after a clean stop", err)
	}
	if !r.agents.Closed() {
		t.Fatal("the agent manager was not closed")
	}
	if r.agents.Running() {
		t.Fatal("supervision still running after shutdown")
	}
	if _, err := os.Lstat(h.SocketPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("leo.sock left behind by a clean shutdown")
	}
	if held, _, _ := lockfile.Probe(h.LockPath()); held {
		t.Fatal("lock still held after shutdown")
	}
	_, err := client.New(h).Health(context.Background())
	if !client.IsDaemonDown(err) || !strings.Contains(err.Error(), "leo daemon is not running (no socket at ") {
		t.Fatalf("health after shutdown: %v", err)
	}
	// The home is free for the next daemon.
	startReady(t, h)
}

func TestSupervisedDaemonLogsToServiceLog(t *testing.T) {
	h := newHome(t)
	fake := daemontest.New()
	opts := options(t, h, fake, nil)
	opts.Supervised = true
	var stderr strings.Builder
	opts.Stderr = &stderr
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)
	r.Stop(t)
	data, err := os.ReadFile(h.ServiceLogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"leo daemon starting", "ready", "leo daemon stopped"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("service.log lacks %q:\n%s", want, data)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("a supervised daemon wrote to stderr: %q", stderr.String())
	}
	fi, _ := os.Stat(h.ServiceLogPath())
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("service.log mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestManagerGetsThisHomesIsolatedTmuxSocket(t *testing.T) {
	h1, h2 := newHome(t), newHome(t)
	r1, r2 := startReady(t, h1), startReady(t, h2)
	s1, s2 := r1.deps.Load().Tmux.Socket(), r2.deps.Load().Tmux.Socket()
	if s1 == s2 || s1 == "leo" || s2 == "leo" {
		t.Fatalf("tmux sockets %q and %q: isolated homes must not collide with each other or the default", s1, s2)
	}
	if s1 != h1.TmuxSocket("") {
		t.Fatalf("socket %q, want home.TmuxSocket = %q", s1, h1.TmuxSocket(""))
	}
}

func TestTooOldOrMissingTmuxIsAClearError(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	opts := options(t, h, daemontest.New(), nil)
	opts.Resolver = resolverFor(dir)
	err := runOnce(t, opts)
	if err == nil || !strings.Contains(err.Error(), "tmux not found") || !strings.Contains(err.Error(), "3.2") {
		t.Fatalf("Run without tmux = %v", err)
	}

	fakeTmux := filepath.Join(dir, "tmux")
	writeFile(t, fakeTmux, "#!/bin/sh\necho 'tmux 3.1c'\n")
	os.Chmod(fakeTmux, 0o755)
	err = runOnce(t, opts)
	if err == nil || !strings.Contains(err.Error(), "too old") {
		t.Fatalf("Run with tmux 3.1c = %v", err)
	}
}

// SIGHUP reloads leo.yaml, as `leo service reload` does (the same
// validated swap; a refused file is covered by the reload route's test).
func TestSIGHUPReloadsTheConfig(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	deps := r.deps.Load()
	before := deps.Config()

	writeFile(t, h.ConfigPath, validConfig+"  coder:\n    harness: codex\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the config reloaded on SIGHUP", func() bool {
		c := deps.Config()
		return c != before && c.Templates["coder"] != nil
	})
	if n := r.agents.ConfigChangedCalls(); n != 1 {
		t.Errorf("ConfigChanged called %d times, want 1", n)
	}
}
