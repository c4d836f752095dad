package agent

import (
	"context"
	"sort"
	"sync"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// The graceful-restart drain (leo service restart, the handovers): the
// daemon pauses deliveries, then polls TurnsInFlight until no agent works.
// Held messages stay on the agents' durable queues, so the next daemon
// delivers them; a drain that gives up resumes.

// pauseGate is the manager-wide hold on deliveries.
type pauseGate struct {
	mu      sync.Mutex
	paused  bool
	resumed chan struct{} // closed by Resume
}

// PauseDeliveries holds every agent's queue before its next message: no
// message is pasted (or submitted) until ResumeDeliveries. Internal jobs
// (the startup probe of a launch) still run. Pausing twice is one pause.
func (m *Manager) PauseDeliveries() {
	m.pause.mu.Lock()
	defer m.pause.mu.Unlock()
	if !m.pause.paused {
		m.pause.paused = true
		m.pause.resumed = make(chan struct{})
		m.log.Info("deliveries paused (drain)")
	}
}

// ResumeDeliveries lets held messages go.
func (m *Manager) ResumeDeliveries() {
	m.pause.mu.Lock()
	defer m.pause.mu.Unlock()
	if m.pause.paused {
		m.pause.paused = false
		close(m.pause.resumed)
		m.log.Info("deliveries resumed")
	}
}

// DeliveriesPaused reports whether a drain holds deliveries.
func (m *Manager) DeliveriesPaused() bool {
	m.pause.mu.Lock()
	defer m.pause.mu.Unlock()
	return m.pause.paused
}

// waitUnpaused blocks a's queue worker while deliveries are paused, with
// a marked held (not working) meanwhile.
func (m *Manager) waitUnpaused(ctx context.Context, a *agent) error {
	m.pause.mu.Lock()
	if !m.pause.paused {
		m.pause.mu.Unlock()
		return nil
	}
	resumed := m.pause.resumed
	m.pause.mu.Unlock()
	m.mu.Lock()
	a.held = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		a.held = false
		m.mu.Unlock()
	}()
	select {
	case <-resumed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TurnsInFlight names the agents with a turn in flight, sorted: a message
// being delivered (past the pause), or a TUI whose screen says busy. A
// stopped agent and a message held by the pause are no work. It costs one
// pane capture per running agent.
func (m *Manager) TurnsInFlight(ctx context.Context) []string {
	m.mu.Lock()
	all := make([]*agent, 0, len(m.agents))
	for _, a := range m.agents {
		all = append(all, a)
	}
	m.mu.Unlock()
	var busy []string
	for _, a := range all {
		if m.turnInFlight(ctx, a) {
			m.mu.Lock()
			busy = append(busy, a.rec.Name)
			m.mu.Unlock()
		}
	}
	sort.Strings(busy)
	return busy
}

func (m *Manager) turnInFlight(ctx context.Context, a *agent) bool {
	m.mu.Lock()
	held, stopped, pane := a.held, a.rec.State == api.StateStopped, a.rec.PaneID
	m.mu.Unlock()
	if a.queue.Delivering() && !held {
		return true
	}
	if stopped || pane == "" {
		return false
	}
	t, ok := m.target(a)
	if !ok {
		return false
	}
	text, err := t.Pane.Capture(ctx)
	if err != nil {
		return false // a dead or vanished pane is not working
	}
	return t.Screen.Classify(text).State == harness.ScreenBusy
}
