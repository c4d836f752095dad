package agent

import (
	"context"
	"sync"

	"github.com/blackpaw-studio/leo/internal/api"
)

// EnsureTarget is the agent a persistent task delivers into: exactly one
// of Template and Task is set.
type EnsureTarget struct {
	// Template: an agent of templates.<Template> (the task's template:).
	Template string
	// Task: the task's implicit agent, launched from the task's own
	// resolved scope (tasks.<Task>: its harness, model, harness_options,
	// env, idle_suspend_after and queue_max).
	Task string
}

func (t EnsureTarget) scope() string {
	return (&Record{Template: t.Template, Task: t.Task}).scope()
}

// What Ensure did.
const (
	// EnsureRunning: the agent was running (or starting); nothing done.
	EnsureRunning = "running"
	// EnsureStarted: the agent was stopped (parked by the idle sweep, or
	// by hand) and was started, resuming its conversation.
	EnsureStarted = "started"
	// EnsureSpawned: there was no agent of the name; one was spawned.
	EnsureSpawned = "spawned"
)

// Ensure is the ensure-exists ladder of a persistent task: the agent called
// name is left running if it runs, started with resume if it is stopped
// (whether the idle sweep parked it or a person stopped it), and spawned
// under exactly that name from target if there is none. It returns which
// of EnsureRunning, EnsureStarted, EnsureSpawned happened.
//
// An agent of that name that comes from another scope is not taken over
// (agent_exists), nor is a tmux session of the name that no record claims.
// Concurrent calls for one name are serialized, so a name is never spawned
// twice.
func (m *Manager) Ensure(ctx context.Context, name string, target EnsureTarget) (string, error) {
	if (target.Template == "") == (target.Task == "") {
		return "", api.Errorf(api.CodeInvalidArgs, "ensure %s: exactly one of template and task must be set", name)
	}
	if err := CheckName(name); err != nil {
		return "", err
	}
	unlock := m.ensureLock(name)
	defer unlock()
	for attempt := 0; ; attempt++ {
		a, err := m.lookup(name)
		if err == nil {
			what, err := a.ensure(ctx, target)
			if api.HasCode(err, api.CodeNotFound) && attempt < 2 && a.gone() {
				continue // deleted meanwhile: spawn it again
			}
			return what, err
		}
		if !api.HasCode(err, api.CodeNotFound) {
			return "", err
		}
		err = m.ensureSpawn(ctx, name, target)
		if api.HasCode(err, api.CodeAgentExists) && attempt < 2 {
			if _, lerr := m.lookup(name); lerr == nil {
				continue // a spawn by hand took the name meanwhile
			}
		}
		if err != nil {
			return "", err
		}
		return EnsureSpawned, nil
	}
}

// ensure is the ladder for an agent that exists: left running, or started
// when stopped; one from another scope than target is not taken over.
func (a *agent) ensure(ctx context.Context, target EnsureTarget) (string, error) {
	a.op.Lock()
	defer a.op.Unlock()
	a.mu.Lock()
	name, template, task, state, deleted := a.rec.Name, a.rec.Template, a.rec.Task, a.rec.State, a.deleted
	a.mu.Unlock()
	if deleted {
		return "", api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	if template != target.Template || task != target.Task {
		have := (&Record{Template: template, Task: task}).scope()
		return "", api.Errorf(api.CodeAgentExists,
			"agent %s exists but comes from %s, not %s; leo does not take it over (rename or delete it)", name, have, target.scope())
	}
	if state != api.StateStopped {
		return EnsureRunning, nil
	}
	if err := a.start(ctx, "ensure (persistent task)"); err != nil {
		return "", err
	}
	return EnsureStarted, nil
}

func (m *Manager) ensureSpawn(ctx context.Context, name string, target EnsureTarget) error {
	cfg := m.opts.Config()
	if cfg == nil {
		return api.Errorf(api.CodeConfigError, "no config loaded")
	}
	res, err := m.resolve(cfg, target.Template, target.Task)
	if err != nil {
		return err
	}
	if _, err := m.lookupBinary(res.Harness.Binary(), res.HarnessName); err != nil {
		return err
	}
	// The agent takes this name or none, so only its session is asked
	// about (never the whole server's panes): one no record claims is
	// never taken over.
	session := TmuxSession(name)
	exists, err := m.tmux.HasSession(ctx, session)
	if err != nil {
		return api.Errorf(api.CodeTmux, "agent %s: ask tmux about session %s: %w", name, session, err)
	}
	live := map[string]bool{session: exists}
	_, err = m.spawnOnce(ctx, spawnScope{template: target.Template, task: target.Task}, res, name, live, true)
	return err
}

// keyedLock is one name's Ensure lock; n counts its holders and waiters so
// the map entry goes when nobody needs it.
type keyedLock struct {
	mu sync.Mutex
	n  int
}

// ensureLock serializes Ensure calls for one agent name and returns the
// unlock.
func (m *Manager) ensureLock(name string) func() {
	m.mu.Lock()
	if m.ensuring == nil {
		m.ensuring = map[string]*keyedLock{}
	}
	l := m.ensuring[name]
	if l == nil {
		l = &keyedLock{}
		m.ensuring[name] = l
	}
	l.n++
	m.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		m.mu.Lock()
		l.n--
		if l.n == 0 {
			delete(m.ensuring, name)
		}
		m.mu.Unlock()
	}
}
