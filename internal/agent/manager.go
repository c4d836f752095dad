// Package agent keeps every agent's harness TUI alive in tmux: records in
// state/agents.json, launch with the per-harness session-id ladder,
// supervision (restart with backoff, exit bookkeeping, idle suspend) from
// one list-panes per tick, boot restore that adopts live sessions, and
// message delivery through one FIFO queue per agent.
package agent

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/tmux"
	"golang.org/x/sys/unix"
)

// Defaults of the tunables in Options.
const (
	// DefaultTick is how often the supervisor lists panes: one tmux call
	// per tick for the whole fleet.
	DefaultTick = 2 * time.Second
	// DefaultSendQueueMax bounds the messages waiting for one agent. Plain
	// sends are rare and small; the bound only stops a runaway client from
	// growing the daemon without limit. (queue_max is for persistent tasks.)
	DefaultSendQueueMax = 256
	// DefaultDiscoverTimeout bounds the search for a codex/opencode session
	// id after a delivered turn.
	DefaultDiscoverTimeout = 30 * time.Second
	// recentDeliveries is how many delivery outcomes an agent shows.
	recentDeliveries = 10
	// keptOutcomes is how many finished messages per agent Await still
	// finds by id (far more than queue_max, so a persistent task that
	// asks after a restart finds its firing's outcome).
	keptOutcomes = 256
	// restoreParallel bounds concurrent relaunches at boot.
	restoreParallel = 8
)

// Options wire a Manager. Home, Tmux and Config are required.
type Options struct {
	Home home.Home
	Tmux *tmux.Server
	// Config returns the current config; it is read at every launch, so a
	// reload takes effect at the next start of each agent.
	Config    func() *config.Config
	Resolver  binpath.Resolver
	Clock     clock.Clock
	Log       *slog.Logger
	LeoBinary string
	// SaveGuard, when set, is called before every write of agents.json; an
	// error refuses the write (the daemon no longer owns the home).
	SaveGuard func() error

	// Tunables (zero: defaults). Tests shorten them.
	Policy          RestartPolicy
	Tick            time.Duration
	Delivery        delivery.Driver
	SendQueueMax    int
	DiscoverTimeout time.Duration
	// Width and Height of agent panes (default 200x50).
	Width, Height int
}

// Manager owns every agent of one home. All methods are safe for
// concurrent use.
type Manager struct {
	opts   Options
	log    *slog.Logger
	clk    clock.Clock
	tmux   *tmux.Server
	store  *Store
	policy RestartPolicy
	driver delivery.Driver

	mu     sync.Mutex
	agents map[string]*agent
	closed bool
	// idle caches idle_suspend_after per template for one config value.
	idleFor   *config.Config
	idleCache map[string]time.Duration

	// firstTurns holds one slot per harness and workspace: see
	// firstTurnSlot.
	firstTurns map[string]chan struct{}
	// ensuring serializes Ensure per agent name (see ensureLock).
	ensuring map[string]*keyedLock

	// problems are what boot restore could not take as its own (state it
	// does not understand), for the daemon's status.
	problems []string

	// pause holds deliveries during a drain (drain.go).
	pause pauseGate

	kick   chan struct{}
	ctx    context.Context // background work; cancelled by Close
	cancel context.CancelFunc
	bg     sync.WaitGroup
}

// agent is one record plus its runtime state. rec and the runtime fields
// are guarded by Manager.mu; op serializes lifecycle operations (launch,
// stop, restart, suspend) on this agent and is taken before Manager.mu.
type agent struct {
	op    sync.Mutex
	rec   *Record
	queue *delivery.Queue

	exitHandled  bool
	deadSince    time.Time // first sweep that saw the pane dead without a status
	deadPane     string
	nextRestart  time.Time
	lastLaunch   time.Time
	lastActivity time.Time
	launchGen    int
	probeCancel  context.CancelFunc
	discovering  bool
	deliveries   []api.Delivery
	deleted      bool
	// items are the messages queued or being delivered, by id, and
	// outcomes the last ones finished (newest last): Await finds a
	// message's outcome through them, across a restart too.
	items    map[string]*delivery.Item
	outcomes []*delivery.Item
	// turn and leftover are the delivery driver's memory of this agent's
	// TUI (the last submitted turn; leo's own failed paste that may sit in
	// the input). Only the queue worker touches them.
	turn     delivery.Turn
	leftover *delivery.Leftover
	// lastSent is the text of the last message delivered to the TUI, which
	// an interrupt may put back into its input line (claude).
	lastSent string
	// held: the queue worker waits at the drain's pause with a message
	// it has not started to deliver (see waitUnpaused).
	held bool
	// fresh: spawned and not yet launched. A tmux session of its name is
	// then no session of its: never killed, the spawn takes another name.
	fresh bool
}

// New builds a Manager. It touches nothing until Restore.
func New(opts Options) (*Manager, error) {
	if opts.Tmux == nil {
		return nil, errors.New("agent: Options.Tmux is required")
	}
	if opts.Config == nil {
		return nil, errors.New("agent: Options.Config is required")
	}
	if opts.Home.Root == "" {
		return nil, errors.New("agent: Options.Home is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Policy == (RestartPolicy{}) {
		opts.Policy = DefaultRestartPolicy()
	}
	if opts.Tick <= 0 {
		opts.Tick = DefaultTick
	}
	if opts.SendQueueMax <= 0 {
		opts.SendQueueMax = DefaultSendQueueMax
	}
	if opts.DiscoverTimeout <= 0 {
		opts.DiscoverTimeout = DefaultDiscoverTimeout
	}
	if opts.Width <= 0 {
		opts.Width = 200
	}
	if opts.Height <= 0 {
		opts.Height = 50
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:   opts,
		log:    opts.Log.With("component", "agent"),
		clk:    opts.Clock,
		tmux:   opts.Tmux,
		store:  &Store{path: opts.Home.AgentsPath(), guard: opts.SaveGuard},
		policy: opts.Policy,
		driver: opts.Delivery,
		agents: map[string]*agent{},
		kick:   make(chan struct{}, 1),

		firstTurns: map[string]chan struct{}{},
		ctx:        ctx,
		cancel:     cancel,
	}
	m.driver.Clock = opts.Clock
	m.store.all = m.records
	return m, nil
}

func (m *Manager) newAgent(rec *Record) *agent {
	a := &agent{rec: rec, items: map[string]*delivery.Item{}}
	a.queue = &delivery.Queue{
		Max: m.opts.SendQueueMax,
		// queue_max of the agent's template, read at each push so that a
		// reload applies at once.
		Limit: func() int { return m.queueMax(a) },
		Now:   m.clk.Now,
		Work:  func(ctx context.Context, it *delivery.Item) error { return m.deliverItem(ctx, a, it) },
		Finished: func(it *delivery.Item, err error) {
			m.finished(a, it, err)
		},
	}
	return a
}

// lookup returns the agent called name, or not_found.
func (m *Manager) lookup(name string) (*agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, api.Errorf(api.CodeInternal, "agent manager is shutting down")
	}
	a, ok := m.agents[name]
	if !ok {
		return nil, api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	return a, nil
}

// save writes every record. Failures are logged and returned.
func (m *Manager) save() error {
	return m.commit(nil, nil, false)
}

// saveAgent writes a's record as memory has it now (a change made in
// memory first); the other records are not encoded again.
func (m *Manager) saveAgent(a *agent) error {
	return m.commit(a, nil, false)
}

// commit changes a's record by f (and drops it when drop) in memory only
// once the records with that change are on disk: a save that fails leaves
// memory as it was, agreeing with the file. f must only set fields (it is
// applied to a copy for the write, then to the record). With a nil it is a
// plain save of every record; otherwise only a's record is written anew.
func (m *Manager) commit(a *agent, f func(r *Record), drop bool) error {
	var err error
	if a == nil {
		err = m.store.SaveThen(m.records, nil)
	} else {
		m.mu.Lock()
		name := a.rec.Name
		m.mu.Unlock()
		err = m.store.SaveRecordThen(name, func() *Record {
			// The record memory has for the name: a's with f, or none
			// (a dropped, or deleted meanwhile).
			m.mu.Lock()
			defer m.mu.Unlock()
			x := m.agents[name]
			if x == nil || x.deleted || (x == a && drop) {
				return nil
			}
			r := x.rec.clone()
			if x == a && f != nil {
				f(r)
			}
			return r
		}, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if f != nil {
				f(a.rec)
			}
			if drop {
				a.deleted = true
				if m.agents[a.rec.Name] == a {
					delete(m.agents, a.rec.Name)
				}
			}
		})
	}
	if err != nil {
		m.log.Error("saving agent records failed", "err", err)
	}
	return err
}

// records is a copy of every record memory holds.
func (m *Manager) records() []*Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Record, 0, len(m.agents))
	for _, x := range m.agents {
		if !x.deleted {
			out = append(out, x.rec.clone())
		}
	}
	return out
}

// Persist writes every record now (the daemon calls it when state/ was
// removed while it ran). It writes nothing when there are no agents and
// no file, so a home that never had agents gets none.
func (m *Manager) Persist() error {
	m.mu.Lock()
	n := len(m.agents)
	m.mu.Unlock()
	if n == 0 {
		return nil
	}
	return m.save()
}

// killSession kills the agent's tmux session, saying in the log which and
// why: leo never kills a session without a line saying so.
//
// A TUI that outlives its terminal (the real opencode ignores the hangup
// tmux sends) is then ended by leo: its process group gets SIGTERM, then
// SIGKILL, and only while the process is still the one the pane started
// (same pid and start time), so a reused pid is never signalled.
func (m *Manager) killSession(ctx context.Context, name, why string) error {
	session := TmuxSession(name)
	pid := 0
	if info, err := m.tmux.ListPanes(ctx); err == nil {
		for _, p := range info {
			if p.SessionName == session && !p.Dead {
				pid = p.PID
			}
		}
	}
	started := proc.Start(pid)
	err := m.tmux.KillSession(ctx, session)
	if err != nil {
		m.log.Error("killing tmux session failed", "agent", name, "session", session, "why", why, "err", err)
		return err
	}
	m.log.Info("killed tmux session", "agent", name, "session", session, "why", why)
	if started != "" {
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			m.endLeftover(name, pid, started)
		}()
	}
	return nil
}

// endLeftover ends the TUI process of a killed session if it is still
// running a moment later.
func (m *Manager) endLeftover(name string, pid int, started string) {
	for _, sig := range []unix.Signal{0, unix.SIGTERM, unix.SIGKILL} {
		if sig != 0 {
			if proc.Start(pid) != started {
				return
			}
			m.log.Warn("the agent's TUI outlived its tmux session; ending it", "agent", name, "pid", pid, "signal", unix.SignalName(sig))
			_ = unix.Kill(-pid, sig) // the pane's process leads its own group
		}
		for range 30 {
			if proc.Start(pid) != started {
				return
			}
			select {
			case <-m.clk.After(100 * time.Millisecond):
			case <-m.ctx.Done():
				return
			}
		}
	}
}

// problem notes something an operator must hear about (service status).
func (m *Manager) problem(text string) {
	m.mu.Lock()
	m.problems = append(m.problems, text)
	m.mu.Unlock()
}

// Problems are what boot restore met and could not take as its own: state
// files or records leo does not understand, left alone with their tmux
// sessions and kept aside. The daemon shows them in its status.
func (m *Manager) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

// view builds the listing of a; m.mu must be held.
func (m *Manager) view(a *agent) api.Agent {
	out := a.rec.listing()
	out.Queued = a.queue.Messages()
	out.Deliveries = append([]api.Delivery(nil), a.deliveries...)
	return out
}

// List returns every agent, sorted by name, from the daemon's own state
// (no tmux call).
func (m *Manager) List() []api.Agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]api.Agent, 0, len(m.agents))
	for _, a := range m.agents {
		if !a.deleted {
			out = append(out, m.view(a))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns one agent.
func (m *Manager) Get(name string) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.view(a), nil
}

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

	// A leo-<name> session no record claims (records lost, a session made
	// by hand) is never taken over: the name counts as taken.
	live, err := m.unclaimedSessions(ctx, base)
	if err != nil {
		return api.Agent{}, err
	}
	for attempt := 0; ; attempt++ {
		a, err := m.spawnOnce(ctx, spawnScope{template: req.Template}, res, base, live, false)
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
			return nil, api.Errorf(api.CodeTmux, "spawn: ask tmux about session %s: %v", TmuxSession(name), err)
		}
		if !exists {
			return live, nil
		}
		live[TmuxSession(name)] = true
	}
}

// sessions are the names of the tmux sessions now running.
func (m *Manager) sessions(ctx context.Context) (map[string]bool, error) {
	list, err := m.tmux.ListPanes(ctx)
	if err != nil && !tmux.IsNotFound(err) {
		return nil, api.Errorf(api.CodeTmux, "spawn: list tmux sessions: %v", err)
	}
	live := make(map[string]bool, len(list))
	for _, p := range list {
		live[p.SessionName] = true
	}
	return live, nil
}

// spawnScope is the config scope a new agent launches from: a template, or
// a task's own scope (the implicit agent of a persistent task).
type spawnScope struct{ template, task string }

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
	a.op.Lock() // nobody can act on it before its first launch is done
	m.agents[name] = a
	m.mu.Unlock()
	defer a.op.Unlock()

	if err := m.launch(ctx, a, "spawn"); err != nil {
		// A spawn that did not start leaves nothing behind of its own.
		m.mu.Lock()
		a.deleted = true
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
		return api.Agent{}, err
	}
	m.log.Info("agent spawned", "agent", name, "scope", rec.scope(), "harness", res.HarnessName)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.view(a), nil
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
	if err := m.startLocked(ctx, a, "start"); err != nil {
		return api.Agent{}, err
	}
	return m.Get(name)
}

// startLocked launches a if it is stopped; a.op must be held.
func (m *Manager) startLocked(ctx context.Context, a *agent, why string) error {
	m.mu.Lock()
	stopped := a.rec.State == api.StateStopped
	deleted := a.deleted
	m.mu.Unlock()
	if deleted {
		return api.Errorf(api.CodeNotFound, "agent %q not found", a.rec.Name)
	}
	if !stopped {
		return nil
	}
	m.mu.Lock()
	a.rec.Failures = 0
	a.exitHandled = false
	m.mu.Unlock()
	return m.launch(ctx, a, why)
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
	if err := m.stopLocked(ctx, a, false, "stopped"); err != nil {
		return api.Agent{}, err
	}
	return m.Get(name)
}

// stopLocked records the stop first, then kills the session: a crash in
// between leaves a stopped record whose session the next Restore kills,
// never a live agent nobody supervises. The record changes in memory only
// once it is saved: a failed save leaves the agent running, supervised and
// listed as it is, and says so.
func (m *Manager) stopLocked(ctx context.Context, a *agent, wake bool, why string) error {
	name := a.rec.Name
	err := m.commit(a, func(r *Record) {
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
	}, false)
	if err != nil {
		return api.Errorf(api.CodeInternal, "agent %s not stopped: its record could not be saved, so its TUI was left running and supervised (%v)", name, err)
	}
	if !wake {
		a.queue.Cancel()
	}
	m.mu.Lock()
	if a.probeCancel != nil {
		a.probeCancel()
		a.probeCancel = nil
	}
	a.exitHandled = false
	a.nextRestart = time.Time{}
	m.mu.Unlock()
	if err := m.killSession(ctx, name, "agent "+why); err != nil {
		return api.Errorf(api.CodeTmux, "agent %s: kill tmux session: %v", name, err)
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
	return m.relaunch(ctx, name, "reset", func(a *agent) {
		m.log.Info("agent reset: new conversation", "agent", name, "old_session", a.rec.SessionID)
		a.rec.SessionID = ""
		a.rec.SessionUsed = false
	})
}

// relaunch is a person's restart or reset: the crash-loop count and any
// idle parking are cleared, prepare (under m.mu) adjusts the record, and the
// TUI is launched again.
func (m *Manager) relaunch(ctx context.Context, name, why string, prepare func(a *agent)) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	a.op.Lock()
	defer a.op.Unlock()
	m.mu.Lock()
	before, gen, handled := *a.rec, a.launchGen, a.exitHandled
	if prepare != nil {
		prepare(a)
	}
	a.rec.Failures = 0
	a.exitHandled = false
	a.rec.WakeOnMessage = false
	m.mu.Unlock()
	if err := m.launch(ctx, a, why); err != nil {
		m.mu.Lock()
		if a.launchGen == gen {
			// Nothing was saved or launched (the plan or the save
			// failed): memory goes back to what the file says.
			a.rec.SessionID, a.rec.SessionUsed = before.SessionID, before.SessionUsed
			a.rec.Failures, a.rec.WakeOnMessage = before.Failures, before.WakeOnMessage
			a.exitHandled = handled
		}
		m.mu.Unlock()
		return api.Agent{}, err
	}
	return m.Get(name)
}

// Delete removes a stopped agent's record.
func (m *Manager) Delete(ctx context.Context, name string) error {
	a, err := m.lookup(name)
	if err != nil {
		return err
	}
	a.op.Lock()
	defer a.op.Unlock()
	m.mu.Lock()
	if a.rec.State != api.StateStopped {
		state := a.rec.State
		m.mu.Unlock()
		return api.Errorf(api.CodeAgentRunning, "agent %q is %s; stop it before deleting", name, state)
	}
	m.mu.Unlock()
	// The session should already be gone; make sure before the record goes,
	// so no tmux session is ever left without a record.
	if err := m.killSession(ctx, name, "deleting its stopped agent"); err != nil {
		return api.Errorf(api.CodeTmux, "agent %s: kill tmux session: %v", name, err)
	}
	if err := m.commit(a, nil, true); err != nil {
		return api.Errorf(api.CodeInternal, "agent %s not deleted: its record could not be saved, so it is kept, stopped (%v)", name, err)
	}
	a.queue.Close()
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
	m.mu.Lock()
	pane := a.rec.PaneID
	var tail string
	if a.rec.LastExit != nil {
		tail = a.rec.LastExit.StderrTail
	}
	m.mu.Unlock()
	if pane == "" {
		return api.Logs{Agent: name, Text: tail}, nil
	}
	text, err := m.tmux.CaptureHistory(ctx, pane, lines)
	if err != nil {
		if tmux.IsNotFound(err) {
			return api.Logs{Agent: name, Text: tail}, nil
		}
		return api.Logs{}, api.Errorf(api.CodeTmux, "agent %s: capture pane: %v", name, err)
	}
	return api.Logs{Agent: name, Text: lastN(trimTrailingBlank(text), lines)}, nil
}

// ConfigChanged tells the manager leo.yaml was reloaded: cached template
// settings are dropped and the supervisor looks again at once. Running
// agents keep their launch until they next start.
func (m *Manager) ConfigChanged() {
	m.mu.Lock()
	m.idleFor = nil
	m.idleCache = nil
	m.mu.Unlock()
	m.Kick()
}

// Kick makes the supervisor sweep now (e.g. from a tmux pane-died hook).
func (m *Manager) Kick() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Close stops background work. Queued messages fail here (cancelled) but
// stay in state/agents.json, as does one cut short in flight: the next
// daemon delivers them. Agents' tmux sessions keep running: the next
// daemon adopts them.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	agents := make([]*agent, 0, len(m.agents))
	for _, a := range m.agents {
		agents = append(agents, a)
		if a.probeCancel != nil {
			a.probeCancel()
		}
	}
	m.mu.Unlock()
	m.cancel()
	for _, a := range agents {
		a.queue.Close()
	}
	m.bg.Wait()
	return nil
}
