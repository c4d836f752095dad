package agent

import (
	"context"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Busy reports whether the agent is working: a message queued or being
// delivered, its TUI showing a turn in flight, or the harness's record
// saying a turn runs. A stopped agent is idle.
// It costs one pane capture (the graceful-restart drain polls it).
func (m *Manager) Busy(ctx context.Context, name string) (bool, error) {
	a, err := m.lookup(name)
	if err != nil {
		return false, err
	}
	return a.busy(ctx), nil
}

func (a *agent) busy(ctx context.Context) bool {
	// Messages, not queue items: an internal job (the startup probe
	// finishing its save) is no work of the agent's.
	if a.queue.Messages() > 0 {
		return true
	}
	t, ok := a.livePane()
	if !ok {
		return false
	}
	if a.screenBusy(ctx, t) {
		return true
	}
	// codex streaming a reply looks idle: its record says otherwise.
	if t.Activity != nil {
		if rec, err := t.Activity(ctx); err == nil && rec.Found && rec.Running {
			return true
		}
	}
	return false
}

// turnInFlight is the drain's question: a message being delivered (past
// the pause), or a TUI whose screen says busy.
func (a *agent) turnInFlight(ctx context.Context) bool {
	a.mu.Lock()
	held := a.held
	a.mu.Unlock()
	if a.queue.Delivering() && !held {
		return true
	}
	t, ok := a.livePane()
	return ok && a.screenBusy(ctx, t)
}

// livePane is a's delivery target when it has a pane to look at (not
// stopped, a pane on record, its harness registered).
func (a *agent) livePane() (delivery.Target, bool) {
	a.mu.Lock()
	stopped, pane := a.rec.State == api.StateStopped, a.rec.PaneID
	a.mu.Unlock()
	if stopped || pane == "" {
		return delivery.Target{}, false
	}
	return a.target()
}

// screenBusy reports whether a's TUI shows a turn in flight. A dead or
// vanished pane is not working.
func (a *agent) screenBusy(ctx context.Context, t delivery.Target) bool {
	text, err := t.Pane.Capture(ctx)
	return err == nil && t.Screen.Classify(text).State == harness.ScreenBusy
}
