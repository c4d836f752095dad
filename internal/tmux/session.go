package tmux

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// SessionSpec describes the program to run in a new session or a
// respawned pane.
type SessionSpec struct {
	Name string // session name (exact, e.g. "leo-<agent>")
	Dir  string // working directory of the pane
	// Argv is run directly (no shell). A one-word argv is launched through
	// env(1), because tmux hands a single-word command to /bin/sh -c.
	Argv []string
	// Env reaches the pane through -e KEY=VALUE, never the pane's command
	// line. PATH is special in tmux (the pane gets the client's PATH), so a
	// PATH here is applied by env(1) in front of the command instead.
	Env           map[string]string
	Width, Height int
}

// Pane identifies a new session's single pane.
type Pane struct {
	SessionID string // "$N"
	PaneID    string // "%N", the stable target for every pane command
	PID       int    // pid of the pane's process
}

// The three checks below are written out rather than compiled regexps, which
// every leo command would pay for at start-up; names_test.go pins each to
// the pattern in its comment.

// isPaneID reports whether s matches ^%[0-9]+$.
func isPaneID(s string) bool {
	if len(s) < 2 || s[0] != '%' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isEnvKey reports whether s matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isEnvKey(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// isSessionName reports whether s matches ^[^:.\x00-\x1f\x7f]+$. Bytes
// are enough: every excluded character is ASCII, and no byte of a
// multi-byte (or invalid) UTF-8 sequence is.
func isSessionName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ':' || c == '.' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func checkPane(paneID string) error {
	if !isPaneID(paneID) {
		return fmt.Errorf("tmux: pane id %q: want %%N", paneID)
	}
	return nil
}

func checkSessionName(name string) error {
	if !isSessionName(name) {
		return fmt.Errorf("tmux: session name %q: must be non-empty without ':', '.' or control characters", name)
	}
	return nil
}

// launchArgs renders -x/-y/-c/-e and the command for new-session and
// respawn-pane.
func (s *Server) launchArgs(spec SessionSpec, sized bool) ([]string, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, fmt.Errorf("tmux: session %q: empty argv", spec.Name)
	}
	var args []string
	if sized {
		w, h := spec.Width, spec.Height
		if w <= 0 {
			w = defaultWidth
		}
		if h <= 0 {
			h = defaultHeight
		}
		args = append(args, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
	}
	if spec.Dir != "" {
		args = append(args, "-c", spec.Dir)
	}
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		if !isEnvKey(k) {
			return nil, fmt.Errorf("tmux: session %q: env key %q is not a valid variable name", spec.Name, k)
		}
		if k != "PATH" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-e", k+"="+spec.Env[k])
	}
	argv := spec.Argv
	if p, ok := spec.Env["PATH"]; ok {
		argv = append([]string{s.opts.EnvBinary, "PATH=" + p}, argv...)
	} else if len(argv) == 1 {
		argv = []string{s.opts.EnvBinary, argv[0]}
	}
	if strings.Contains(argv[0], "=") {
		return nil, fmt.Errorf("tmux: session %q: program %q contains '='", spec.Name, argv[0])
	}
	args = append(args, "--")
	return append(args, argv...), nil
}

// NewSession creates a detached session running spec.Argv and returns its
// pane. The first session of a fresh server is created in the same tmux
// invocation that sets remain-on-exit, so its exit status is kept too.
func (s *Server) NewSession(ctx context.Context, spec SessionSpec) (Pane, error) {
	if err := checkSessionName(spec.Name); err != nil {
		return Pane{}, err
	}
	if err := s.CheckVersion(ctx); err != nil {
		return Pane{}, err
	}
	launch, err := s.launchArgs(spec, true)
	if err != nil {
		return Pane{}, err
	}
	args := append([]string{"new-session", "-d", "-P", "-F", "#{session_id}\t#{pane_id}\t#{pane_pid}", "-s", spec.Name}, launch...)

	var out string
	if c := s.control(ctx); c != nil {
		out, err = s.run(ctx, mutating, args...)
	} else {
		// No control client (no server yet, or control mode off). Start
		// the server, if none runs, with only leo's options and the
		// hidden session: a tmux server keeps the argv of the client that
		// started it for its whole life (ps shows it), so it must never
		// be forked from a command line holding this session's -e values.
		if _, err := s.execTmux(ctx, nil, s.controlSessionArgs()...); err != nil && !isDuplicate(err) {
			return Pane{}, err
		}
		s.serverStarted()
		if c := s.control(ctx); c != nil {
			out, err = s.run(ctx, mutating, args...)
		} else {
			out, err = s.execTmux(ctx, nil, append(s.serverOptionArgs(), args...)...)
		}
	}
	if err != nil {
		return Pane{}, err
	}
	return parseNewPane(out)
}

func parseNewPane(out string) (Pane, error) {
	f := strings.Split(strings.TrimSpace(out), "\t")
	if len(f) != 3 || !isPaneID(f[1]) {
		return Pane{}, fmt.Errorf("tmux new-session: unexpected output %q", out)
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil {
		return Pane{}, fmt.Errorf("tmux new-session: pane pid %q: %w", f[2], err)
	}
	return Pane{SessionID: f[0], PaneID: f[1], PID: pid}, nil
}

// RespawnPane kills whatever runs in the pane and starts spec.Argv in it;
// the pane id stays the same. spec.Name is only used in error messages.
func (s *Server) RespawnPane(ctx context.Context, paneID string, spec SessionSpec) error {
	if err := checkPane(paneID); err != nil {
		return err
	}
	launch, err := s.launchArgs(spec, false)
	if err != nil {
		return err
	}
	_, err = s.run(ctx, mutating, append([]string{"respawn-pane", "-k", "-t", paneID}, launch...)...)
	return err
}

// HasSession reports whether a session of exactly this name exists.
func (s *Server) HasSession(ctx context.Context, name string) (bool, error) {
	if err := checkSessionName(name); err != nil {
		return false, err
	}
	_, err := s.run(ctx, readOnly, "has-session", "-t", "="+name)
	if err == nil {
		return true, nil
	}
	if IsNotFound(err) {
		return false, nil
	}
	return false, err
}

// KillSession kills the session of exactly this name. A missing session
// (or server) is not an error.
func (s *Server) KillSession(ctx context.Context, name string) error {
	if err := checkSessionName(name); err != nil {
		return err
	}
	_, err := s.run(ctx, mutating, "kill-session", "-t", "="+name)
	if err != nil && IsNotFound(err) {
		return nil
	}
	return err
}

// Capture returns the visible screen of the pane as plain text (no escape
// sequences), wrapped lines joined, no trailing newline.
func (s *Server) Capture(ctx context.Context, paneID string) (string, error) {
	if err := checkPane(paneID); err != nil {
		return "", err
	}
	return s.run(ctx, readOnly, "capture-pane", "-p", "-J", "-t", paneID)
}

// CaptureHistory returns up to lines lines of scrollback plus the visible
// screen.
func (s *Server) CaptureHistory(ctx context.Context, paneID string, lines int) (string, error) {
	if err := checkPane(paneID); err != nil {
		return "", err
	}
	if lines < 0 {
		lines = 0
	}
	return s.run(ctx, readOnly, "capture-pane", "-p", "-J", "-S", "-"+strconv.Itoa(lines), "-t", paneID)
}

// Paste puts text into the pane as one paste: through a uniquely named
// buffer that paste-buffer deletes (-d), bracketed (-p) when the app asked
// for bracketed paste, with LF kept as LF (-r). One trailing newline is
// dropped so the paste itself never submits. Empty text pastes nothing.
func (s *Server) Paste(ctx context.Context, paneID, text string) error {
	if err := checkPane(paneID); err != nil {
		return err
	}
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	buf := "leo-" + uuid.NewString()
	if err := s.setBuffer(ctx, buf, text); err != nil {
		return err
	}
	_, err := s.run(ctx, mutating, "paste-buffer", "-p", "-r", "-d", "-b", buf, "-t", paneID)
	if err != nil {
		// Do not leave the text behind in the server.
		_, _ = s.run(context.WithoutCancel(ctx), mutating, "delete-buffer", "-b", buf)
	}
	return err
}

// setBuffer stores text in a named paste buffer. Over control mode the text
// travels inside a quoted set-buffer argument (no process, no temp file;
// see quoteArg for the escaping). Without control mode it goes through
// load-buffer's stdin, which also avoids tmux's limit on command size.
func (s *Server) setBuffer(ctx context.Context, name, text string) error {
	// tmux arguments are C strings: a NUL would silently cut the text, so
	// such text takes the stdin path.
	if c := s.control(ctx); c != nil && !strings.ContainsRune(text, 0) {
		_, err := s.run(ctx, mutating, "set-buffer", "-b", name, "--", text)
		if !errors.Is(err, ErrControlLost) {
			return err
		}
	}
	_, err := s.execTmux(ctx, []byte(text), "load-buffer", "-b", name, "-")
	return err
}

// SendKeys sends tmux key names (e.g. "Enter", "C-c", "Escape").
func (s *Server) SendKeys(ctx context.Context, paneID string, keys ...string) error {
	if err := checkPane(paneID); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	_, err := s.run(ctx, mutating, append([]string{"send-keys", "-t", paneID}, keys...)...)
	return err
}

// SendLiteral types text as-is (send-keys -l), e.g. slash commands that the
// TUI must see as typing rather than as a paste.
func (s *Server) SendLiteral(ctx context.Context, paneID, text string) error {
	if err := checkPane(paneID); err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	_, err := s.run(ctx, mutating, "send-keys", "-l", "-t", paneID, "--", text)
	return err
}

// CancelMode leaves copy/view mode so keys reach the program again. A pane
// not in a mode is left alone.
func (s *Server) CancelMode(ctx context.Context, paneID string) error {
	if err := checkPane(paneID); err != nil {
		return err
	}
	_, err := s.run(ctx, mutating, "send-keys", "-X", "-t", paneID, "cancel")
	var te *Error
	if errors.As(err, &te) && strings.Contains(te.Msg, "not in a mode") {
		return nil
	}
	return err
}

// KillServer stops the tmux server and every session in it. No server is
// not an error.
func (s *Server) KillServer(ctx context.Context) error {
	s.mu.Lock()
	c := s.ctl
	s.ctl = nil
	s.mu.Unlock()
	if c != nil {
		c.kill()
	}
	_, err := s.execTmux(ctx, nil, "kill-server")
	if err != nil && errors.Is(err, ErrNoServer) {
		return nil
	}
	return err
}

// Running reports whether the tmux server is up.
func (s *Server) Running(ctx context.Context) (bool, error) {
	_, err := s.run(ctx, readOnly, "display-message", "-p", "#{pid}")
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNoServer) {
		return false, nil
	}
	return false, err
}

// ServerVersion is the version of the running server (#{version}), which
// may differ from the client binary's after an upgrade.
func (s *Server) ServerVersion(ctx context.Context) (string, error) {
	return s.run(ctx, readOnly, "display-message", "-p", "#{version}")
}

// AttachArgv is the command a person runs to attach to session name
// (exact target), with the same socket and binary.
func (s *Server) AttachArgv(name string) []string {
	// No -u here: a person's terminal states its own locale.
	return []string{s.opts.Binary, "-L", s.opts.Socket, "-f", "/dev/null", "attach-session", "-t", "=" + name}
}

// AttachEnv is the environment for AttachArgv: leo's client environment
// without TMUX, so attaching from inside another tmux works.
func (s *Server) AttachEnv() []string { return append([]string(nil), s.env...) }
