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
	"github.com/blackpaw-studio/leo/internal/tmux"
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
		store:  NewStore(opts.Home.AgentsPath()),
		policy: opts.Policy,
		driver: opts.Delivery,
		agents: map[string]*agent{},
		kick:   make(chan struct{}, 1),

		firstTurns: map[string]chan struct{}{},
		ctx:        ctx,
		cancel:     cancel,
	}
	m.driver.Clock = opts.Clock
	return m, nil
}

func (m *Manager) newAgent(rec *Record) *agent {
	a := &agent{rec: rec}
	a.queue = &delivery.Queue{
		Max:  m.opts.SendQueueMax,
		Now:  m.clk.Now,
		Work: func(ctx context.Context, it *delivery.Item) error { return m.deliverItem(ctx, a, it) },
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
	err := m.store.Save(func() []*Record {
		m.mu.Lock()
		defer m.mu.Unlock()
		out := make([]*Record, 0, len(m.agents))
		for _, a := range m.agents {
			if !a.deleted {
				out = append(out, a.rec.clone())
			}
		}
		return out
	})
	if err != nil {
		m.log.Error("saving agent records failed", "err", err)
	}
	return err
}

// view builds the listing of a; m.mu must be held.
func (m *Manager) view(a *agent) api.Agent {
	r := a.rec
	out := api.Agent{
		Name:          r.Name,
		Template:      r.Template,
		Harness:       r.Harness,
		Model:         r.Model,
		Workspace:     r.Workspace,
		State:         r.State,
		WakeOnMessage: r.WakeOnMessage,
		SessionID:     r.SessionID,
		TmuxSession:   TmuxSession(r.Name),
		EnvKeys:       append([]string(nil), r.EnvKeys...),
		Restarts:      r.Restarts,
		CreatedAt:     r.CreatedAt,
		Error:         r.Error,
		Queued:        a.queue.Messages(),
		Deliveries:    append([]api.Delivery(nil), a.deliveries...),
	}
	if r.StartedAt != nil {
		t := *r.StartedAt
		out.StartedAt = &t
	}
	if r.LastExit != nil {
		e := *r.LastExit
		out.LastExit = &e
	}
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
	res, err := m.resolve(cfg, req.Template)
	if err != nil {
		return api.Agent{}, err
	}
	// Fail before recording anything when the harness is not installed.
	if _, err := m.lookupBinary(res.Harness.Binary(), res.HarnessName); err != nil {
		return api.Agent{}, err
	}

	now := m.clk.Now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return api.Agent{}, api.Errorf(api.CodeInternal, "agent manager is shutting down")
	}
	name := uniqueName(base, func(n string) bool { _, taken := m.agents[n]; return taken })
	rec := &Record{
		Name:      name,
		Template:  req.Template,
		Harness:   res.HarnessName,
		Workspace: res.Workspace,
		Model:     res.Model,
		State:     api.StateStarting,
		EnvKeys:   append([]string(nil), res.EnvKeys...),
		CreatedAt: now,
	}
	a := m.newAgent(rec)
	a.op.Lock() // nobody can act on it before its first launch is done
	m.agents[name] = a
	m.mu.Unlock()
	defer a.op.Unlock()

	if err := m.launch(ctx, a, "spawn"); err != nil {
		// A spawn that did not start leaves nothing behind.
		m.mu.Lock()
		a.deleted = true
		delete(m.agents, name)
		m.mu.Unlock()
		_ = m.tmux.KillSession(context.WithoutCancel(ctx), TmuxSession(name))
		m.save()
		return api.Agent{}, err
	}
	m.log.Info("agent spawned", "agent", name, "template", req.Template, "harness", res.HarnessName)
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
// never a live agent nobody supervises.
func (m *Manager) stopLocked(ctx context.Context, a *agent, wake bool, why string) error {
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
	a.rec.State = api.StateStopped
	a.rec.WakeOnMessage = wake
	a.rec.PaneID = ""
	a.rec.PanePID = 0
	if !wake {
		a.rec.Error = ""
	}
	name := a.rec.Name
	m.mu.Unlock()
	if err := m.save(); err != nil {
		return api.Errorf(api.CodeInternal, "agent %s: %v", name, err)
	}
	if err := m.tmux.KillSession(ctx, TmuxSession(name)); err != nil {
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
	if prepare != nil {
		prepare(a)
	}
	a.rec.Failures = 0
	a.exitHandled = false
	a.rec.WakeOnMessage = false
	m.mu.Unlock()
	if err := m.launch(ctx, a, why); err != nil {
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
	if err := m.tmux.KillSession(ctx, TmuxSession(name)); err != nil {
		return api.Errorf(api.CodeTmux, "agent %s: kill tmux session: %v", name, err)
	}
	a.queue.Close()
	m.mu.Lock()
	a.deleted = true
	delete(m.agents, name)
	m.mu.Unlock()
	if err := m.save(); err != nil {
		return api.Errorf(api.CodeInternal, "agent %s: %v", name, err)
	}
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

// Close stops background work and fails queued messages. Agents' tmux
// sessions keep running: the next daemon adopts them.
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
