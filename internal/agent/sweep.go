package agent

import (
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// agentView is what the sweep needs to know about one agent, copied under
// the manager's lock so planning runs without it.
type agentView struct {
	Name   string
	State  api.AgentState
	PaneID string
	// ExitHandled: the exit was recorded; a restart is scheduled.
	ExitHandled bool
	NextRestart time.Time
	// LastLaunch is when leo last launched (or adopted) the TUI.
	LastLaunch time.Time
	// IdleAfter is the template's idle_suspend_after (0: never).
	IdleAfter time.Duration
	// LastActivity is the last delivery (or launch) leo made.
	LastActivity time.Time
	// Queued counts messages pending or in flight.
	Queued int
}

type actionKind int

const (
	// actExited: the pane's process is dead; record the exit, schedule a restart.
	actExited actionKind = iota + 1
	// actVanished: the tmux session is gone without leo killing it.
	actVanished
	// actRestart: a scheduled restart is due.
	actRestart
	// actSuspend: idle longer than idle_suspend_after, nobody attached.
	actSuspend
	// actAdopt: the session's pane is not the one on record (update it).
	actAdopt
)

func (k actionKind) String() string {
	switch k {
	case actExited:
		return "exited"
	case actVanished:
		return "vanished"
	case actRestart:
		return "restart"
	case actSuspend:
		return "suspend"
	case actAdopt:
		return "adopt"
	}
	return "none"
}

type sweepAction struct {
	Kind actionKind
	Name string
	Pane tmux.PaneInfo
}

// planSweep decides, from one list-panes snapshot taken at listedAt, what
// each agent needs. It is pure: the same inputs give the same plan.
// Agents launched after the snapshot are left alone (the snapshot cannot
// speak for them).
func planSweep(now, listedAt time.Time, agents []agentView, panes map[string]tmux.PaneInfo) []sweepAction {
	var out []sweepAction
	for _, a := range agents {
		if a.State == api.StateStopped {
			continue
		}
		if a.ExitHandled {
			if !now.Before(a.NextRestart) {
				out = append(out, sweepAction{Kind: actRestart, Name: a.Name})
			}
			continue
		}
		if !a.LastLaunch.Before(listedAt) {
			continue
		}
		p, ok := panes[TmuxSession(a.Name)]
		switch {
		case !ok:
			out = append(out, sweepAction{Kind: actVanished, Name: a.Name})
			continue
		case p.Dead:
			out = append(out, sweepAction{Kind: actExited, Name: a.Name, Pane: p})
			continue
		case p.PaneID != a.PaneID:
			out = append(out, sweepAction{Kind: actAdopt, Name: a.Name, Pane: p})
		}
		if idleDue(now, a, p) {
			out = append(out, sweepAction{Kind: actSuspend, Name: a.Name, Pane: p})
		}
	}
	return out
}

// idleDue: a running agent with idle_suspend_after set, no client attached,
// nothing queued, and neither a delivery nor pane output for that long.
func idleDue(now time.Time, a agentView, p tmux.PaneInfo) bool {
	if a.IdleAfter <= 0 || a.State != api.StateRunning || p.Attached > 0 || a.Queued > 0 {
		return false
	}
	last := a.LastActivity
	if p.Activity.After(last) {
		last = p.Activity
	}
	if a.LastLaunch.After(last) {
		last = a.LastLaunch
	}
	return now.Sub(last) >= a.IdleAfter
}

// panesBySession indexes a list-panes result by session name (one pane per
// agent session; the first wins if someone split a window).
func panesBySession(list []tmux.PaneInfo) map[string]tmux.PaneInfo {
	m := make(map[string]tmux.PaneInfo, len(list))
	for _, p := range list {
		if _, dup := m[p.SessionName]; !dup {
			m[p.SessionName] = p
		}
	}
	return m
}
