package agent

import (
	"context"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// agent is one agent's runtime: its record, its lock, the adapter of its
// current launch, its delivery queue and pane, and its supervision. What
// is about one agent is a method of it; the Manager keeps the name → agent
// map, the state store, boot restore and the fleet-wide sweeps, and lends
// its services (clock, tmux, config, the background group) through m.
//
// Lock order (tested in lockorder_test.go), outermost first:
//
//	Ensure's name lock → a.op → Store.mu → Manager.mu → a.mu → queue, pause
//
// a.keys, beside them, serializes what leo types into the pane: a paste
// and an answer's look at the prompt and its key presses (answer.go), so
// no paste lands between the look and the keys. It is held over tmux
// calls, and a.mu is taken under it only briefly (the pane id); nothing
// holding a.mu takes it.
//
// a.op serializes lifecycle operations on the agent (launch, stop,
// restart, suspend, a send's state check and push); spawnOnce takes it
// under Manager.mu only on an agent nobody can see yet. The store's save
// lock is held while its snapshot reads the map and every record, so no
// code saves while holding Manager.mu or an agent's mu. Manager.mu guards
// the map and the fleet's own state; it is held over agents' locks (one
// at a time) only where the map and records are read together (the save's
// snapshot, the conversation ids others own) or a fleet-wide fact and one
// agent's change must be one step (claim; a record put in or out of the
// map; Close against background work it must wait for). Code holding an
// agent's mu takes neither Manager.mu nor another agent's mu. The queue's
// and the pause's mutexes are leaves: the queue calls back (Limit, Work,
// Finished) without holding its own.
type agent struct {
	m *Manager

	op    sync.Mutex
	keys  sync.Mutex
	queue *delivery.Queue

	// mu guards everything below, down to the queue worker's own fields.
	mu      sync.Mutex
	rec     *Record
	deleted bool
	// fresh: spawned and not yet launched. A tmux session of its name is
	// then no session of its: never killed, the spawn takes another name.
	fresh bool

	// The current launch: its generation (a probe, a discovery or a
	// failed start of an earlier launch sees a newer one and stands
	// down), the adapter of rec.Harness resolved for it (nil: not
	// registered), and when it happened.
	launchGen   int
	adapter     harness.Harness
	lastLaunch  time.Time
	probeCancel context.CancelFunc

	// Supervision: an exit recorded (exitHandled) and its restart due at
	// nextRestart; deadSince/deadPane: the first sweep that saw the pane
	// dead without a status.
	exitHandled bool
	nextRestart time.Time
	deadSince   time.Time
	deadPane    string

	// Delivery. lastActivity is the last delivery (or launch) leo made;
	// lastSent the text of the last message delivered to the TUI, which an
	// interrupt may put back into its input line (claude); held: the
	// queue worker waits at the drain's pause with a message it has not
	// started to deliver (see waitUnpaused); discovering: a search for the
	// conversation id runs.
	lastActivity time.Time
	lastSent     string
	held         bool
	discovering  bool
	deliveries   []api.Delivery
	// items are the messages queued or being delivered, by id, and
	// outcomes the last ones finished (newest last): Await finds a
	// message's outcome through them, across a restart too.
	items    map[string]*delivery.Item
	outcomes []*delivery.Item

	// turn and leftover are the delivery driver's memory of this agent's
	// TUI (the last submitted turn; leo's own failed paste that may sit in
	// the input). Only the queue worker touches them, without a.mu.
	turn     delivery.Turn
	leftover *delivery.Leftover

	// Attention (attention.go): what the running agent is doing (nil while
	// not running); pubState the state last published; promptSeen: the
	// screen has shown the prompt of a needs_input; watchStop stops the
	// watcher of a turn; turnBase the turn ends the harness's record held
	// before the Enter of the turn worked on (-1: unknown).
	attn       *api.Attention
	turnBase   int
	turnDetail string // the Detail of the turn's working state
	pubState   string
	promptSeen bool
	watchStop  chan struct{}

	// changed is closed, and replaced, whenever the agent's attention or a
	// message's outcome changes: the waiters of a send (conversation.go)
	// look again then.
	changed chan struct{}
	// sentMu serializes appends to the agent's sent log (sent.go).
	sentMu sync.Mutex
	// usage caches today's usage totals (usage.go); turnEnds counts the
	// turns that ended, so the cache knows when to read again.
	usage    usageCache
	turnEnds int

	// Usage limits (limit.go): limitLifted is closed when the hold in
	// rec.Limit ends (nil: none holds the queue); limitGen names the
	// current hold's wait; limitMode its on_limit; limitBackoff the wait
	// of the last limit without a reset time, until a good turn.
	limitLifted  chan struct{}
	limitGen     int
	limitMode    string
	limitBackoff time.Duration
}

func (m *Manager) newAgent(rec *Record) *agent {
	a := &agent{m: m, rec: rec, items: map[string]*delivery.Item{}}
	a.adapter, _ = harness.Lookup(rec.Harness)
	a.queue = &delivery.Queue{
		Max: m.opts.SendQueueMax,
		// queue_max of the agent's template, read at each push so that a
		// reload applies at once.
		Limit:    a.queueMax,
		Now:      m.clk.Now,
		Work:     a.deliver,
		Finished: a.finished,
	}
	a.queue.Held = a.limitHeld
	return a
}

// name is the agent's name (it never changes).
func (a *agent) name() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec.Name
}

// harness is the adapter of the current launch and the harness's name
// (h nil when it is not registered).
func (a *agent) harness() (h harness.Harness, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.adapter, a.rec.Harness
}

// gone reports whether a was deleted.
func (a *agent) gone() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.deleted
}

// commit is Manager.commit for a change of a's record.
func (a *agent) commit(f func(r *Record)) error { return a.m.commit(a, f, false) }

// touch notes a delivery's activity now (the idle sweep's clock).
func (a *agent) touch() {
	now := a.m.clk.Now()
	a.mu.Lock()
	a.lastActivity = now
	a.mu.Unlock()
}

// view builds the listing of a.
func (a *agent) view() api.Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.viewLocked()
}

// viewLocked is view with a.mu held.
func (a *agent) viewLocked() api.Agent {
	out := a.rec.listing()
	out.Queued = a.queue.Messages()
	out.Deliveries = append([]api.Delivery(nil), a.deliveries...)
	out.Attention = a.attentionLocked()
	out.HeldUntil = a.limitHeldUntilLocked()
	return out
}

// target is a's pane as delivery sees it, through the adapter of the
// current launch; the pane id is read afresh at every call, so a wait
// survives a respawn.
func (a *agent) target() (delivery.Target, bool) {
	h, _ := a.harness()
	if h == nil {
		return delivery.Target{}, false
	}
	t := delivery.Target{Pane: agentPane{a}, Screen: h.Screen(), EnterDelay: delivery.DefaultEnterDelay}
	if pt, ok := h.(harness.PasteTiming); ok {
		t.EnterDelay = pt.EnterDelay()
	}
	if c, ok := h.(harness.InputClearer); ok {
		t.ClearKeys = c.ClearInputKeys()
	}
	t.Activity = a.turnActivity()
	t.AwaitsPerson = a.awaitsPerson
	t.Asked = a.asked
	return t, true
}

// agentPane adapts the tmux server to delivery.Pane for one agent.
type agentPane struct{ a *agent }

func (p agentPane) pane() (string, error) {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	if p.a.rec.PaneID == "" || p.a.exitHandled {
		return "", delivery.ErrPaneDead
	}
	return p.a.rec.PaneID, nil
}

func (p agentPane) tmux() *tmux.Server { return p.a.m.tmux }

func (p agentPane) Gates(ctx context.Context) (delivery.Gates, error) {
	id, err := p.pane()
	if err != nil {
		return delivery.Gates{Dead: true}, nil
	}
	info, err := p.tmux().PaneInfo(ctx, id)
	if tmux.IsNotFound(err) {
		return delivery.Gates{Dead: true}, nil
	}
	if err != nil {
		return delivery.Gates{}, err
	}
	return delivery.Gates{Dead: info.Dead, InMode: info.InMode, InputOff: info.InputOff, PID: info.PID}, nil
}

func (p agentPane) CancelMode(ctx context.Context) error {
	id, err := p.pane()
	if err != nil {
		return err
	}
	return p.tmux().CancelMode(ctx, id)
}

func (p agentPane) Capture(ctx context.Context) (string, error) {
	id, err := p.pane()
	if err != nil {
		return "", err
	}
	return p.tmux().Capture(ctx, id)
}

func (p agentPane) Paste(ctx context.Context, text string) error {
	p.a.keys.Lock() // never between an answer's look and its keys
	defer p.a.keys.Unlock()
	id, err := p.pane()
	if err != nil {
		return err
	}
	return p.tmux().Paste(ctx, id, text)
}

func (p agentPane) SendKeys(ctx context.Context, keys ...string) error {
	id, err := p.pane()
	if err != nil {
		return err
	}
	return p.tmux().SendKeys(ctx, id, keys...)
}
