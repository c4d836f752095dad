package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/launch"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// resolve applies the cascade to the scope an agent launches from:
// templates.<template>, or tasks.<task> when task is set (the implicit agent
// of a persistent task without template:).
func (m *Manager) resolve(cfg *config.Config, template, task string) (*config.Resolved, error) {
	kind, name := "template", template
	var res *config.Resolved
	var err error
	if task != "" {
		kind, name = "task", task
		res, err = cfg.ResolveTask(task)
	} else {
		res, err = cfg.ResolveTemplate(template)
	}
	if errors.Is(err, config.ErrUnknownScope) {
		return nil, api.Errorf(api.CodeNotFound, "%s %q not found in %s", kind, name, m.configName(cfg))
	}
	if err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%w", err)
	}
	if res.Harness == nil {
		return nil, api.Errorf(api.CodeConfigError, "%ss.%s: harness %q is not registered", kind, name, res.HarnessName)
	}
	return res, nil
}

// resolveRec is resolve for the scope rec comes from.
func (m *Manager) resolveRec(cfg *config.Config, rec *Record) (*config.Resolved, error) {
	return m.resolve(cfg, rec.Template, rec.Task)
}

func (m *Manager) configName(cfg *config.Config) string {
	if cfg.Path != "" {
		return cfg.Path
	}
	return "leo.yaml"
}

// lookupBinary finds a harness's program now (binpath.LookupHarness).
func (m *Manager) lookupBinary(binary, harnessName string) (string, error) {
	return m.opts.Resolver.LookupHarness(binary, harnessName)
}

// launchPlan is everything a launch decided before touching tmux.
type launchPlan struct {
	res       *config.Resolved
	spec      harness.LaunchSpec
	cmd       harness.Command
	env       map[string]string
	sessionID string
	resume    bool
}

// sessionEnv is the environment session lookups see (launch.SessionEnv):
// the launch env, with the PATH panes get.
func (m *Manager) sessionEnv(res *config.Resolved) map[string]string {
	return launch.SessionEnv(nil, res.Env, m.opts.Resolver)
}

// plan resolves the template and takes the launch steps every harness
// start shares (internal/launch): the program, the workspace by its real
// path, the session ladder (launch.Plan.ChooseSession), argv and env. The
// agent's own part is the harness's preparation and its turn-end signal.
func (m *Manager) plan(ctx context.Context, rec *Record) (*launchPlan, error) {
	cfg := m.opts.Config()
	if cfg == nil {
		return nil, api.Errorf(api.CodeConfigError, "no config loaded")
	}
	res, err := m.resolveRec(cfg, rec)
	if err != nil {
		return nil, err
	}
	if wt := rec.Worktree; wt != nil {
		// The agent's own checkout, at the workspace's place in it.
		res.Workspace = wt.Workdir()
	}
	lp, err := launch.New(launch.Request{
		Mode:     launch.Interactive,
		Scope:    res,
		Name:     rec.Name,
		Bridge:   cfg.MCPBridge(m.opts.Home, m.opts.LeoBinary),
		Resolver: m.opts.Resolver,
		Home:     m.opts.Home.Root,
	})
	var wsErr *launch.WorkspaceError
	if errors.As(err, &wsErr) {
		return nil, api.Errorf(api.CodeConfigError, "%s: workspace %s: %w", rec.scope(), wsErr.Dir, wsErr.Err)
	}
	if err != nil {
		return nil, err
	}
	res.Workspace = lp.Spec.Workspace // the record and the pane take the real path
	if wt := rec.Worktree; wt != nil {
		lp.Spec.WritableDirs = wt.writableDirs()
	}
	h := res.Harness

	s := lp.ChooseSession(ctx, rec.SessionID)
	switch {
	case s.Stored == launch.Unchecked:
		m.log.Warn("cannot check the stored conversation; resuming it anyway", "agent", rec.Name, "session", rec.SessionID, "err", s.CheckErr)
	case s.Stored == launch.Gone && s.ID == "":
		m.log.Warn("stored conversation not found; starting fresh", "agent", rec.Name, "harness", res.HarnessName, "session", rec.SessionID)
	}

	if p, ok := h.(harness.Preparer); ok {
		if err := p.Prepare(ctx, lp.Spec); err != nil {
			// Not fatal: a dialog it would have prevented is answered
			// from the pane.
			m.log.Warn("preparing the harness failed", "agent", rec.Name, "harness", res.HarnessName, "err", err)
		}
	}
	cmd, err := lp.Command()
	if errors.Is(err, launch.ErrEmptyCommand) {
		return nil, api.Errorf(api.CodeInternal, "harness %s built an empty command", res.HarnessName)
	}
	if err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%s: %w", rec.scope(), err)
	}
	cmd = m.withTurnEnd(ctx, h, lp.Spec, cmd, rec.Name)
	return &launchPlan{res: res, spec: lp.Spec, cmd: cmd, env: lp.Env(cmd).Map(), sessionID: s.ID, resume: s.Resume}, nil
}

// withTurnEnd has the harness run `leo hook turn-end` at the end of every
// turn (persistent tasks learn their outcome from it). Not fatal: without
// it the agent runs as before and a persistent firing in it times out.
func (m *Manager) withTurnEnd(ctx context.Context, h harness.Harness, spec harness.LaunchSpec, cmd harness.Command, name string) harness.Command {
	sig, ok := h.(harness.TurnEndSignaler)
	if !ok || m.opts.LeoBinary == "" {
		return cmd
	}
	hook := harness.TurnEndHook{
		Command: []string{m.opts.LeoBinary, "hook", "turn-end", "--harness", h.Name()},
		Dir:     m.opts.Home.HooksDir(),
	}
	out, err := sig.TurnEndSignal(ctx, spec, cmd, hook)
	if err != nil {
		m.log.Warn("the harness's turn-end signal could not be set up; persistent tasks in this agent will time out", "agent", name, "harness", h.Name(), "err", err)
		return cmd
	}
	return out
}

// launch starts (or restarts in place) a's TUI. a.op must be held. The
// record is saved as starting before tmux is touched, so a crash at any
// point leaves either a record to relaunch or a session it claims. adjust
// (when not nil) is the caller's change to the record (a reset's new
// conversation): the plan is made from it, and it reaches memory with the
// save as starting, never before (a launch that fails first leaves the
// record, in memory and on disk, as it was).
func (a *agent) launch(ctx context.Context, why string, adjust func(r *Record)) error {
	m := a.m
	a.mu.Lock()
	rec := a.rec.clone()
	a.mu.Unlock()
	if adjust != nil {
		adjust(rec)
	}
	name := rec.Name

	if err := a.ensureWorktree(ctx, rec); err != nil {
		return err
	}
	p, err := m.plan(ctx, rec)
	if err != nil {
		return err
	}
	dir := p.cmd.Dir
	if dir == "" {
		dir = p.res.Workspace
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return api.Errorf(api.CodeConfigError, "%s: workspace %s: %w", rec.scope(), dir, err)
	}

	gen, oldPane, fresh, err := a.markStarting(p, adjust)
	if err != nil {
		return api.Errorf(api.CodeInternal, "agent %s: %s failed: its record could not be saved, so nothing was launched and it stays as it was (%w)", name, why, err)
	}

	spec := tmux.SessionSpec{
		Name:   TmuxSession(name),
		Dir:    dir,
		Argv:   p.cmd.Argv,
		Env:    p.env,
		Width:  m.opts.Width,
		Height: m.opts.Height,
	}
	pane, created, err := m.startPane(ctx, name, oldPane, spec, staleEnvKeys(rec.SessionEnvKeys, p.env), !fresh)
	if api.HasCode(err, api.CodeAgentExists) {
		return err
	}
	if err != nil {
		a.mu.Lock()
		a.rec.Error = err.Error()
		a.mu.Unlock()
		m.saveAgent(a)
		return api.Errorf(api.CodeTmux, "agent %s: %w", name, err)
	}
	a.mu.Lock()
	a.fresh = false
	a.rec.PaneID = pane.PaneID
	a.rec.PanePID = pane.PID
	if created {
		a.rec.SessionEnvKeys = sessionEnvKeys(p.env)
	}
	a.mu.Unlock()
	m.saveAgent(a)
	m.log.Info("agent launched", "agent", name, "why", why, "harness", p.res.HarnessName,
		"session", p.sessionID, "resume", p.resume, "pane", pane.PaneID)
	a.probe(gen)
	return nil
}

// markStarting saves a's record as starting the launch p planned (adjusted
// by adjust), before tmux is touched; memory changes only once the file does (a failed save
// leaves the agent as it was, so a later start tries again). Then it opens
// the launch's generation, with p's adapter. It returns the generation,
// the pane on record and whether a was never launched.
func (a *agent) markStarting(p *launchPlan, adjust func(r *Record)) (gen int, oldPane string, fresh bool, err error) {
	now := a.m.clk.Now()
	err = a.commit(func(r *Record) {
		if adjust != nil {
			adjust(r)
		}
		oldPane, fresh = r.PaneID, a.fresh
		r.State = api.StateStarting
		r.WakeOnMessage = false
		r.Harness = p.res.HarnessName
		r.Workspace = p.res.Workspace
		r.Model = p.res.Model
		r.EnvKeys = append([]string(nil), p.res.EnvKeys...)
		r.SessionID = p.sessionID
		r.SessionUsed = p.sessionID != ""
		r.Resumed = p.resume
		r.StartedAt = &now
		// This launch carries out any pending restart. ExitedPID stays
		// until the new TUI is up: a daemon killed before the respawn
		// finds the same dead pane and must not count it again.
		r.RestartDue = nil
		// r.Error stays until the new TUI shows it is up (probe): a
		// relaunch after a failed start keeps saying why.
	})
	if err != nil {
		return 0, "", false, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.probeCancel != nil {
		a.probeCancel()
		a.probeCancel = nil
	}
	a.launchGen++
	a.adapter = p.res.Harness // the adapter of this launch, asked by everything until the next
	a.lastLaunch = now
	a.lastActivity = now
	a.exitHandled = false
	a.nextRestart = time.Time{}
	return a.launchGen, oldPane, fresh, nil
}

// startPane respawns the agent's own pane in place when it still exists
// (the pane id stays stable), else creates the session (created true).
// unset names the session-environment variables a respawned TUI must not
// inherit (see Record.SessionEnvKeys). A session of the name that is not
// the pane on record is replaced only when claimed (the agent's record
// existed before this launch); a spawn meeting one gets agent_exists and
// the session is left alone.
func (m *Manager) startPane(ctx context.Context, name, oldPane string, spec tmux.SessionSpec, unset []string, claimed bool) (pane tmux.Pane, created bool, err error) {
	if oldPane != "" {
		// Pane ids are reused by a new tmux server: respawn only a pane
		// that really belongs to this agent's session.
		info, err := m.tmux.PaneInfo(ctx, oldPane)
		if err == nil && info.SessionName == spec.Name {
			respawn := spec
			if len(unset) > 0 {
				respawn.Argv = append(m.envUnset(unset), spec.Argv...)
			}
			if err := m.tmux.RespawnPane(ctx, oldPane, respawn); err == nil {
				info, err := m.tmux.PaneInfo(ctx, oldPane)
				if err == nil {
					return tmux.Pane{SessionID: info.SessionID, PaneID: oldPane, PID: info.PID}, false, nil
				}
			} else if !tmux.IsNotFound(err) {
				return tmux.Pane{}, false, err
			}
		}
	}
	pane, err = m.tmux.NewSession(ctx, spec)
	if err != nil && isDuplicateSession(err) {
		if !claimed {
			return tmux.Pane{}, false, api.Errorf(api.CodeAgentExists,
				"tmux session %s exists and no agent record claims it; leo leaves it alone", spec.Name)
		}
		// A session of this name exists but is not the pane on record
		// (created by a launch a crash interrupted): the record claims it.
		if kerr := m.killSession(ctx, name, "replacing a session of this name that is not the pane on record"); kerr != nil {
			return tmux.Pane{}, false, kerr
		}
		pane, err = m.tmux.NewSession(ctx, spec)
	}
	return pane, err == nil, err
}

// envUnset is the env(1) prefix that drops keys from the environment a
// respawned pane inherits from its session (names only: no value is ever
// on a command line).
func (m *Manager) envUnset(keys []string) []string {
	bin, err := m.opts.Resolver.Lookup("env")
	if err != nil {
		bin = "/usr/bin/env"
	}
	out := []string{bin}
	for _, k := range keys {
		out = append(out, "-u", k)
	}
	return out
}

// sessionEnvKeys are the keys tmux new-session -e puts in the session's
// environment for env (PATH goes on the command line through env(1)).
func sessionEnvKeys(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		if k != "PATH" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// staleEnvKeys are the session's keys that env no longer sets.
func staleEnvKeys(session []string, env map[string]string) []string {
	var out []string
	for _, k := range session {
		if _, ok := env[k]; !ok && k != "PATH" {
			out = append(out, k)
		}
	}
	return out
}

func isDuplicateSession(err error) bool {
	var te *tmux.Error
	return errors.As(err, &te) && strings.Contains(te.Msg, "duplicate session")
}

// probe queues, ahead of any message, the wait for the new TUI to show its
// input line (answering startup dialogs from the screen), then marks the
// agent running. It is a queue job so it never interleaves with a delivery.
func (a *agent) probe(gen int) {
	m := a.m
	ctx, cancel := context.WithCancel(m.ctx)
	a.mu.Lock()
	a.probeCancel = cancel
	a.mu.Unlock()
	it := &delivery.Item{ID: fmt.Sprintf("startup-%d", gen), Job: func(jobCtx context.Context) error {
		defer cancel()
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			select {
			case <-jobCtx.Done():
				stop()
			case <-ctx.Done():
			}
		}()
		t, ok := a.target()
		if !ok {
			return nil
		}
		// Each start that failed in a row gives the next one twice as long
		// (up to 16×): a TUI that is only slow here (a loaded machine, a
		// first run that installs something) comes up in the end instead
		// of being relaunched at the same limit forever.
		a.mu.Lock()
		failures := a.rec.Failures
		a.mu.Unlock()
		d := m.driver
		d.ReadyTimeout = cmp.Or(d.ReadyTimeout, delivery.DefaultReadyTimeout) << min(failures, 4)
		if d.Observe == nil {
			// Which startup dialogs leo had to answer: a trust dialog here
			// means the preparation did not cover the workspace.
			name := a.name()
			d.Observe = func(what string) { m.log.Info("agent startup: "+what, "agent", name) }
		}
		_, err := d.AwaitStarted(ctx, t)
		// m.mu over a.mu: closing and this launch's outcome are one step.
		m.mu.Lock()
		a.mu.Lock()
		if m.closed || a.launchGen != gen || a.rec.State == api.StateStopped {
			a.mu.Unlock()
			m.mu.Unlock()
			return nil
		}
		if err != nil {
			a.mu.Unlock()
			m.mu.Unlock()
			if ctx.Err() == nil {
				a.startupFailed(gen, err)
			}
			return nil
		}
		a.rec.State = api.StateRunning
		a.rec.Error = ""
		a.rec.ExitedPID = 0
		a.noteState()
		a.mu.Unlock()
		// The save runs beside the job (the queue is free for messages at
		// once) but counted in m.bg, so Close waits for it: no save of this
		// manager may land on disk after Close returns, where it would
		// overwrite the next daemon's file. m.closed is false under m.mu, so
		// this Add comes before Close's Wait.
		m.bg.Add(1)
		m.mu.Unlock()
		go func() {
			defer m.bg.Done()
			m.saveAgent(a)
		}()
		return nil
	}}
	if err := a.queue.PushFront(it); err != nil {
		cancel()
	}
}

// startupFailed handles a TUI that never became ready: like a crash, it
// is relaunched after the restart backoff (the respawn replaces the stuck
// process), the agent shows the reason meanwhile (state starting, the
// reason in last_error), and the messages waiting for it fail now with
// that reason instead of each waiting out the readiness timeout again.
func (a *agent) startupFailed(gen int, err error) {
	m := a.m
	a.mu.Lock()
	if a.launchGen != gen || a.rec.State == api.StateStopped {
		a.mu.Unlock()
		return
	}
	failures := a.rec.Failures + 1
	name := a.rec.Name
	a.mu.Unlock()
	delay := m.policy.Backoff(failures - 1)
	due := m.clk.Now().Add(delay)
	reason := fmt.Sprintf("startup: %v; relaunching in %s", err, delay)
	if serr := a.commit(func(r *Record) {
		r.Failures, r.Error = failures, reason
		// Counted as an exit of this TUI: its death later is not another.
		r.RestartDue, r.ExitedPID = &due, r.PanePID
	}); serr != nil {
		m.log.Error("recording a failed start failed", "agent", name, "err", serr)
	}
	a.mu.Lock()
	if a.launchGen == gen {
		a.exitHandled = true
		a.nextRestart = due
	}
	a.mu.Unlock()
	m.log.Warn("agent TUI did not come up; relaunching", "agent", name, "err", err, "retry_in", delay)
	a.queue.CancelWith(fmt.Errorf("the agent's TUI did not become ready (%w)", err))
	m.Kick()
}

// stderrTail keeps the last lines a dead pane showed (its exit message).
func stderrTail(capture string) string {
	return lastN(trimTrailingBlank(capture), 12)
}

func trimTrailingBlank(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func lastN(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "\n")
	const maxTail = 4096
	if len(out) > maxTail {
		out = out[len(out)-maxTail:]
	}
	return out
}
