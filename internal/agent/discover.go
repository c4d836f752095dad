package agent

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// firstTurnSlot serializes first turns per harness and workspace for
// harnesses whose conversation id is discovered (codex, opencode): their
// session stores only say which conversation in a workspace is newest, so
// two agents of one template whose first turns overlap would both find
// the later one, and one agent would resume the other's conversation while
// the other found none and restarted fresh. The slot is held from the
// first delivery until discovery ends (found, or DiscoverTimeout), so each
// agent's conversation is the newest when it is looked for. It returns the
// release (a no-op when no slot was needed).
func (a *agent) firstTurnSlot(ctx context.Context) (func(), error) {
	m := a.m
	a.mu.Lock()
	if !a.discoversID() || a.rec.SessionID != "" {
		a.mu.Unlock()
		return func() {}, nil
	}
	key := a.rec.Harness + "\x00" + filepath.Clean(a.rec.Workspace)
	a.mu.Unlock()
	m.mu.Lock()
	slot := m.firstTurns[key]
	if slot == nil {
		slot = make(chan struct{}, 1)
		m.firstTurns[key] = slot
	}
	m.mu.Unlock()
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var once sync.Once
	release := func() { once.Do(func() { <-slot }) }
	// A conversation that does not show up quickly (a harness that writes
	// it late, or a TUI whose first turn happened under an earlier daemon)
	// must not hold every other agent's first message back: discovery goes
	// on, but the next first turn may start.
	go func() {
		select {
		case <-m.clk.After(firstTurnHold):
			release()
		case <-m.ctx.Done():
		}
	}()
	return release, nil
}

// firstTurnHold bounds how long one agent's first turn keeps the next
// agent's first turn (same harness and workspace) waiting.
const firstTurnHold = 5 * time.Second

// discoversID reports whether a's harness picks its own conversation ids,
// which leo then finds (codex, opencode); a.mu must be held.
func (a *agent) discoversID() bool {
	return a.adapter != nil && !a.adapter.Sessions().PinsID()
}

// adoptRecorded stores the conversation a first turn was recorded in, for
// a harness that picks its own ids: the record names it, so no "newest
// conversation in the workspace" guess is needed. It reports whether it
// did.
func (a *agent) adoptRecorded(id string) bool {
	m := a.m
	if !m.claim(a, id, func() bool { return a.discoversID() && a.rec.SessionID == "" && !a.deleted }) {
		return false
	}
	_, harnessName := a.harness()
	m.saveAgent(a)
	m.log.Info("conversation id recorded with the first turn", "agent", a.name(), "harness", harnessName, "session", id)
	return true
}

// afterTurn starts, for a harness that picks its own ids (codex, opencode)
// and has none stored yet, the search for the conversation the first turn
// created.
// release is called once the search ends (at once when there is none).
func (a *agent) afterTurn(release func()) {
	m := a.m
	// m.mu over a.mu: the search is counted in m.bg only while Close has
	// not begun to wait for it.
	m.mu.Lock()
	a.mu.Lock()
	if !a.discoversID() || a.rec.SessionID != "" || a.discovering || m.closed {
		a.mu.Unlock()
		m.mu.Unlock()
		release()
		return
	}
	a.discovering = true
	h, gen := a.adapter, a.launchGen
	since := time.Time{}
	if a.rec.StartedAt != nil {
		since = *a.rec.StartedAt
	}
	rec := a.rec.clone()
	a.mu.Unlock()
	m.bg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.bg.Done()
		defer release()
		defer func() {
			a.mu.Lock()
			a.discovering = false
			a.mu.Unlock()
		}()
		a.discover(h, rec, gen, since)
	}()
}

// discover polls the harness's session store until the new conversation
// shows, then stores its id.
func (a *agent) discover(h harness.Harness, rec *Record, gen int, since time.Time) {
	m := a.m
	cfg := m.opts.Config()
	if cfg == nil {
		return
	}
	res, err := m.resolveRec(cfg, rec)
	if err != nil {
		return
	}
	q := harness.SessionQuery{Workspace: rec.Workspace, Env: m.sessionEnv(res), Since: since, Exclude: m.claimedIDs(rec.Name)}
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.DiscoverTimeout)
	defer cancel()
	poll := 100 * time.Millisecond
	for {
		id, err := h.Sessions().Discover(ctx, q)
		if err != nil && ctx.Err() == nil {
			m.log.Debug("session discovery", "agent", rec.Name, "err", err)
		}
		if id != "" && !m.claimed(id, rec.Name) {
			if !m.claim(a, id, func() bool { return a.launchGen == gen && a.rec.SessionID == "" && !a.deleted }) {
				return
			}
			m.saveAgent(a)
			m.log.Info("conversation id discovered", "agent", rec.Name, "harness", rec.Harness, "session", id)
			return
		}
		select {
		case <-ctx.Done():
			if m.ctx.Err() == nil {
				m.log.Warn("conversation id not found after the first turn; a restart will start fresh", "agent", rec.Name, "harness", rec.Harness)
			}
			return
		case <-m.clk.After(poll):
		}
		if poll < time.Second {
			poll *= 2
		}
	}
}

// claimedIDs lists the conversation ids the agents other than self own
// (two agents in one workspace must not resume each other's).
func (m *Manager) claimedIDs(self string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for n, a := range m.agents {
		a.mu.Lock()
		if n != self && a.rec.SessionID != "" {
			ids = append(ids, a.rec.SessionID)
		}
		a.mu.Unlock()
	}
	return ids
}

// claimed reports whether an agent other than self owns conversation id.
func (m *Manager) claimed(id, self string) bool {
	return slices.Contains(m.claimedIDs(self), id)
}

// claim makes id a's conversation when no other agent owns it and still
// (called with a.mu held) says a wants it. It reports whether it did. The
// check and the change are one step under m.mu, so no two agents claim
// one conversation.
func (m *Manager) claim(a *agent, id string, still func() bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.agents {
		if o == a {
			continue
		}
		o.mu.Lock()
		owned := o.rec.SessionID == id
		o.mu.Unlock()
		if owned {
			return false
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !still() {
		return false
	}
	a.rec.SessionID = id
	a.rec.SessionUsed = true
	return true
}
