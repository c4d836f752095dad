package testutil

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/tmux"
)

// RawTmux runs the tmux CLI directly, one process per command, the way a
// shell script (or a naive daemon) would. It is the floor leo's benchmarks
// compare against; it shares the server (socket) of the Server it was made
// from, so both sides measure the same tmux.
type RawTmux struct {
	Binary string
	Socket string
	Env    []string
}

// NewRawTmux returns a RawTmux on s's socket and binary, with s's client
// environment (so panes get the same PATH).
func NewRawTmux(s *tmux.Server) RawTmux {
	return RawTmux{Binary: s.Binary(), Socket: s.Socket(), Env: s.AttachEnv()}
}

// Exec runs one tmux command (with stdin if given) and returns stdout.
func (r RawTmux) Exec(stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Binary, append([]string{"-L", r.Socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = r.Env
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), &rawError{args: args, err: err, stderr: strings.TrimSpace(errb.String())}
	}
	return out.String(), nil
}

type rawError struct {
	args   []string
	err    error
	stderr string
}

func (e *rawError) Error() string {
	return "tmux " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}

// Run is Exec failing the test on error.
func (r RawTmux) Run(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := r.Exec(nil, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// ListSessions is `tmux list-sessions -F …`: the floor for listing agents.
func (r RawTmux) ListSessions(tb testing.TB) string {
	tb.Helper()
	return r.Run(tb, "list-sessions", "-F", "#{session_name}\t#{session_attached}\t#{session_activity}")
}

// NewSession is a bare `new-session -d -s name -- argv…`: the spawn floor.
func (r RawTmux) NewSession(tb testing.TB, name, dir string, argv ...string) {
	tb.Helper()
	r.Run(tb, append([]string{"new-session", "-d", "-s", name, "-c", dir, "--"}, argv...)...)
}

// NewSessionWithEnv is NewSession with env set in the pane (new-session
// -e, as leo's own spawn sets it): no env(1) in front of the program, and
// no PATH but the one the env gives.
func (r RawTmux) NewSessionWithEnv(tb testing.TB, name, dir string, env map[string]string, argv ...string) {
	tb.Helper()
	args := []string{"new-session", "-d", "-s", name, "-c", dir}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		args = append(args, "-e", k+"="+env[k])
	}
	r.Run(tb, append(append(args, "--"), argv...)...)
}

// Capture is `capture-pane -p -J -t target`.
func (r RawTmux) Capture(tb testing.TB, target string) string {
	tb.Helper()
	return r.Run(tb, "capture-pane", "-p", "-J", "-t", target)
}

// PasteAndSubmit is the raw delivery floor: load-buffer from stdin,
// paste-buffer -p, send-keys Enter (three processes), then poll
// capture-pane until want shows.
func (r RawTmux) PasteAndSubmit(tb testing.TB, target, text, want string) {
	tb.Helper()
	if _, err := r.Exec([]byte(text), "load-buffer", "-b", "raw-floor", "-"); err != nil {
		tb.Fatal(err)
	}
	r.Run(tb, "paste-buffer", "-p", "-r", "-d", "-b", "raw-floor", "-t", target)
	r.Run(tb, "send-keys", "-t", target, "Enter")
	WaitForEvery(tb, 10*time.Second, time.Millisecond, func() bool { return strings.Contains(r.Capture(tb, target), want) }, "raw delivery of "+text)
}
