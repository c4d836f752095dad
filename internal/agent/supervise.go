package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/tmux"
	"golang.org/x/sys/unix"
)

// Run supervises until ctx ends or Close: each tick (or Kick) is one sweep.
// It also wakes exactly when the earliest scheduled restart is due.
func (m *Manager) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		m.Sweep(ctx)
		wait := m.opts.Tick
		if due, ok := m.nextDue(); ok {
			if d := due.Sub(m.clk.Now()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := m.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-m.kick:
		case <-t.C():
		}
		t.Stop()
	}
}

func (m *Manager) nextDue() (time.Time, bool) {
	var due time.Time
	for _, a := range m.all() {
		a.mu.Lock()
		if a.exitHandled && (due.IsZero() || a.nextRestart.Before(due)) {
			due = a.nextRestart
		}
		a.mu.Unlock()
	}
	return due, !due.IsZero()
}

// SweepStats says what one sweep cost and did (benchmarks, logs).
type SweepStats struct {
	TmuxCalls int64
	Actions   int
}

// Sweep lists every pane once and acts on what it shows: exits, vanished
// sessions, due restarts, idle agents. Its tmux cost is one call however
// many agents there are, plus one per agent that needs something done.
func (m *Manager) Sweep(ctx context.Context) SweepStats {
	if !m.anyWatched() {
		// Nothing the listing could show would lead to an action (planSweep
		// passes over stopped agents): an empty fleet costs no tmux call.
		// A spawn or restore adds its agent before the next tick.
		return SweepStats{}
	}
	before := m.tmux.CallCount()
	listedAt := m.clk.Now()
	list, err := m.tmux.ListPanes(ctx)
	if err != nil {
		m.log.Warn("supervisor: list panes failed", "err", err)
		return SweepStats{TmuxCalls: m.tmux.CallCount() - before}
	}
	panes := panesBySession(list)
	views := m.views()
	plan := planSweep(m.clk.Now(), listedAt, views, panes)
	for _, act := range plan {
		if ctx.Err() != nil {
			break
		}
		m.act(ctx, act, listedAt)
	}
	return SweepStats{TmuxCalls: m.tmux.CallCount() - before, Actions: len(plan)}
}

// anyWatched reports whether some agent is neither deleted nor stopped:
// one the sweep must look at.
func (m *Manager) anyWatched() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.agents {
		if !a.deleted && a.rec.State != api.StateStopped {
			return true
		}
	}
	return false
}

// views snapshots what planning needs.
func (m *Manager) views() []agentView {
	cfg := m.opts.Config()
	all := m.all()
	out := make([]agentView, 0, len(all))
	for _, a := range all {
		a.mu.Lock()
		if a.deleted {
			a.mu.Unlock()
			continue
		}
		v := a.sweepView()
		scope := &Record{Template: a.rec.Template, Task: a.rec.Task}
		a.mu.Unlock()
		v.IdleAfter = m.idleAfter(cfg, scope)
		out = append(out, v)
	}
	return out
}

// sweepView is what the sweep plans from (IdleAfter aside); a.mu must be
// held.
func (a *agent) sweepView() agentView {
	return agentView{
		Name:         a.rec.Name,
		State:        a.rec.State,
		PaneID:       a.rec.PaneID,
		ExitHandled:  a.exitHandled,
		NextRestart:  a.nextRestart,
		LastLaunch:   a.lastLaunch,
		LastActivity: a.lastActivity,
		Queued:       a.queue.Len(),
	}
}

// idleAfter is idle_suspend_after of the scope rec launches from, cached
// per scope for one config value (0 when it does not resolve).
func (m *Manager) idleAfter(cfg *config.Config, rec *Record) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cfg != m.idleFor {
		m.idleFor = cfg
		m.idleCache = map[string]time.Duration{}
	}
	scope := rec.scope()
	idle, ok := m.idleCache[scope]
	if !ok && cfg != nil {
		if res, err := m.resolveRec(cfg, rec); err == nil {
			idle = res.IdleSuspendAfter
		}
		m.idleCache[scope] = idle
	}
	return idle
}

// act carries out one planned action under the agent's op lock. An agent
// busy with another operation is skipped; the next sweep sees it again.
func (m *Manager) act(ctx context.Context, act sweepAction, listedAt time.Time) {
	m.mu.Lock()
	a, ok := m.agents[act.Name]
	m.mu.Unlock()
	if !ok || !a.op.TryLock() {
		return
	}
	defer a.op.Unlock()
	a.mu.Lock()
	stale := a.deleted || a.rec.State == api.StateStopped ||
		(act.Kind != actRestart && !a.lastLaunch.Before(listedAt)) ||
		(act.Kind == actRestart && !a.exitHandled)
	a.mu.Unlock()
	if stale {
		return
	}
	switch act.Kind {
	case actExited:
		a.onExit(ctx, act.Pane, true)
	case actVanished:
		a.onExit(ctx, tmux.PaneInfo{}, false)
	case actRestart:
		a.restartDue(ctx)
	case actSuspend:
		a.suspend(ctx)
	case actAdopt:
		a.mu.Lock()
		a.rec.PaneID = act.Pane.PaneID
		a.rec.PanePID = act.Pane.PID
		a.mu.Unlock()
		m.saveAgent(a)
	}
}

// statusGrace is how long a dead pane may show no exit status: tmux marks
// the pane dead when the pty closes and fills in the status when it reaps
// the child, a moment later.
const statusGrace = 2 * time.Second

// onExit records how the TUI ended and schedules its restart.
func (a *agent) onExit(ctx context.Context, p tmux.PaneInfo, paneLeft bool) {
	m := a.m
	now := m.clk.Now()
	if a.exitCounted(p, paneLeft) {
		return
	}
	if paneLeft && !p.HasStatus && p.DeadSignal == 0 {
		a.mu.Lock()
		first := a.deadSince.IsZero() || a.deadPane != p.PaneID
		if first {
			a.deadSince, a.deadPane = now, p.PaneID
		}
		early := now.Sub(a.deadSince) < statusGrace
		a.mu.Unlock()
		if first {
			// Usually the status is a moment behind; if tmux missed the
			// SIGCHLD it never comes unless another child exits.
			if err := m.tmux.NudgeReap(ctx); err != nil {
				m.log.Debug("nudging tmux to reap failed", "err", err)
			}
		}
		if early {
			return // the next sweep reads the status
		}
	}
	var exit api.Exit
	exit.At = now
	if paneLeft {
		if p.HasStatus {
			exit.Status = p.DeadStatus
		}
		if p.DeadSignal != 0 {
			exit.Signal = signalName(p.DeadSignal)
		}
		if text, err := m.tmux.CaptureHistory(ctx, p.PaneID, 50); err == nil {
			exit.StderrTail = stderrTail(dropDeadBanner(text))
		}
	} else {
		exit.Status = -1
		exit.StderrTail = "the tmux session disappeared (killed outside leo, or the tmux server stopped)"
	}

	a.mu.Lock()
	r := a.rec
	launched := now
	if r.StartedAt != nil {
		launched = *r.StartedAt
	}
	d := m.policy.OnExit(ExitFacts{LaunchedAt: launched, ExitedAt: now, Resumed: r.Resumed, Failures: r.Failures})
	dropped := ""
	if d.DropSession {
		dropped = r.SessionID
		r.retireConversation()
	}
	r.Failures = d.Failures
	abnormal := !paneLeft || exit.Status != 0 || exit.Signal != ""
	if abnormal {
		e := exit
		r.LastExit = &e
	}
	r.Resumed = false
	r.ExitedPID = exitedPID(r, p, paneLeft)
	a.scheduleRestart(now.Add(d.Delay), paneLeft)
	name := r.Name
	how := fmt.Sprintf("exited with status %d", exit.Status)
	if exit.Signal != "" {
		how = "killed by signal " + exit.Signal
	}
	m.publish(api.Event{Type: api.EventAgentExited, Agent: name, Failures: r.Failures,
		Reason: fmt.Sprintf("%s after %s; restarting in %s", how, now.Sub(launched).Round(time.Second), d.Delay.Round(time.Millisecond))})
	a.mu.Unlock()
	m.saveAgent(a)
	m.log.Warn("agent exited; restarting", "agent", name, "status", exit.Status, "signal", exit.Signal,
		"up", now.Sub(launched).Round(time.Millisecond), "restart_in", d.Delay)
	if dropped != "" {
		m.log.Warn("agent exited right after resuming its conversation; the next launch starts fresh",
			"agent", name, "dropped_session", dropped)
	}
}

// scheduleRestart records a's exit as handled and its restart as due at
// due (kept in the record, so a restored daemon continues it then). A pane
// that is still there keeps its ids. a.mu must be held.
func (a *agent) scheduleRestart(due time.Time, paneLeft bool) {
	r := a.rec
	r.State = api.StateStarting
	r.RestartDue = &due
	if !paneLeft {
		r.PaneID, r.PanePID = "", 0
	}
	a.exitHandled = true
	a.nextRestart = due
	a.deadSince, a.deadPane = time.Time{}, ""
	if a.probeCancel != nil {
		a.probeCancel()
		a.probeCancel = nil
	}
}

// exitedPID is the pid of the TUI whose exit this is: the dead pane's, or
// the last one leo knew of when the session vanished (0 if none).
func exitedPID(r *Record, p tmux.PaneInfo, paneLeft bool) int {
	if paneLeft && p.PID != 0 {
		return p.PID
	}
	return r.PanePID
}

// exitCounted continues, without counting it again, an exit that was
// counted already: by a daemon killed since (its restart then runs when
// it was due), or before a relaunch that was cut short (then now). An
// exit counts once, however many daemons see its dead pane.
func (a *agent) exitCounted(p tmux.PaneInfo, paneLeft bool) bool {
	m := a.m
	now := m.clk.Now()
	a.mu.Lock()
	r := a.rec
	pid := exitedPID(r, p, paneLeft)
	if pid == 0 || pid != r.ExitedPID {
		a.mu.Unlock()
		return false
	}
	due := now
	if r.RestartDue != nil {
		due = *r.RestartDue
	}
	a.scheduleRestart(due, paneLeft)
	name := r.Name
	a.mu.Unlock()
	m.saveAgent(a)
	m.log.Info("agent exit already counted; its restart continues", "agent", name, "pid", pid, "restart_at", due)
	return true
}

// restartDue relaunches after the backoff.
func (a *agent) restartDue(ctx context.Context) {
	m := a.m
	err := a.launch(ctx, "restart after exit", nil)
	now := m.clk.Now()
	a.mu.Lock()
	name := a.rec.Name
	if err == nil {
		a.rec.Restarts++
		a.mu.Unlock()
		m.saveAgent(a)
		return
	}
	code := api.CodeOf(err)
	if code == api.CodeClaudeNotFound || code == api.CodeHarnessNotFound || code == api.CodeNotFound || code == api.CodeConfigError {
		// Nothing a retry fixes: park it with the reason, like boot restore.
		a.exitHandled = false
		a.rec.State = api.StateStopped
		a.rec.Error = err.Error()
		a.mu.Unlock()
		m.saveAgent(a)
		m.log.Error("agent cannot be restarted; stopped", "agent", name, "err", err)
		// Its TUI will not come back: queued messages fail now, with the
		// reason, instead of each waiting out the readiness timeout.
		a.queue.CancelWith(fmt.Errorf("agent stopped: %w", err))
		return
	}
	a.rec.Failures++
	delay := m.policy.Backoff(a.rec.Failures - 1)
	due := now.Add(delay)
	a.rec.RestartDue = &due
	a.exitHandled = true
	a.nextRestart = due
	a.rec.Error = err.Error()
	a.mu.Unlock()
	m.saveAgent(a)
	m.log.Error("agent restart failed; retrying", "agent", name, "err", err, "retry_in", delay)
}

// suspend parks an idle agent: stopped, wake_on_message, session killed.
func (a *agent) suspend(ctx context.Context) {
	if a.queue.Len() > 0 {
		return
	}
	if err := a.stop(ctx, true, "suspended (idle)"); err != nil {
		a.m.log.Error("idle suspend failed", "agent", a.name(), "err", err)
	}
}

// dropDeadBanner removes tmux's own "Pane is dead" line from a capture.
func dropDeadBanner(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Pane is dead") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func signalName(n int) string {
	if name := unix.SignalName(unix.Signal(n)); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", n)
}
