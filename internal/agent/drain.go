package agent

import (
	"context"
	"sort"
	"sync"
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
func (a *agent) waitUnpaused(ctx context.Context) error {
	p := &a.m.pause
	p.mu.Lock()
	if !p.paused {
		p.mu.Unlock()
		return nil
	}
	resumed := p.resumed
	p.mu.Unlock()
	a.mu.Lock()
	a.held = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.held = false
		a.mu.Unlock()
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
	var busy []string
	for _, a := range m.all() {
		if a.turnInFlight(ctx) {
			busy = append(busy, a.name())
		}
	}
	sort.Strings(busy)
	return busy
}
