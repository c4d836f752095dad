package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// kickInterval spaces out SIGCHLD kicks of the server (see kickIfUnreaped).
const kickInterval = 200 * time.Millisecond

// PaneInfo is one pane's state, read in a single tmux call.
type PaneInfo struct {
	SessionName string
	SessionID   string
	PaneID      string
	PID         int
	Dead        bool
	DeadStatus  int  // exit status when Dead and HasStatus
	HasStatus   bool // the process exited (rather than being signalled)
	DeadSignal  int  // signal number when Dead by a signal, else 0
	Attached    int  // clients attached to the session (session_attached)
	InMode      bool // copy/view mode: keys would not reach the program
	InputOff    bool
	AltScreen   bool
	CursorX     int
	CursorY     int
	Width       int
	Height      int
	// CurrentCommand is the foreground process name (pane_current_command).
	CurrentCommand string
	// Activity is the last time the window saw output (window_activity).
	Activity time.Time
	// SessionActivity is the last time the session saw activity.
	SessionActivity time.Time
	// DeadTime is when the pane's process died (pane_dead_time), if known.
	DeadTime time.Time
	// ServerPID is the tmux server's pid.
	ServerPID int
}

// ExitKnown reports whether the pane is dead and tmux has collected how
// it ended. tmux marks a pane dead when its pty closes, which can be a
// moment before it reaps the process: in that window Dead is true but
// neither DeadStatus nor DeadSignal is filled yet. Poll until ExitKnown
// before reading them.
func (p PaneInfo) ExitKnown() bool {
	return p.Dead && (p.HasStatus || p.DeadSignal != 0)
}

// paneFormat lists fields separated by tabs; pane_current_command is last
// so a stray tab in a process name cannot shift the others.
var paneFields = []string{
	"session_name", "session_id", "pane_id", "pane_pid",
	"pane_dead", "pane_dead_status", "pane_dead_signal",
	"session_attached", "pane_in_mode", "pane_input_off", "alternate_on",
	"cursor_x", "cursor_y", "pane_width", "pane_height",
	"window_activity", "session_activity", "pane_dead_time", "pid",
	"pane_current_command",
}

// paneFormat is every field; listFormat leaves out pane_current_command,
// which costs tmux a /proc lookup per pane and about doubles the time of
// a 200-pane listing. A sweep does not need it; the readiness probe of one
// pane (PaneInfo) does.
var (
	paneFormat = formatOf(paneFields)
	listFormat = formatOf(paneFields[:len(paneFields)-1])
)

func formatOf(fields []string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = "#{" + f + "}"
	}
	return strings.Join(parts, "\t")
}

// ListPanes returns every pane of every session in one tmux call, except
// the hidden control session. No server means no panes (nil, nil).
// CurrentCommand is left empty here (see listFormat); PaneInfo fills it.
func (s *Server) ListPanes(ctx context.Context) ([]PaneInfo, error) {
	panes, err := s.listPanes(ctx)
	if err == nil && s.kickIfUnreaped(panes...) {
		panes, err = s.listPanes(ctx)
	}
	return panes, err
}

func (s *Server) listPanes(ctx context.Context) ([]PaneInfo, error) {
	out, err := s.run(ctx, readOnly, "list-panes", "-a", "-F", listFormat)
	if err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return parsePaneList(out)
}

// kickIfUnreaped works around a tmux 3.3a race: now and then the server
// misses the SIGCHLD of a pane's process, leaving a zombie and a dead pane
// with neither pane_dead_status nor pane_dead_signal until some other
// child happens to exit. A SIGCHLD sent to the server makes it run its
// waitpid loop and record the status; no process is started. Kicks are
// spaced out, since a pane can also look dead while its process lives on
// without the terminal. It reports whether it kicked.
func (s *Server) kickIfUnreaped(panes ...PaneInfo) bool {
	for _, p := range panes {
		if !p.Dead || p.ExitKnown() || p.ServerPID <= 0 {
			continue
		}
		s.mu.Lock()
		due := time.Since(s.lastKick) >= kickInterval
		if due {
			s.lastKick = time.Now()
		}
		s.mu.Unlock()
		if !due {
			return false
		}
		if syscall.Kill(p.ServerPID, syscall.SIGCHLD) != nil {
			return false
		}
		s.kicks.Add(1)
		// Give the server's event loop a moment to reap before re-reading.
		time.Sleep(2 * time.Millisecond)
		return true
	}
	return false
}

// PaneInfo reads one pane. A missing pane is ErrNoSession.
func (s *Server) PaneInfo(ctx context.Context, paneID string) (PaneInfo, error) {
	if err := checkPane(paneID); err != nil {
		return PaneInfo{}, err
	}
	p, err := s.paneInfo(ctx, paneID)
	if err == nil && s.kickIfUnreaped(p) {
		p, err = s.paneInfo(ctx, paneID)
	}
	return p, err
}

func (s *Server) paneInfo(ctx context.Context, paneID string) (PaneInfo, error) {
	// display-message does not fail on a missing target (it falls back to
	// the current pane or prints blanks), so the pane id is checked.
	out, err := s.run(ctx, readOnly, "display-message", "-p", "-t", paneID, paneFormat)
	if err != nil {
		return PaneInfo{}, err
	}
	p, err := parsePaneLine(out)
	if err != nil || p.PaneID != paneID {
		return PaneInfo{}, &Error{Command: "display-message", Target: paneID, Msg: "can't find pane: " + paneID, Err: ErrNoSession}
	}
	return p, nil
}

func parsePaneList(out string) ([]PaneInfo, error) {
	var panes []PaneInfo
	for i, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		p, err := parsePaneLine(line)
		if err != nil {
			return nil, fmt.Errorf("tmux list-panes: line %d: %w", i+1, err)
		}
		if p.SessionName == ControlSession {
			continue
		}
		panes = append(panes, p)
	}
	return panes, nil
}

// parsePaneLine parses one line of paneFormat or listFormat.
func parsePaneLine(line string) (PaneInfo, error) {
	f := strings.SplitN(line, "\t", len(paneFields))
	if len(f) == len(paneFields)-1 {
		f = append(f, "") // listFormat: no pane_current_command
	}
	if len(f) != len(paneFields) {
		return PaneInfo{}, fmt.Errorf("want %d tab-separated fields, got %d", len(paneFields), len(f))
	}
	var p PaneInfo
	var perr error
	num := func(i int) int {
		if f[i] == "" {
			return 0
		}
		n, err := strconv.Atoi(f[i])
		if err != nil && perr == nil {
			perr = fmt.Errorf("field %s: %q is not a number", paneFields[i], f[i])
		}
		return n
	}
	flag := func(i int) bool { return num(i) != 0 }
	unix := func(i int) time.Time {
		n := num(i)
		if n == 0 {
			return time.Time{}
		}
		return time.Unix(int64(n), 0)
	}
	p.SessionName = f[0]
	p.SessionID = f[1]
	p.PaneID = f[2]
	p.PID = num(3)
	p.Dead = flag(4)
	p.HasStatus = p.Dead && f[5] != ""
	p.DeadStatus = num(5)
	p.DeadSignal = num(6)
	p.Attached = num(7)
	p.InMode = flag(8)
	p.InputOff = flag(9)
	p.AltScreen = flag(10)
	p.CursorX = num(11)
	p.CursorY = num(12)
	p.Width = num(13)
	p.Height = num(14)
	p.Activity = unix(15)
	p.SessionActivity = unix(16)
	p.DeadTime = unix(17)
	p.ServerPID = num(18)
	p.CurrentCommand = f[19]
	if perr != nil {
		return PaneInfo{}, perr
	}
	if !isPaneID(p.PaneID) {
		return PaneInfo{}, fmt.Errorf("field pane_id: %q is not a pane id", p.PaneID)
	}
	return p, nil
}

// NudgeReap sends the tmux server a SIGCHLD so it collects any child it
// failed to reap (see kickIfUnreaped; ListPanes and PaneInfo already do
// this on their own when they see a dead pane without an exit status). No
// server is not an error.
func (s *Server) NudgeReap(ctx context.Context) error {
	out, err := s.run(ctx, readOnly, "display-message", "-p", "#{pid}")
	if err != nil {
		if errors.Is(err, ErrNoServer) {
			return nil
		}
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return fmt.Errorf("tmux server pid %q: not a pid", out)
	}
	if err := syscall.Kill(pid, syscall.SIGCHLD); err != nil {
		return fmt.Errorf("signal tmux server %d: %w", pid, err)
	}
	s.kicks.Add(1)
	return nil
}
