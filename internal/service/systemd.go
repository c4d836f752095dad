package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Unit is a systemd unit file as data: sections in order, each with its
// keys in order. Render is the only place unit text is produced, so every
// value is escaped the same way.
type Unit struct {
	Sections []Section
}

// Section is one [Name] block.
type Section struct {
	Name    string
	Entries []Entry
}

// Entry is one Key=Value line.
type Entry struct {
	Key, Value string
}

// Render is the unit file text: deterministic, one blank line between
// sections.
func (u Unit) Render() []byte {
	var b bytes.Buffer
	b.WriteString("# Written by `leo service install`; `leo service uninstall` removes it.\n")
	for i, s := range u.Sections {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s]\n", s.Name)
		for _, e := range s.Entries {
			fmt.Fprintf(&b, "%s=%s\n", e.Key, e.Value)
		}
	}
	return b.Bytes()
}

// unitWord quotes one word of a command line or an assignment for systemd:
// % (specifiers) and, in command lines, $ (variables) are doubled; a word
// with blanks, quotes or backslashes is double-quoted with C escapes.
func unitWord(s string, command bool) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if command {
		s = strings.ReplaceAll(s, "$", "$$")
	}
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// commandLine is ExecStart's value for argv.
func commandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = unitWord(a, true)
	}
	return strings.Join(words, " ")
}

// Systemd is the Linux backend: a user unit run by `systemctl --user`.
type Systemd struct {
	opts Options
	name string
	path string
}

// NewSystemd returns the systemd backend for opts.
func NewSystemd(opts Options) (*Systemd, error) {
	opts.defaults()
	if err := opts.check(); err != nil {
		return nil, err
	}
	name := opts.Home.TmuxSocket(opts.DefaultRoot) + ".service"
	dir := opts.ConfigHome
	if dir == "" {
		dir = filepath.Join(opts.UserHome, ".config")
	}
	return &Systemd{opts: opts, name: name, path: filepath.Join(dir, "systemd", "user", name)}, nil
}

// Kind is "systemd".
func (s *Systemd) Kind() string { return "systemd" }

// Name is the unit name: leo.service for ~/.leo, leo-<hash>.service
// (the home's tmux socket name) for any other home.
func (s *Systemd) Name() string { return s.name }

// Path is ~/.config/systemd/user/<name>.
func (s *Systemd) Path() string { return s.path }

// Unit is the unit file Install writes.
//
// KillMode=process is what keeps the agents alive: systemd's default
// (control-group) kills every process of the unit on stop and restart, and
// the tmux server leo starts is one of them, with every agent inside it.
// With process, a stop sends SIGTERM (and after TimeoutStopSec, SIGKILL)
// to the daemon alone; the tmux server stays, and the next daemon adopts
// its sessions. The daemon's own shutdown never kills a session.
func (s *Systemd) Unit() Unit {
	o := s.opts
	svc := []Entry{
		{"Type", "simple"},
		{"ExecStart", commandLine(append([]string{o.Program}, o.daemonArgs()...))},
	}
	for _, e := range o.jobEnv() {
		svc = append(svc, Entry{"Environment", unitWord(e.Key+"="+e.Value, false)})
	}
	svc = append(svc,
		Entry{"Restart", "always"},
		Entry{"RestartSec", "5"},
		Entry{"KillMode", "process"},
		Entry{"TimeoutStopSec", "30"},
	)
	return Unit{Sections: []Section{
		{Name: "Unit", Entries: []Entry{
			// Free text: only specifiers are special (quotes would show).
			{"Description", strings.ReplaceAll("leo daemon for "+o.Home.Root, "%", "%%")},
			{"Documentation", "https://github.com/blackpaw-studio/leo/blob/main/docs/service.md"},
		}},
		{Name: "Service", Entries: svc},
		{Name: "Install", Entries: []Entry{{"WantedBy", "default.target"}}},
	}}
}

func (s *Systemd) systemctl(ctx context.Context, args ...string) ([]byte, error) {
	out, err := s.opts.Runner.Run(ctx, "systemctl", append([]string{"--user"}, args...)...)
	if err != nil && noUserManager(err) {
		err = &NoUserManagerError{Err: err}
	}
	return out, err
}

// ErrNoUserManager is what every systemctl --user call fails with when no
// systemd user manager runs for this login (a container, an SSH login
// without lingering): no unit can be loaded there at all.
var ErrNoUserManager = errors.New("no systemd user manager runs for this login")

// NoUserManagerError is a systemctl --user call that found no user
// manager; errors.Is(err, ErrNoUserManager) holds, and Err is what
// systemctl said.
type NoUserManagerError struct{ Err error }

func (e *NoUserManagerError) Error() string {
	return ErrNoUserManager.Error() + ": " + e.Err.Error()
}
func (e *NoUserManagerError) Unwrap() []error { return []error{ErrNoUserManager, e.Err} }

// NoUserManagerHint is what to do about ErrNoUserManager.
const NoUserManagerHint = "turn on lingering (`loginctl enable-linger`, then log in again) and `leo service install`, or run the daemon in the foreground with `leo service`"

// noUserManager reports a systemctl that could not reach the user
// manager's bus (systemd 252 says "Failed to connect to bus: …", newer
// ones "Failed to connect to user scope bus via local transport: …"), or
// no systemctl at all.
func noUserManager(err error) bool {
	if errors.Is(err, exec.ErrNotFound) {
		return true
	}
	var re *RunError
	if !errors.As(err, &re) {
		return false
	}
	return strings.Contains(re.Stderr, "Failed to connect to bus") ||
		strings.Contains(re.Stderr, "Failed to connect to user scope bus")
}

// Install writes the unit, reloads systemd when it changed, and enables
// and starts it. A unit that changed while it ran is restarted, so what
// runs is what the file says.
func (s *Systemd) Install(ctx context.Context) (InstallResult, error) {
	data := s.Unit().Render()
	before, _ := s.show(ctx)
	wrote, err := writeIfChanged(s.path, data, 0o644)
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Path: s.path, Wrote: wrote, Contents: data}
	if wrote {
		if _, err := s.systemctl(ctx, "daemon-reload"); err != nil {
			return res, fmt.Errorf("systemd: reload after writing %s: %w", s.path, err)
		}
	}
	if _, err := s.systemctl(ctx, "enable", s.name); err != nil {
		return res, fmt.Errorf("systemd: enable %s: %w", s.name, err)
	}
	verb := "start"
	if wrote && before.Running {
		verb = "restart"
	}
	if _, err := s.systemctl(ctx, verb, s.name); err != nil {
		return res, fmt.Errorf("systemd: %s %s: %w", verb, s.name, err)
	}
	if l := s.linger(ctx); l != "yes" {
		res.Notes = append(res.Notes, lingerNote(l))
	}
	return res, nil
}

func lingerNote(l string) string {
	if l == "" {
		return "could not tell whether lingering is on (loginctl show-user): without it systemd stops leo at logout; `loginctl enable-linger` turns it on"
	}
	return "lingering is off: systemd stops leo (and the agents) when you log out; `loginctl enable-linger` keeps it running"
}

// Uninstall disables and stops the unit (KillMode=process: the tmux server
// and the agents stay), removes the file and reloads systemd.
func (s *Systemd) Uninstall(ctx context.Context) (UninstallResult, error) {
	st, _ := s.show(ctx)
	res := UninstallResult{Path: s.path, WasLoaded: st.Registered}
	if st.Registered {
		if _, err := s.systemctl(ctx, "disable", "--now", s.name); err != nil {
			return res, fmt.Errorf("systemd: disable %s: %w", s.name, err)
		}
	}
	switch err := os.Remove(s.path); {
	case err == nil:
		res.Removed = true
	case !errors.Is(err, os.ErrNotExist):
		return res, fmt.Errorf("remove %s: %w", s.path, err)
	}
	if res.Removed || st.Registered {
		if _, err := s.systemctl(ctx, "daemon-reload"); err != nil {
			return res, fmt.Errorf("systemd: reload after removing %s: %w", s.path, err)
		}
	}
	return res, nil
}

// Start starts the unit.
func (s *Systemd) Start(ctx context.Context) error {
	if _, err := s.systemctl(ctx, "start", s.name); err != nil {
		return fmt.Errorf("systemd: start %s: %w", s.name, err)
	}
	return nil
}

// Stop stops the daemon; KillMode=process leaves the tmux server.
func (s *Systemd) Stop(ctx context.Context) error {
	if _, err := s.systemctl(ctx, "stop", s.name); err != nil {
		return fmt.Errorf("systemd: stop %s: %w", s.name, err)
	}
	return nil
}

// Restart restarts the unit (starts it when it is down).
func (s *Systemd) Restart(ctx context.Context) error {
	if _, err := s.systemctl(ctx, "restart", s.name); err != nil {
		return fmt.Errorf("systemd: restart %s: %w", s.name, err)
	}
	return nil
}

// Loaded reports whether systemd has the unit loaded (LoadState=loaded).
func (s *Systemd) Loaded(ctx context.Context) (bool, error) {
	st, err := s.show(ctx)
	return st.Registered, err
}

// Status is `systemctl --user show` of the unit, plus lingering.
func (s *Systemd) Status(ctx context.Context) (Status, error) {
	st, err := s.show(ctx)
	if err != nil {
		return st, err
	}
	st.Linger = s.linger(ctx)
	return st, nil
}

func (s *Systemd) show(ctx context.Context) (Status, error) {
	st := Status{Kind: s.Kind(), Name: s.name, Path: s.path, Installed: fileExists(s.path)}
	out, err := s.systemctl(ctx, "show", "--property=LoadState,ActiveState,SubState,MainPID,UnitFileState", s.name)
	if err != nil {
		return st, fmt.Errorf("systemd: show %s: %w", s.name, err)
	}
	p := properties(out)
	st.Registered = p["LoadState"] == "loaded"
	st.State = p["ActiveState"]
	if sub := p["SubState"]; sub != "" && st.State != "" {
		st.State += " (" + sub + ")"
	}
	st.Enabled = p["UnitFileState"] == "enabled"
	if pid, err := strconv.Atoi(p["MainPID"]); err == nil && pid > 0 {
		st.PID, st.Running = pid, true
	}
	return st, nil
}

// linger is loginctl's Linger for this user: "yes", "no", or "" when
// loginctl cannot tell.
func (s *Systemd) linger(ctx context.Context) string {
	out, err := s.opts.Runner.Run(ctx, "loginctl", "show-user", strconv.Itoa(s.opts.UID), "--property=Linger")
	if err != nil {
		return ""
	}
	return properties(out)["Linger"]
}

// properties parses Key=Value lines (systemctl show, loginctl show-user).
func properties(out []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
