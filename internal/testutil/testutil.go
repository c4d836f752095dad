// Package testutil is shared test support: real tmux servers on private
// sockets, the fake harness binaries, isolated homes and a poll helper.
package testutil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/tmux"
)

// UniqueSocket returns a tmux -L name no other test (or test binary) uses.
func UniqueSocket() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("leo-test-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// NewTmux returns a Server on a fresh private socket; the server is killed
// and the control client stopped when the test ends. opts may adjust the
// options (PATH, DisableControl…) before the server is made.
func NewTmux(t testing.TB, opts ...func(*tmux.Options)) *tmux.Server {
	t.Helper()
	o := tmux.Options{Socket: UniqueSocket()}
	for _, f := range opts {
		f(&o)
	}
	s, err := tmux.New(o)
	if err != nil {
		t.Fatalf("tmux.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.KillServer(ctx); err != nil {
			t.Errorf("kill-server on %s: %v", o.Socket, err)
		}
		_ = s.Close()
		removeSocketFile(t, s.SocketPath())
	})
	return s
}

// KillTmuxAtEnd registers, for the end of the test, the kill of the tmux
// server on -L socket that the test runs by other means (a daemon, tmux
// run by hand) and the removal of its socket file, which kill-server
// leaves behind.
func KillTmuxAtEnd(t testing.TB, socket string) {
	t.Helper()
	t.Cleanup(func() { KillTmux(t, socket) })
}

// KillTmux kills the tmux server on -L socket (none is fine) and removes
// its socket file.
func KillTmux(t testing.TB, socket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = exec.CommandContext(ctx, "tmux", "-L", socket, "kill-server").Run()
	removeSocketFile(t, tmux.SocketPathOf(socket, os.Environ()))
}

func removeSocketFile(t testing.TB, path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing the tmux socket file: %v", err)
	}
}

// WithPATH sets the PATH panes get.
func WithPATH(path string) func(*tmux.Options) {
	return func(o *tmux.Options) { o.PATH = path }
}

// WithoutControl makes every tmux command its own process.
func WithoutControl() func(*tmux.Options) {
	return func(o *tmux.Options) { o.DisableControl = true }
}

// WaitFor polls cond every 10 ms until it is true, failing the test with
// msg if timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool, msg string) {
	t.Helper()
	WaitForEvery(t, timeout, 10*time.Millisecond, cond, msg)
}

// WaitForEvery is WaitFor with a chosen poll interval; benchmarks poll
// finely so the measuring does not round every figure up to 10 ms.
func WaitForEvery(t testing.TB, timeout, every time.Duration, cond func() bool, msg string) {
	t.Helper()
	if !Poll(timeout, every, cond) {
		t.Fatalf("timed out after %v waiting for: %s", timeout, msg)
	}
}

// Poll checks cond every interval until it is true (true) or timeout
// passes (false): the one polling loop of the tests, for callers that
// explain a timeout themselves (with the page they saw, or as an error).
func Poll(timeout, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
}

// FreePort is a loopback port nothing listens on right now, for a test's
// own server to take next. Tests never use a fixed port (leo's default
// 8370 is the user's own daemon's).
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ShortTempDir makes a directory under the system temp dir, removed when
// the test ends. Its path stays short where t.TempDir()'s (which holds the
// test's name) may not: a unix socket's path is limited to about 104 bytes.
func ShortTempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatalf("ShortTempDir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// FakeHome makes an isolated home in a temp dir and returns the variables
// that point the harnesses (real or fake) at it: HOME, CODEX_HOME and the
// XDG base dirs. CLAUDE_CONFIG_DIR is left unset so the default
// ($HOME/.claude) is what gets exercised.
func FakeHome(t testing.TB) map[string]string {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{
		"HOME":            home,
		"CODEX_HOME":      filepath.Join(home, ".codex"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
	}
	for k, dir := range env {
		if k == "HOME" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("FakeHome: %v", err)
		}
	}
	return env
}

// HasSeq reports whether seq appears in argv as consecutive elements, e.g.
// a resume flag and its id in a recorded launch.
func HasSeq(argv, seq []string) bool {
	for i := 0; i+len(seq) <= len(argv); i++ {
		if slices.Equal(argv[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}
