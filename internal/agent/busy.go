package agent

import (
	"context"

	"github.com/blackpaw-studio/leo/internal/api"
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
	// Messages, not queue items: an internal job (the startup probe
	// finishing its save) is no work of the agent's.
	if a.queue.Messages() > 0 {
		return true, nil
	}
	m.mu.Lock()
	stopped, pane := a.rec.State == api.StateStopped, a.rec.PaneID
	m.mu.Unlock()
	if stopped || pane == "" {
		return false, nil
	}
	t, ok := m.target(a)
	if !ok {
		return false, nil
	}
	text, err := t.Pane.Capture(ctx)
	if err != nil {
		return false, nil // a dead or vanished pane is not working
	}
	if t.Screen.Classify(text).State == harness.ScreenBusy {
		return true, nil
	}
	// codex streaming a reply looks idle: its record says otherwise.
	if t.Activity != nil {
		if rec, err := t.Activity(ctx); err == nil && rec.Found && rec.Running {
			return true, nil
		}
	}
	return false, nil
}
