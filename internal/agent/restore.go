package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// RestoreStats says what a boot restore did.
type RestoreStats struct {
	Adopted, Relaunched, Stopped, Failed int
	// Skipped counts records leo did not understand (unknown state, bad
	// name; or every record of a file it could not read): left out, kept
	// aside, their sessions left alone.
	Skipped int
	// Unclaimed counts leo-* sessions no record claims (left alone).
	Unclaimed int
	// Pending counts restarts the last daemon decided and had not carried
	// out: continued at the time they were due.
	Pending int
	// Killed counts sessions of stopped records (an interrupted stop).
	Killed int
}

// Restore loads the records and reconciles them with tmux, once, at boot:
//   - a record whose tmux session lives is adopted as is (never relaunched;
//     a dead pane in it is an exit the first sweep restarts);
//   - a running/starting record whose session is gone is relaunched,
//     resuming its conversation (a claude agent with claude missing is kept
//     stopped with the reason; other harnesses are unaffected);
//   - a stopped record stays stopped; a session it still has (a stop
//     interrupted by a crash) is killed to finish the stop;
//   - a leo-* session no record claims is left alone and logged: leo never
//     kills a session it cannot account for. That includes the sessions of
//     records it does not understand (an unknown state, a newer file
//     version, a file of the wrong shape): those are reported and kept
//     aside, never taken as stopped.
//
// It returns when every agent is settled, so the daemon can report ready.
func (m *Manager) Restore(ctx context.Context) error {
	_, err := m.restore(ctx)
	return err
}

// restore runs boot restore's steps in order and says what it did.
func (m *Manager) restore(ctx context.Context) (RestoreStats, error) {
	var st RestoreStats
	recs, err := m.loadRecords(&st)
	if err != nil {
		return st, err
	}
	list, err := m.tmux.ListPanes(ctx)
	if err != nil {
		return st, err
	}
	panes := panesBySession(list)
	plan := m.takeRecords(recs, panes, &st)
	m.reportUnclaimed(panes, plan.claimed, &st)
	// A usage limit the last daemon held an agent for holds on, until
	// the same time, before any of its messages is queued again.
	for _, a := range m.all() {
		a.rearmLimit()
	}
	for _, a := range plan.kill {
		if m.killSession(ctx, a.name(), "its record says stopped: finishing a stop a crash interrupted") == nil {
			st.Killed++
		}
	}
	m.probeAdopted(plan.relaunch)
	// A message the last daemon pasted and was killed before submitting
	// is finished first, from what the screen shows (never pasted again),
	// ahead of any message sent to this daemon.
	for _, a := range plan.unfinished {
		a.finishInFlight()
	}
	m.relaunchAtBoot(ctx, plan.relaunch, &st)
	// Then the messages the last daemon had accepted and not yet put in
	// flight, in the order it accepted them, behind the one it was
	// finishing.
	for _, a := range m.restoredQueues() {
		a.requeue()
	}
	if err := m.save(); err != nil {
		return st, err
	}
	m.log.Info("agents restored", "adopted", st.Adopted, "relaunched", st.Relaunched, "pending_restarts", st.Pending, "stopped", st.Stopped, "failed", st.Failed,
		"killed", st.Killed, "skipped", st.Skipped, "unclaimed", st.Unclaimed)
	return st, nil
}

// loadRecords reads the records leo can act on. A file or records it does
// not understand are reported (log and Problems) and left out.
func (m *Manager) loadRecords(st *RestoreStats) ([]*Record, error) {
	recs, skipped, aside, err := m.store.Load()
	if err != nil {
		if !IsCorrupt(err) {
			return nil, err
		}
		// statefile kept the file aside; start from no agents rather than
		// refuse to run. Nothing it described is touched: its sessions
		// are unclaimed, and unclaimed sessions are left alone.
		m.log.Error("agent records not understood; kept aside, starting with none and leaving their tmux sessions alone", "err", err)
		m.problem("state/agents.json was not understood and was kept aside: " + err.Error())
	}
	for _, sk := range skipped {
		st.Skipped++
		m.log.Error("agent record not understood; leaving it and its tmux session alone",
			"agent", sk.Name, "state", string(sk.State), "why", sk.Why, "kept_as", aside)
		m.problem(fmt.Sprintf("agent record %q not understood (%s); its tmux session is left alone; the file was kept as %s", sk.Name, sk.Why, aside))
	}
	return recs, nil
}

// restorePlan is what taking the records left to do.
type restorePlan struct {
	// claimed: the tmux sessions a record names (true: it is live).
	claimed map[string]bool
	// relaunch: agents to launch again; kill: stopped agents whose session
	// lives (a stop a crash interrupted); unfinished: agents with a
	// message in flight in a live TUI.
	relaunch, kill, unfinished []*agent
}

// takeRecords puts every record in the map as an agent, reconciled with
// the pane its session shows (see reconcile).
func (m *Manager) takeRecords(recs []*Record, panes map[string]tmux.PaneInfo, st *RestoreStats) restorePlan {
	plan := restorePlan{claimed: map[string]bool{}}
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range recs {
		a := m.newAgent(r)
		m.agents[r.Name] = a
		session := TmuxSession(r.Name)
		p, live := panes[session]
		plan.claimed[session] = live
		a.mu.Lock()
		a.reconcile(p, live, now, st, &plan)
		a.mu.Unlock()
	}
	return plan
}

// reconcile decides, from a's restored record and the pane of its session
// (live: the session exists), what boot restore does with it, and notes it
// in plan and st; a.mu must be held.
func (a *agent) reconcile(p tmux.PaneInfo, live bool, now time.Time, st *RestoreStats, plan *restorePlan) {
	r := a.rec
	a.lastLaunch = now
	a.lastActivity = now
	a.checkSavedQueue()
	// Messages saved for an agent the idle sweep parked wake it, as
	// they would have in the last daemon.
	wake := r.State == api.StateStopped && r.WakeOnMessage && len(r.Queue) > 0
	switch {
	case r.State == api.StateStopped && live:
		plan.kill = append(plan.kill, a)
		if wake {
			plan.relaunch = append(plan.relaunch, a)
		}
	case r.State == api.StateStopped:
		if wake {
			plan.relaunch = append(plan.relaunch, a)
		}
	case r.RestartDue != nil && (!live || p.PID == r.ExitedPID):
		// A restart the last daemon decided and did not carry out
		// (the TUI it counted still shows, dead or stuck, or its
		// session is gone): it runs when it was due, its exit
		// counted once.
		if live {
			r.PaneID, r.PanePID = p.PaneID, p.PID
		}
		r.State = api.StateStarting
		a.exitHandled = true
		a.nextRestart = *r.RestartDue
		a.lastLaunch = now.Add(-1)
		st.Pending++
	case live:
		// A TUI launched after any restart the record names.
		r.RestartDue = nil
		r.PaneID, r.PanePID = p.PaneID, p.PID
		// Launched before this daemon: the first sweep may judge it.
		a.lastLaunch = now.Add(-1)
		st.Adopted++
	default:
		plan.relaunch = append(plan.relaunch, a)
	}
	if r.InFlight != nil {
		if live && r.State != api.StateStopped {
			plan.unfinished = append(plan.unfinished, a)
		} else {
			a.lostInFlight("the agent's TUI was not running")
		}
	}
}

// reportUnclaimed logs the leo-* sessions no record claims: left alone.
func (m *Manager) reportUnclaimed(panes map[string]tmux.PaneInfo, claimed map[string]bool, st *RestoreStats) {
	for session, p := range panes {
		if strings.HasPrefix(session, "leo-") && !claimed[session] {
			st.Unclaimed++
			m.log.Warn("tmux session has no agent record; leaving it alone", "session", session, "pane", p.PaneID)
		}
	}
}

// probeAdopted gives adopted agents still starting their startup probe
// again (those about to be relaunched get theirs from the launch).
func (m *Manager) probeAdopted(relaunch []*agent) {
	for _, a := range m.all() {
		a.mu.Lock()
		adopted := a.rec.State == api.StateStarting && a.rec.PaneID != "" && !a.exitHandled && !slices.Contains(relaunch, a)
		if adopted {
			a.launchGen++
		}
		gen := a.launchGen
		a.mu.Unlock()
		if adopted {
			a.probe(gen)
		}
	}
}

// finishInFlight queues, ahead of everything, the finish of the message
// the last daemon pasted into a's TUI and did not see submitted.
func (a *agent) finishInFlight() {
	a.mu.Lock()
	f, name := *a.rec.InFlight, a.rec.Name
	it := &delivery.Item{ID: f.ID, Message: f.Text, Sender: f.Sender, Pasted: true, PastedAt: f.Since}
	a.items[it.ID] = it
	a.mu.Unlock()
	a.m.log.Warn("finishing a delivery the last daemon was stopped in", "agent", name, "id", f.ID, "since", f.Since)
	if _, err := a.queue.PushUnbounded(it); err != nil {
		a.mu.Lock()
		delete(a.items, it.ID)
		a.lostInFlight("not resumed: " + err.Error())
		a.mu.Unlock()
	}
}

// relaunchAtBoot launches the agents whose TUI is gone, restoreParallel at
// a time, and waits for them all.
func (m *Manager) relaunchAtBoot(ctx context.Context, relaunch []*agent, st *RestoreStats) {
	var mu sync.Mutex // guards st
	sem := make(chan struct{}, restoreParallel)
	var wg sync.WaitGroup
	for _, a := range relaunch {
		wg.Add(1)
		sem <- struct{}{}
		go func(a *agent) {
			defer wg.Done()
			defer func() { <-sem }()
			outcome := a.relaunchAtBoot(ctx)
			mu.Lock()
			defer mu.Unlock()
			switch outcome {
			case bootRelaunched:
				st.Relaunched++
			case bootStopped:
				st.Stopped++
			case bootRetry:
				st.Failed++
			}
		}(a)
	}
	wg.Wait()
}

// bootOutcome is how one agent's relaunch at boot went.
type bootOutcome int

const (
	bootRelaunched bootOutcome = iota
	// bootStopped: nothing a retry fixes (harness or template gone); kept
	// stopped with the reason.
	bootStopped
	// bootRetry: a transient failure (tmux); the supervisor retries with
	// backoff.
	bootRetry
)

// relaunchAtBoot launches a and, when that fails, parks it (stopped with
// the reason) or schedules its retry.
func (a *agent) relaunchAtBoot(ctx context.Context) bootOutcome {
	m := a.m
	a.op.Lock()
	defer a.op.Unlock()
	err := a.launch(ctx, "boot restore", nil)
	if err == nil {
		return bootRelaunched
	}
	now := m.clk.Now()
	a.mu.Lock()
	name := a.rec.Name
	a.rec.Error = err.Error()
	out := bootRetry
	switch api.CodeOf(err) {
	case api.CodeClaudeNotFound, api.CodeHarnessNotFound, api.CodeNotFound, api.CodeConfigError:
		a.rec.State = api.StateStopped
		out = bootStopped
	default:
		a.rec.State = api.StateStarting
		due := now.Add(m.policy.Backoff(a.rec.Failures))
		a.rec.RestartDue = &due
		a.exitHandled = true
		a.nextRestart = due
	}
	a.mu.Unlock()
	m.log.Error("agent not relaunched at boot", "agent", name, "err", err)
	return out
}

// lostInFlight records a's in-flight message, whose text cannot be in
// the input line of any TUI now, as failed and forgets it; a.mu must be
// held.
func (a *agent) lostInFlight(why string) {
	m := a.m
	f := a.rec.InFlight
	a.rec.InFlight = nil
	msg := fmt.Sprintf("%v (%s)", delivery.ErrNotLanded, why)
	d := api.Delivery{ID: f.ID, Status: "failed", Error: msg, At: m.clk.Now()}
	d.From, d.FirstLine = api.DescribeMessage(f.Text)
	a.deliveries = append(a.deliveries, d)
	a.keepOutcome(delivery.NewDone(f.ID, f.Text, fmt.Errorf("%w (%s)", delivery.ErrNotLanded, why)))
	m.log.Warn("message not delivered", "agent", a.rec.Name, "id", f.ID, "err", msg)
}

// checkSavedQueue drops from a's saved queue what this leo would never
// have accepted (a hand-edited file): an entry without an id, a repeated
// id, a text that is not a message leo sends. Each is recorded as failed
// with the reason; a.mu must be held.
func (a *agent) checkSavedQueue() {
	r := a.rec
	if len(r.Queue) == 0 {
		return
	}
	seen := map[string]bool{}
	if r.InFlight != nil {
		seen[r.InFlight.ID] = true
	}
	kept := make([]Queued, 0, len(r.Queue))
	for i, q := range r.Queue {
		why := ""
		text, err := delivery.PasteText(q.Text)
		switch {
		case q.ID == "":
			why = fmt.Sprintf("queue[%d] has no id", i)
		case seen[q.ID]:
			// The same message twice: it is delivered once, as the first.
			a.m.log.Warn("saved message listed twice; delivering it once", "agent", r.Name, "id", q.ID)
			continue
		case err != nil:
			why = err.Error()
		case text != q.Text:
			why = "its text is not as leo saves it"
		}
		if why != "" {
			a.failSaved(q, "saved message not understood: "+why)
			continue
		}
		seen[q.ID] = true
		kept = append(kept, q)
	}
	r.Queue = kept
}

// failSaved records a saved message as failed with reason; a.mu must be
// held, and the caller takes it off the saved queue.
func (a *agent) failSaved(q Queued, reason string) {
	m := a.m
	err := errors.New(reason)
	a.keepOutcome(delivery.NewDone(q.ID, q.Text, err))
	d := api.Delivery{ID: q.ID, Status: "failed", Error: reason, At: m.clk.Now()}
	d.From, d.FirstLine = api.DescribeMessage(q.Text)
	a.deliveries = append(a.deliveries, d)
	if len(a.deliveries) > recentDeliveries {
		a.deliveries = a.deliveries[len(a.deliveries)-recentDeliveries:]
	}
	m.log.Warn("message not delivered", "agent", a.rec.Name, "id", q.ID, "err", reason)
}

// restoredQueues are the agents with saved messages, by name (any order
// between agents is fine; each agent's own order is kept).
func (m *Manager) restoredQueues() []*agent {
	var out []*agent
	for _, a := range m.all() {
		a.mu.Lock()
		if len(a.rec.Queue) > 0 {
			out = append(out, a)
		}
		a.mu.Unlock()
	}
	return out
}

// requeue puts a's saved messages back in its queue, with their ids. An
// agent that is stopped now (a person stopped it, or boot restore could not
// start it) gets none: they fail with the reason and leave the saved
// queue with the restore's final save.
func (a *agent) requeue() {
	m := a.m
	a.mu.Lock()
	saved := append([]Queued(nil), a.rec.Queue...)
	if a.rec.State == api.StateStopped {
		reason := "cancelled: the agent was stopped"
		if a.rec.Error != "" {
			reason = "agent stopped: " + a.rec.Error
		}
		for _, q := range saved {
			a.failSaved(q, reason)
		}
		a.rec.Queue = nil
		a.mu.Unlock()
		return
	}
	items := make([]*delivery.Item, len(saved))
	for i, q := range saved {
		items[i] = &delivery.Item{ID: q.ID, Message: q.Text, Sender: q.Sender}
		a.items[q.ID] = items[i]
	}
	name := a.rec.Name
	a.mu.Unlock()
	for i, it := range items {
		if _, err := a.queue.PushUnbounded(it); err != nil {
			a.mu.Lock()
			delete(a.items, it.ID)
			a.failSaved(saved[i], "not queued again after the restart: "+err.Error())
			a.rec.Queue = withoutQueued(a.rec.Queue, it.ID)
			a.mu.Unlock()
			continue
		}
		m.log.Info("message queued again after the restart", "agent", name, "id", it.ID, "accepted", saved[i].At)
	}
}
