package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
	"window_activity", "session_activity", "pane_dead_time",
	"pane_current_command",
}

var paneFormat = func() string {
	parts := make([]string, len(paneFields))
	for i, f := range paneFields {
		parts[i] = "#{" + f + "}"
	}
	return strings.Join(parts, "\t")
}()

// ListPanes returns every pane of every session in one tmux call, except
// the hidden control session. No server means no panes (nil, nil).
func (s *Server) ListPanes(ctx context.Context) ([]PaneInfo, error) {
	out, err := s.run(ctx, readOnly, "list-panes", "-a", "-F", paneFormat)
	if err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return parsePaneList(out)
}

// PaneInfo reads one pane. A missing pane is ErrNoSession.
func (s *Server) PaneInfo(ctx context.Context, paneID string) (PaneInfo, error) {
	if err := checkPane(paneID); err != nil {
		return PaneInfo{}, err
	}
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

// parsePaneLine parses one line of paneFormat.
func parsePaneLine(line string) (PaneInfo, error) {
	f := strings.SplitN(line, "\t", len(paneFields))
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
	p.CurrentCommand = f[18]
	if perr != nil {
		return PaneInfo{}, perr
	}
	if !paneIDRe.MatchString(p.PaneID) {
		return PaneInfo{}, fmt.Errorf("field pane_id: %q is not a pane id", p.PaneID)
	}
	return p, nil
}
