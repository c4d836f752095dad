package agent

import (
	"context"
	"os"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// Lifecycle: the Manager's entry points find the agent and take its op
// lock; what then happens to the one agent is the runtime's.

// Spawn creates an agent from a template and launches it. The name is the
// requested one, or the template's; a taken name gets -2, -3…
func (m *Manager) Spawn(ctx context.Context, req api.SpawnRequest) (api.Agent, error) {
	if req.Template == "" {
		return api.Agent{}, api.Errorf(api.CodeInvalidArgs, "spawn: template is required")
	}
	base := baseName(req.Template)
	if req.Name != "" {
		if err := CheckName(req.Name); err != nil {
			return api.Agent{}, err
		}
		base = req.Name
	}
	cfg := m.opts.Config()
	if cfg == nil {
		return api.Agent{}, api.Errorf(api.CodeConfigError, "no config loaded")
	}
	res, err := m.resolve(cfg, req.Template, "")
	if err != nil {
		return api.Agent{}, err
	}
	// Fail before recording anything when the harness is not installed.
	if _, err := m.lookupBinary(res.Harness.Binary(), res.HarnessName); err != nil {
		return api.Agent{}, err
	}
	wt, err := m.planWorktree(ctx, cfg, res, req)
	if err != nil {
		return api.Agent{}, err
	}

	// A leo-<name> session no record claims (records lost, a session made
	// by hand) is never taken over: the name counts as taken.
	live, err := m.unclaimedSessions(ctx, base)
	if err != nil {
		return api.Agent{}, err
	}
	for attempt := 0; ; attempt++ {
		a, err := m.spawnOnce(ctx, spawnScope{template: req.Template, wt: wt}, res, base, live, false)
		if api.HasCode(err, api.CodeAgentExists) && attempt < 3 {
			// The session appeared after the listing: take the next name.
			m.log.Warn("spawn: a tmux session of the chosen name appeared meanwhile; leaving it alone and taking another name", "err", err)
			continue
		}
		return a, err
	}
}

// unclaimedSessions asks tmux about the names a spawn from base would
// take, in the order it takes them, until one has no session; the sessions
// found (no record claims them) are returned, to count as taken. Only those
// names are asked about, never the whole server's panes: a listing costs
// about 30 µs a pane, which made every spawn slower as the fleet grew.
func (m *Manager) unclaimedSessions(ctx context.Context, base string) (map[string]bool, error) {
	live := map[string]bool{}
	for {
		m.mu.Lock()
		name := uniqueName(base, func(n string) bool {
			_, rec := m.agents[n]
			return rec || live[TmuxSession(n)]
		})
		m.mu.Unlock()
		exists, err := m.tmux.HasSession(ctx, TmuxSession(name))
		if err != nil {
			return nil, api.Errorf(api.CodeTmux, "spawn: ask tmux about session %s: %w", TmuxSession(name), err)
		}
		if !exists {
			return live, nil
		}
		live[TmuxSession(name)] = true
	}
}

// spawnScope is the config scope a new agent launches from: a template, or
// a task's own scope (the implicit agent of a persistent task).
type spawnScope struct {
	template, task string
	// wt, when set, gives the agent its own worktree (worktree.go).
	wt *wtPlan
}

// spawnOnce records and launches one agent under a free name: one that no
// record has and whose tmux session is not in live. A session of that name
// found at launch is added to live and reported as agent_exists. With exact
// the agent gets base or nothing: a taken name is agent_exists.
func (m *Manager) spawnOnce(ctx context.Context, sc spawnScope, res *config.Resolved, base string, live map[string]bool, exact bool) (api.Agent, error) {
	now := m.clk.Now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return api.Agent{}, api.Errorf(api.CodeInternal, "agent manager is shutting down")
	}
	taken := func(n string) bool {
		_, taken := m.agents[n]
		return taken || live[TmuxSession(n)]
	}
	if exact && taken(base) {
		_, rec := m.agents[base]
		m.mu.Unlock()
		if rec {
			return api.Agent{}, api.Errorf(api.CodeAgentExists, "agent %s exists", base)
		}
		return api.Agent{}, api.Errorf(api.CodeAgentExists,
			"tmux session %s exists and no agent record claims it; leo leaves it alone", TmuxSession(base))
	}
	name := uniqueName(base, taken)
	if name != base && live[TmuxSession(base)] {
		m.log.Warn("spawn: a tmux session no record claims holds the name; leaving it alone", "session", TmuxSession(base), "agent", name)
	}
	rec := &Record{
		Name:      name,
		Template:  sc.template,
		Task:      sc.task,
		Harness:   res.HarnessName,
		Workspace: res.Workspace,
		Model:     res.Model,
		State:     api.StateStarting,
		EnvKeys:   append([]string(nil), res.EnvKeys...),
		CreatedAt: now,
	}
	a := m.newAgent(rec)
	a.fresh = true
	// Nobody can act on it before its first launch is done. Nobody can
	// see it yet either, so taking its op lock under m.mu waits for none.
	a.op.Lock()
	m.agents[name] = a
	m.mu.Unlock()
	defer a.op.Unlock()

	if sc.wt != nil {
		if err := a.makeWorktree(ctx, sc.wt); err != nil {
			if isCrash(err) {
				return api.Agent{}, err // a kill: nothing after it runs
			}
			m.mu.Lock()
			a.mu.Lock()
			a.deleted = true
			made := a.rec.Worktree.clone()
			a.mu.Unlock()
			delete(m.agents, name)
			m.mu.Unlock()
			m.saveAgent(a)
			if made != nil {
				if _, serr := os.Stat(made.Path); serr == nil {
					m.dropNewWorktree(context.WithoutCancel(ctx), made)
				}
			}
			return api.Agent{}, err
		}
	}

	if err := a.launch(ctx, "spawn", nil); err != nil {
		// A spawn that did not start leaves nothing behind of its own.
		m.mu.Lock()
		a.mu.Lock()
		a.deleted = true
		a.mu.Unlock()
		delete(m.agents, name)
		m.mu.Unlock()
		switch {
		case api.HasCode(err, api.CodeAgentExists):
			live[TmuxSession(name)] = true // not ours: left alone
		case api.HasCode(err, api.CodeTmux):
			// tmux may have made the session before failing.
			_ = m.killSession(context.WithoutCancel(ctx), name, "the spawn that created it failed")
		}
		m.saveAgent(a)
		a.mu.Lock()
		wt := a.rec.Worktree.clone()
		a.mu.Unlock()
		m.dropNewWorktree(context.WithoutCancel(ctx), wt)
		return api.Agent{}, err
	}
	m.log.Info("agent spawned", "agent", name, "scope", rec.scope(), "harness", res.HarnessName)
	v := a.view()
	a.withStatus(ctx, &v, false)
	return v, nil
}

// Start launches a stopped agent, resuming its stored conversation. A live
// agent is returned as is.
func (m *Manager) Start(ctx context.Context, name string) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	a.op.Lock()
	defer a.op.Unlock()
	if err := a.start(ctx, "start"); err != nil {
		return api.Agent{}, err
	}
	return m.Get(name)
}

// start launches a if it is stopped; a.op must be held.
func (a *agent) start(ctx context.Context, why string) error {
	a.mu.Lock()
	if a.deleted {
		a.mu.Unlock()
		return api.Errorf(api.CodeNotFound, "agent %q not found", a.rec.Name)
	}
	if a.rec.State != api.StateStopped {
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	return a.launch(ctx, why, func(r *Record) { r.Failures = 0 })
}

// Stop kills the agent's tmux session; it stays stopped (no restart) until
// started. Pending messages fail with "agent stopped".
func (m *Manager) Stop(ctx context.Context, name string) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	a.op.Lock()
	defer a.op.Unlock()
	if err := a.stop(ctx, false, "stopped"); err != nil {
		return api.Agent{}, err
	}
	return m.Get(name)
}

// stopLocked records the stop first, then kills the session: a crash in
// between leaves a stopped record whose session the next Restore kills,
// never a live agent nobody supervises. The record changes in memory only
// once it is saved: a failed save leaves the agent running, supervised and
// listed as it is, and says so.
func (a *agent) stop(ctx context.Context, wake bool, why string) error {
	m, name := a.m, a.name()
	if a.gone() {
		// Deleted while the caller waited for a.op: the session of its
		// name, if any, is a new agent's.
		return api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	err := a.commit(func(r *Record) {
		r.State = api.StateStopped
		r.WakeOnMessage = wake
		r.PaneID = ""
		r.PanePID = 0
		r.RestartDue, r.ExitedPID = nil, 0
		if !wake {
			r.Error = ""
			// Its waiting messages fail below (cancelled): off the disk
			// in the same write, so a crash in between cannot bring
			// them back to an agent a person stopped.
			r.Queue = nil
		}
	})
	if err != nil {
		return api.Errorf(api.CodeInternal, "agent %s not stopped: its record could not be saved, so its TUI was left running and supervised (%w)", name, err)
	}
	if !wake {
		a.queue.Cancel()
	}
	a.mu.Lock()
	if a.probeCancel != nil {
		a.probeCancel()
		a.probeCancel = nil
	}
	a.exitHandled = false
	a.nextRestart = time.Time{}
	a.mu.Unlock()
	if err := m.killSession(ctx, name, "agent "+why); err != nil {
		return api.Errorf(api.CodeTmux, "agent %s: kill tmux session: %w", name, err)
	}
	m.log.Info("agent "+why, "agent", name)
	return nil
}

// Restart relaunches the agent's TUI in place, resuming its conversation.
func (m *Manager) Restart(ctx context.Context, name string) (api.Agent, error) {
	return m.relaunch(ctx, name, "restart", nil)
}

// Reset starts a new conversation: the stored session id is dropped (claude
// gets a fresh pinned id) and the TUI relaunched.
func (m *Manager) Reset(ctx context.Context, name string) (api.Agent, error) {
	return m.relaunch(ctx, name, "reset", (*Record).retireConversation)
}

// relaunch is a person's restart or reset: the crash-loop count and any
// idle parking are cleared, prepare adjusts the record, and the TUI is
// launched again.
func (m *Manager) relaunch(ctx context.Context, name, why string, prepare func(r *Record)) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	a.op.Lock()
	defer a.op.Unlock()
	if err := a.relaunch(ctx, why, prepare); err != nil {
		return api.Agent{}, err
	}
	return m.Get(name)
}

// relaunch launches a again, its record adjusted by prepare; a.op must be
// held. The adjustment reaches memory with the launch's save, so a launch
// that fails before it leaves the record as it was, in memory and on disk
// (another agent's save may write every record meanwhile).
func (a *agent) relaunch(ctx context.Context, why string, prepare func(r *Record)) error {
	a.mu.Lock()
	name, deleted, oldSession := a.rec.Name, a.deleted, a.rec.SessionID
	a.mu.Unlock()
	if deleted {
		return api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	err := a.launch(ctx, why, func(r *Record) {
		if prepare != nil {
			prepare(r)
		}
		r.Failures = 0
		r.WakeOnMessage = false
	})
	if err == nil && why == "reset" {
		a.m.log.Info("agent reset: new conversation", "agent", name, "old_session", oldSession)
	}
	return err
}

// Delete removes a stopped agent's record, and its worktree when nothing
// in it would be lost (DeleteAgent without options).
func (m *Manager) Delete(ctx context.Context, name string) error {
	_, err := m.DeleteAgent(ctx, name, api.DeleteRequest{})
	return err
}

// delete removes a's record once it is stopped; a.op must be held.
func (a *agent) delete(ctx context.Context) error {
	m := a.m
	a.mu.Lock()
	name, state, deleted := a.rec.Name, a.rec.State, a.deleted
	a.mu.Unlock()
	if deleted {
		return api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	if state != api.StateStopped {
		return api.Errorf(api.CodeAgentRunning, "agent %q is %s; stop it before deleting", name, state)
	}
	// The session should already be gone; make sure before the record goes,
	// so no tmux session is ever left without a record.
	if err := m.killSession(ctx, name, "deleting its stopped agent"); err != nil {
		return api.Errorf(api.CodeTmux, "agent %s: kill tmux session: %w", name, err)
	}
	if err := m.commit(a, nil, true); err != nil {
		return api.Errorf(api.CodeInternal, "agent %s not deleted: its record could not be saved, so it is kept, stopped (%w)", name, err)
	}
	a.queue.Close()
	m.removeSent(name)
	m.log.Info("agent deleted", "agent", name)
	return nil
}

// Logs returns the last lines of the agent's pane (scrollback included). A
// stopped agent shows the tail kept from its last abnormal exit.
func (m *Manager) Logs(ctx context.Context, name string, lines int) (api.Logs, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Logs{}, err
	}
	if lines <= 0 {
		lines = 200
	}
	a.mu.Lock()
	pane := a.rec.PaneID
	var tail string
	if a.rec.LastExit != nil {
		tail = a.rec.LastExit.StderrTail
	}
	a.mu.Unlock()
	if pane == "" {
		return api.Logs{Agent: name, Text: tail}, nil
	}
	text, err := m.tmux.CaptureHistory(ctx, pane, lines)
	if err != nil {
		if tmux.IsNotFound(err) {
			return api.Logs{Agent: name, Text: tail}, nil
		}
		return api.Logs{}, api.Errorf(api.CodeTmux, "agent %s: capture pane: %w", name, err)
	}
	return api.Logs{Agent: name, Text: lastN(trimTrailingBlank(text), lines)}, nil
}
