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
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/tmux"
	"github.com/blackpaw-studio/leo/internal/worktree"
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
	// Events receives what happens to agents and messages (nil: nobody
	// listens).
	Events events.Publisher

	// Tunables (zero: defaults). Tests shorten them.
	Policy          RestartPolicy
	Tick            time.Duration
	Delivery        delivery.Driver
	SendQueueMax    int
	DiscoverTimeout time.Duration
	// Width and Height of agent panes (default 200x50).
	Width, Height int
	// Git runs git for worktree agents (zero: git on PATH).
	Git worktree.Git

	// crash, in tests, stops a spawn or delete at a named seam as a kill
	// would (worktree.go).
	crash func(point string) bool
}

// Manager owns every agent of one home: the name → agent map, the state
// store, boot restore and the fleet-wide work (the supervisor's sweep, the
// drain, Close). Each agent is its own runtime (runtime.go), with its own
// lock. All methods are safe for concurrent use.
type Manager struct {
	opts   Options
	log    *slog.Logger
	clk    clock.Clock
	tmux   *tmux.Server
	store  *Store
	policy RestartPolicy
	driver delivery.Driver

	// mu guards the map and the fleet state below, not the agents' own
	// fields (each agent's mu does): see the lock order in runtime.go.
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

	// wtStatus caches the worktrees' dirty and ahead (worktree.go).
	wtStatus statusCache

	// pause holds deliveries during a drain (drain.go).
	pause pauseGate

	kick   chan struct{}
	ctx    context.Context // background work; cancelled by Close
	cancel context.CancelFunc
	bg     sync.WaitGroup
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

// all is every agent in the map now (deleted ones included: callers that
// care check a.deleted under a.mu).
func (m *Manager) all() []*agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*agent, 0, len(m.agents))
	for _, a := range m.agents {
		out = append(out, a)
	}
	return out
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
		a.mu.Lock()
		name := a.rec.Name
		a.mu.Unlock()
		err = m.store.SaveRecordThen(name, func() *Record {
			// The record memory has for the name: a's with f, or none
			// (a dropped, or deleted meanwhile).
			m.mu.Lock()
			defer m.mu.Unlock()
			x := m.agents[name]
			if x == nil {
				return nil
			}
			x.mu.Lock()
			defer x.mu.Unlock()
			if x.deleted || (x == a && drop) {
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
			a.mu.Lock()
			defer a.mu.Unlock()
			if f != nil {
				f(a.rec)
			}
			if drop {
				a.deleted = true
				if m.agents[a.rec.Name] == a {
					delete(m.agents, a.rec.Name)
				}
			}
			a.noteState()
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
		x.mu.Lock()
		if !x.deleted {
			out = append(out, x.rec.clone())
		}
		x.mu.Unlock()
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

// List returns every agent, sorted by name, from the daemon's own state
// (no tmux call).
func (m *Manager) List() []api.Agent {
	all := m.all()
	out := make([]api.Agent, 0, len(all))
	for _, a := range all {
		a.mu.Lock()
		deleted := a.deleted
		var v api.Agent
		if !deleted {
			v = a.viewLocked()
		}
		a.mu.Unlock()
		if !deleted {
			v.UsageToday = a.usageToday()
			a.withStatus(context.Background(), &v, true)
			out = append(out, v)
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
	v := a.view()
	v.UsageToday = a.usageToday()
	a.withStatus(context.Background(), &v, false)
	return v, nil
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
		a.mu.Lock()
		if a.probeCancel != nil {
			a.probeCancel()
		}
		a.mu.Unlock()
	}
	m.mu.Unlock()
	m.cancel()
	for _, a := range agents {
		a.queue.Close()
	}
	m.bg.Wait()
	return nil
}
