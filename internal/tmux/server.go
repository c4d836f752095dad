// Package tmux is the only code in leo that runs tmux. A Server drives one
// tmux server on a private socket (-L name, never the user's config), keeps
// one persistent control-mode client to it so most commands cost a pipe
// write instead of a process, and falls back to one exec per command when
// control mode is unavailable. Targets are always exact: "=name" for
// sessions, "%N" ids for panes.
package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/binpath"
)

// ControlSession is the hidden session the control-mode client attaches to.
// It runs an inert `cat` and is never an agent; listings leave it out.
const ControlSession = "_leo"

const (
	defaultTimeout      = 10 * time.Second
	defaultHistoryLimit = 10000
	defaultWidth        = 200
	defaultHeight       = 50
	// reconnectBackoff spaces out control-mode connection attempts while no
	// server runs, so a poll loop does not pay a failed attach each time.
	reconnectBackoff = time.Second
)

// Options configure a Server.
type Options struct {
	// Socket is the -L name (required; no slashes).
	Socket string
	// Binary is the tmux executable; empty means look "tmux" up on PATH.
	Binary string
	// PATH is the PATH panes get. tmux gives a new pane the PATH of the
	// tmux client that asked for it (new-session -e PATH=… does not reach
	// the pane), so it is set in the environment of every tmux client leo
	// starts, the control-mode client included. Empty keeps leo's own.
	PATH string
	// Env is the base environment of tmux clients (and so of a server they
	// start); nil means os.Environ(). TMUX and TMUX_PANE are always removed.
	Env []string
	// Timeout bounds each tmux call whose context has no deadline.
	Timeout time.Duration
	// HistoryLimit is the scrollback kept per pane (set -g history-limit).
	HistoryLimit int
	// DisableControl runs every command as its own tmux process.
	DisableControl bool
	// EnvBinary is the env(1) used to launch single-word commands without
	// a shell; default /usr/bin/env.
	EnvBinary string
}

// Server is one tmux server on a private socket. It is safe for
// concurrent use.
type Server struct {
	opts Options
	env  []string

	execCalls    atomic.Int64
	controlCalls atomic.Int64

	mu       sync.Mutex
	ctl      *controlClient
	lastFail time.Time
	lastKick time.Time
	closed   bool
	kicks    atomic.Int64

	wedgeMu     sync.Mutex
	wedged      int // consecutive "server exited unexpectedly" answers
	wedgedSince time.Time

	versionMu  sync.Mutex
	versionOK  bool
	versionErr error
	checked    Version // what CheckVersion found (once versionOK)
}

// New validates opts and returns a Server. It runs nothing.
func New(opts Options) (*Server, error) {
	if opts.Socket == "" || strings.ContainsAny(opts.Socket, "/\x00") {
		return nil, fmt.Errorf("tmux: socket name %q: must be non-empty and contain no '/'", opts.Socket)
	}
	if opts.Binary == "" {
		p, err := binpath.Resolver{}.Lookup("tmux")
		if err != nil {
			return nil, fmt.Errorf("tmux: %w", err)
		}
		opts.Binary = p
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.HistoryLimit <= 0 {
		opts.HistoryLimit = defaultHistoryLimit
	}
	if opts.EnvBinary == "" {
		opts.EnvBinary = "/usr/bin/env"
	}
	base := opts.Env
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || (k == "PATH" && opts.PATH != "") {
			continue
		}
		env = append(env, kv)
	}
	if opts.PATH != "" {
		env = append(env, "PATH="+opts.PATH)
	}
	return &Server{opts: opts, env: env}, nil
}

// Socket returns the -L name.
func (s *Server) Socket() string { return s.opts.Socket }

// Binary returns the tmux executable in use.
func (s *Server) Binary() string { return s.opts.Binary }

// CallCount is the number of tmux commands issued so far: processes
// exec'd plus commands sent over control mode.
func (s *Server) CallCount() int64 { return s.execCalls.Load() + s.controlCalls.Load() }

// Calls splits CallCount by transport.
func (s *Server) Calls() (execs, control int64) {
	return s.execCalls.Load(), s.controlCalls.Load()
}

// Kicks counts SIGCHLDs sent to the server to collect a missed exit
// status (see PaneInfo).
func (s *Server) Kicks() int64 { return s.kicks.Load() }

// Close stops the control-mode client. The tmux server keeps running.
func (s *Server) Close() error {
	s.mu.Lock()
	c := s.ctl
	s.ctl = nil
	s.closed = true
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	return nil
}

// baseArgs isolates every invocation from the user's tmux: own socket,
// no config file. -u: without a UTF-8 locale (launchd and systemd give
// none) tmux sanitizes what it prints to the client, turning the tabs of
// -F formats into "_"; -u declares the client UTF-8 capable.
func (s *Server) baseArgs() []string {
	return []string{"-u", "-L", s.opts.Socket, "-f", "/dev/null"}
}

func (s *Server) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opts.Timeout)
}

// execTmux is the package's one exec seam: a tmux client process with the
// isolating flags, leo's client environment, a deadline, never a shell, and
// stdin closed unless input is given. The output loses one trailing LF so
// it matches what control mode returns.
func (s *Server) execTmux(ctx context.Context, stdin []byte, args ...string) (string, error) {
	return s.execArgs(ctx, stdin, append(s.baseArgs(), args...), args)
}

// execVersion runs `tmux -V` (no socket needed).
func (s *Server) execVersion(ctx context.Context) (string, error) {
	return s.execArgs(ctx, nil, []string{"-V"}, []string{"-V"})
}

// execArgs runs the binary with full as its arguments; args (the part after
// the isolating flags) names the command in errors.
func (s *Server) execArgs(ctx context.Context, stdin []byte, full, args []string) (string, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.opts.Binary, full...)
	cmd.Env = s.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	s.execCalls.Add(1)
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("tmux %s: %w", args[0], ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			e := newError(args, stderr.String())
			s.noteResult(e)
			return "", e
		}
		return "", fmt.Errorf("tmux %s: %w", args[0], err)
	}
	s.noteResult(nil)
	return strings.TrimSuffix(stdout.String(), "\n"), nil
}

// callKind says whether a command may be run again when the control client
// died with it in flight.
type callKind int

const (
	mutating callKind = iota // outcome unknown after a lost reply: report it
	readOnly                 // safe to repeat
)

// run issues one tmux command over control mode when possible, else as its
// own process.
func (s *Server) run(ctx context.Context, kind callKind, args ...string) (string, error) {
	if c := s.control(ctx); c != nil {
		ctx2, cancel := s.withDeadline(ctx)
		s.controlCalls.Add(1)
		out, err := c.do(ctx2, args)
		cancel()
		switch {
		case errors.Is(err, errNotSent):
			// never reached tmux: run it by exec below
		case errors.Is(err, ErrControlLost) && kind == readOnly:
			// repeat a query by exec below
		case errors.Is(err, ErrControlLost):
			return "", fmt.Errorf("tmux %s: %w", args[0], err)
		default:
			s.noteResult(err)
			return out, err
		}
	}
	return s.execTmux(ctx, nil, args...)
}

// control returns a live control-mode client, connecting if needed, or nil
// when control mode is off or unavailable (then callers exec).
func (s *Server) control(ctx context.Context) *controlClient {
	if s.opts.DisableControl {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.ctl != nil && s.ctl.alive() {
		return s.ctl
	}
	s.ctl = nil
	if !s.lastFail.IsZero() && time.Since(s.lastFail) < reconnectBackoff {
		return nil
	}
	c, err := s.connect(ctx)
	if err != nil {
		s.lastFail = time.Now()
		return nil
	}
	s.lastFail = time.Time{}
	s.ctl = c
	return c
}

// serverStarted forgets a failed connection attempt once leo itself has
// started the server, so the next command reconnects at once.
func (s *Server) serverStarted() {
	s.mu.Lock()
	s.lastFail = time.Time{}
	s.mu.Unlock()
}

// connect attaches a control client to the hidden session, creating that
// session first on a server that lacks it. It never starts a server.
func (s *Server) connect(ctx context.Context) (*controlClient, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	// attach-session would start a server if none runs (which then exits
	// for want of sessions, racing whatever leo does next), so ask first
	// with has-session, which never starts one.
	_, err := s.execTmux(ctx, nil, "has-session", "-t", "="+ControlSession)
	if errors.Is(err, ErrNoSession) {
		// The server runs without the hidden session (started by another
		// leo, or someone killed it): create it.
		if _, err = s.execTmux(ctx, nil, s.controlSessionArgs()...); isDuplicate(err) {
			err = nil
		}
	}
	if err != nil {
		return nil, err
	}
	s.execCalls.Add(1)
	c, err := startControl(ctx, s.opts.Binary, s.env, s.controlArgv(), s.opts.Timeout)
	if err != nil {
		return nil, err
	}
	// Per-connection setup: no %output flood, do not size anyone's windows,
	// and the server options agent panes rely on (idempotent on an old server).
	for _, args := range [][]string{
		{"refresh-client", "-f", "no-output,ignore-size"},
		{"set-option", "-g", "remain-on-exit", "on"},
		{"set-option", "-g", "history-limit", strconv.Itoa(s.opts.HistoryLimit)},
	} {
		s.controlCalls.Add(1)
		if _, err := c.do(ctx, args); err != nil {
			c.kill()
			return nil, err
		}
	}
	return c, nil
}

// serverOptionArgs set the options every agent pane depends on; they run
// before any new-session in the same tmux invocation, so even the first
// session of a fresh server has remain-on-exit (and so pane_dead_status).
func (s *Server) serverOptionArgs() []string {
	return []string{
		"set-option", "-g", "remain-on-exit", "on", ";",
		"set-option", "-g", "history-limit", strconv.Itoa(s.opts.HistoryLimit), ";",
	}
}

// controlSessionArgs creates the hidden session, with leo's server
// options set first in the same invocation.
func (s *Server) controlSessionArgs() []string {
	cat := "/bin/cat"
	if p, err := exec.LookPath("cat"); err == nil {
		cat = p
	}
	return append(s.serverOptionArgs(), "new-session", "-d", "-s", ControlSession, "-x", "80", "-y", "24", "--", cat)
}

func isDuplicate(err error) bool { return errors.Is(err, ErrSessionExists) }
