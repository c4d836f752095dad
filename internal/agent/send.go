package agent

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Send queues message for the agent and returns at once. Messages to one
// agent are delivered in order. An agent the idle sweep parked
// (wake_on_message) is started first, resuming its conversation. The
// outcome of each message shows in the agent's Deliveries and the log; a
// message that could not land is recorded as failed, never as sent.
func (m *Manager) Send(ctx context.Context, name, message string) (api.SendResult, error) {
	return m.SendMessage(ctx, name, api.SendRequest{Message: message})
}

// SendMessage is Send for a request that may name its message (req.ID):
// a named message already accepted for the agent (within
// api.RememberedIDFor, among its last api.RememberedIDs) is answered with
// the first answer and not queued again, so a caller that timed out can
// retry without doubling. The same id with another text is invalid_args.
func (m *Manager) SendMessage(ctx context.Context, name string, req api.SendRequest) (api.SendResult, error) {
	_, res, err := m.enqueue(ctx, name, req)
	return res, err
}

// Enqueue is Send returning the queue item, whose Done channel closes with
// the delivery's outcome (persistent tasks wait on it). It is the edge every
// sender passes through: a message that holds anything but text (see
// delivery.PasteText) is refused here, whole, with invalid_args.
//
// The queue is durable: the message is written to the agent's record in
// state/agents.json before Enqueue accepts it, and a message that cannot be
// written is refused. It leaves the file once its outcome is known, so a
// daemon killed meanwhile (SIGKILL included) leaves it for the next one,
// which delivers it under the same id (see Await).
func (m *Manager) Enqueue(ctx context.Context, name, message string) (*delivery.Item, api.SendResult, error) {
	return m.enqueue(ctx, name, api.SendRequest{Message: message})
}

func (m *Manager) enqueue(ctx context.Context, name string, req api.SendRequest) (*delivery.Item, api.SendResult, error) {
	text, err := delivery.PasteText(req.Message)
	if err != nil {
		return nil, api.SendResult{}, api.Errorf(api.CodeInvalidArgs, "send to %s: %v", name, err)
	}
	message := text
	if req.ID != "" {
		if err := api.CheckMessageID(req.ID); err != nil {
			return nil, api.SendResult{}, err
		}
	}
	a, err := m.lookup(name)
	if err != nil {
		return nil, api.SendResult{}, err
	}
	if err := m.checkNotCommand(a, message); err != nil {
		return nil, api.SendResult{}, err
	}
	// Close waits for an Enqueue under way, so its writes never land on
	// disk after Close returned.
	leave, err := m.enter()
	if err != nil {
		return nil, api.SendResult{}, err
	}
	defer leave()
	// The state check and the push happen under the agent's op lock, so a
	// Stop (which cancels what is queued) or an idle suspend (which skips
	// an agent with work queued) is wholly before or after them: a message
	// is never queued behind a stop for a TUI that is not coming back.
	a.op.Lock()
	defer a.op.Unlock()
	// A retry is answered before anything else is decided: the agent
	// may be stopped or its queue full by now, and the message is still
	// the one accepted.
	digest := textDigest(message)
	if req.ID != "" {
		if res, ok, err := m.named(a, req.ID, digest); ok || err != nil {
			return nil, res, err
		}
	}
	woke, err := m.wakeLocked(ctx, a)
	if err != nil {
		return nil, api.SendResult{}, err
	}
	// Checked before the write too: a message refused for a full queue
	// never touches the disk. (Push checks again.)
	if limit := m.queueMax(a); a.queue.Waiting() >= limit {
		return nil, api.SendResult{}, m.queueFull(a, limit)
	}
	now := m.clk.Now()
	q := Queued{ID: cmp.Or(req.ID, uuid.NewString()), Text: message, At: now}
	// The answer a named message is remembered with is the one it gets:
	// its count is taken here, before the write (Push counts the same,
	// unless the message in flight finished meanwhile).
	named := Named{ID: req.ID, Digest: digest, At: now, Queued: a.queue.Messages() + 1, Woke: woke}
	if err := m.commit(a, func(r *Record) {
		r.Queue = append(r.Queue, q)
		if req.ID != "" {
			r.Named = remember(r.Named, named, now)
		}
	}, false); err != nil {
		return nil, api.SendResult{}, api.Errorf(api.CodeInternal,
			"agent %s: message not accepted: it could not be written to state/agents.json, where it must be to survive a restart (%v)", name, err)
	}
	it := &delivery.Item{ID: q.ID, Message: message}
	m.mu.Lock()
	a.items[it.ID] = it
	m.mu.Unlock()
	ahead, err := a.queue.Push(it)
	if err != nil {
		// Refused after all: off the disk again, so no later daemon
		// delivers a message its sender was told was refused.
		// A named one is forgotten too: a retry must not be told it was
		// queued.
		m.mu.Lock()
		delete(a.items, it.ID)
		m.mu.Unlock()
		if req.ID != "" {
			if err := m.commit(a, func(r *Record) {
				r.Queue = withoutQueued(r.Queue, it.ID)
				r.Named = withoutNamed(r.Named, it.ID)
			}, false); err != nil {
				m.log.Error("forgetting a refused message's id failed", "agent", name, "id", it.ID, "err", err)
			}
		} else {
			m.unqueue(a, it.ID)
		}
		if errors.Is(err, delivery.ErrFull) {
			return nil, api.SendResult{}, m.queueFull(a, m.queueMax(a))
		}
		return nil, api.SendResult{}, api.Errorf(api.CodeDeliveryFailed, "agent %s: %v", name, err)
	}
	m.log.Info("message queued", "agent", name, "id", it.ID, "bytes", len(message), "ahead", ahead, "woke", woke)
	res := api.SendResult{ID: it.ID, Agent: name, Queued: ahead + 1, Woke: woke, Delivery: api.SendQueued}
	if req.ID != "" {
		res.Queued = named.Queued
	}
	return it, res, nil
}

// named answers a retry of message id sent to a: ok with the first answer
// when a accepted id lately (Record.Named), invalid_args when it did with
// another text, or when id names a message a sender did not name.
func (m *Manager) named(a *agent, id, digest string) (api.SendResult, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := a.rec.Name
	cutoff := m.clk.Now().Add(-api.RememberedIDFor)
	for i := len(a.rec.Named) - 1; i >= 0; i-- {
		n := a.rec.Named[i]
		if n.ID != id || n.At.Before(cutoff) {
			continue
		}
		if n.Digest != digest {
			return api.SendResult{}, false, api.Errorf(api.CodeInvalidArgs,
				"send to %s: id %q already names another message (sent %s); a retry must send the same text, a new message needs a new id", name, id, n.At.UTC().Format(time.RFC3339))
		}
		m.log.Info("message already accepted under this id; answered with the first answer, not queued again", "agent", name, "id", id)
		return api.SendResult{ID: id, Agent: name, Queued: n.Queued, Woke: n.Woke, Delivery: api.SendQueued}, true, nil
	}
	if _, live := a.items[id]; live || hasQueued(a.rec.Queue, id) {
		return api.SendResult{}, false, api.Errorf(api.CodeInvalidArgs, "send to %s: id %q is the id of a message in its queue already; a new message needs a new id", name, id)
	}
	return api.SendResult{}, false, nil
}

// remember appends n to the named messages, dropping those older than
// api.RememberedIDFor and the oldest beyond api.RememberedIDs.
func remember(list []Named, n Named, now time.Time) []Named {
	cutoff := now.Add(-api.RememberedIDFor)
	out := make([]Named, 0, len(list)+1)
	for _, x := range list {
		if !x.At.Before(cutoff) {
			out = append(out, x)
		}
	}
	out = append(out, n)
	if len(out) > api.RememberedIDs {
		out = out[len(out)-api.RememberedIDs:]
	}
	return out
}

// withoutNamed is list without id.
func withoutNamed(list []Named, id string) []Named {
	out := make([]Named, 0, len(list))
	for _, x := range list {
		if x.ID != id {
			out = append(out, x)
		}
	}
	return out
}

// textDigest is what tells a retry (the same text) from another message
// reusing an id.
func textDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

func (m *Manager) queueFull(a *agent, limit int) error {
	m.mu.Lock()
	name := a.rec.Name
	m.mu.Unlock()
	return api.Errorf(api.CodeQueueFull, "agent %s: queue full (%d messages already wait for it; queue_max %d)", name, a.queue.Waiting(), limit)
}

// unqueue removes message id from a's durable queue (a no-op when it is not
// there). A failed write is logged: the message then stays on disk, and a
// later daemon would deliver it once more than its outcome says.
func (m *Manager) unqueue(a *agent, id string) {
	m.mu.Lock()
	has := !a.deleted && hasQueued(a.rec.Queue, id)
	name := a.rec.Name
	m.mu.Unlock()
	if !has {
		return
	}
	if err := m.commit(a, func(r *Record) { r.Queue = withoutQueued(r.Queue, id) }, false); err != nil {
		m.log.Error("removing a finished message from the saved queue failed", "agent", name, "id", id, "err", err)
	}
}

// Await finds message id sent to agent name: its queue item, whose Done
// channel closes with the outcome (Err nil: delivered). It finds messages
// queued or being delivered, and the last finished ones of the agent
// (keptOutcomes); a message accepted before a daemon restart is found by
// the same id once boot restore put it back. not_found otherwise.
func (m *Manager) Await(name, id string) (*delivery.Item, error) {
	a, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if it, ok := a.items[id]; ok {
		return it, nil
	}
	for i := len(a.outcomes) - 1; i >= 0; i-- {
		if a.outcomes[i].ID == id {
			return a.outcomes[i], nil
		}
	}
	return nil, api.Errorf(api.CodeNotFound, "agent %s: no message %q queued, in delivery or recently finished", name, id)
}

// checkNotCommand refuses a message its agent's TUI would run as a command
// of its own ("/exit", "!rm …") instead of taking it as a message.
func (m *Manager) checkNotCommand(a *agent, text string) error {
	m.mu.Lock()
	name, harnessName := a.rec.Name, a.rec.Harness
	m.mu.Unlock()
	h, ok := harness.Lookup(harnessName)
	if !ok {
		return nil
	}
	cp, ok := h.(harness.CommandPrefixer)
	if !ok {
		return nil
	}
	start := strings.TrimLeft(text, " \t\n")
	for _, p := range cp.CommandPrefixes() {
		if strings.HasPrefix(start, p) {
			return api.Errorf(api.CodeInvalidArgs, "send to %s: message starts with %q, which %s runs as a command of its own, not as a message; leo sends messages only", name, p, harnessName)
		}
	}
	return nil
}

// queueMax is how many messages may wait for a: the queue_max of the scope
// it launches from (its template, or its task for an implicit agent);
// config.DefaultQueueMax when that scope is gone or does not resolve.
func (m *Manager) queueMax(a *agent) int {
	m.mu.Lock()
	rec := &Record{Template: a.rec.Template, Task: a.rec.Task}
	m.mu.Unlock()
	if cfg := m.opts.Config(); cfg != nil {
		if res, err := m.resolveRec(cfg, rec); err == nil && res.QueueMax > 0 {
			return res.QueueMax
		}
	}
	return config.DefaultQueueMax
}

// wakeLocked starts a parked agent; a.op must be held. A stopped agent
// that was not parked is not started behind the user's back: sending to it
// is an error.
func (m *Manager) wakeLocked(ctx context.Context, a *agent) (bool, error) {
	m.mu.Lock()
	state, wake, name, deleted := a.rec.State, a.rec.WakeOnMessage, a.rec.Name, a.deleted
	m.mu.Unlock()
	if deleted {
		return false, api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	if state != api.StateStopped {
		return false, nil
	}
	if !wake {
		return false, api.Errorf(api.CodeAgentStopped, "agent %s is stopped; start it first (leo agent start %s)", name, name)
	}
	if err := m.startLocked(ctx, a, "wake on message"); err != nil {
		return false, err
	}
	return true, nil
}

// deliverItem runs the paste protocol for one message (queue worker).
func (m *Manager) deliverItem(ctx context.Context, a *agent, it *delivery.Item) error {
	// A drain holds messages before anything of them reaches the pane;
	// one already under way finishes (its turn is what the drain awaits).
	if err := m.waitUnpaused(ctx, a); err != nil {
		return err
	}
	t, ok := m.target(a)
	if !ok {
		return errors.New("harness not registered")
	}
	if it.Command {
		return m.deliverCommand(ctx, a, t, it)
	}
	m.mu.Lock()
	a.lastActivity = m.clk.Now()
	m.mu.Unlock()
	// A first turn of a harness that picks its own ids waits until no
	// other agent's first turn in the same workspace awaits discovery.
	release := func() {}
	if !it.Pasted {
		var err error
		if release, err = m.firstTurnSlot(ctx, a); err != nil {
			return err
		}
	}
	var err error
	var found string // the conversation the harness recorded the turn in
	t.TurnsRecorded = m.turnWitness(a, &found)
	t.PastedAt = it.PastedAt
	t.Turn = &a.turn
	t.Leftover = a.leftover
	if it.Pasted {
		err = m.driver.Finish(ctx, t, it.Message)
	} else {
		t.BeforePaste = func(text string) error { return m.markInFlight(a, it.ID, text) }
		err = m.driver.Deliver(ctx, t, it.Message)
	}
	m.settleInFlight(a, it.ID, err)
	m.mu.Lock()
	a.lastActivity = m.clk.Now()
	m.mu.Unlock()
	var f *delivery.Failure
	switch {
	case err == nil:
		a.leftover = nil
		m.mu.Lock()
		a.lastSent = it.Message
		m.mu.Unlock()
	case errors.As(err, &f) && (f.Stage == "landed" || f.Stage == "submit"):
		// leo's paste may still sit in the input line: remember it as
		// leo's, so the next message never blames a person for it.
		a.leftover = &delivery.Leftover{ID: it.ID, Text: it.Message, Input: f.Input}
	}
	if err != nil {
		release()
		return err
	}
	if found != "" && m.adoptRecorded(a, found) {
		release()
		return nil
	}
	m.afterTurn(a, release)
	return nil
}

// turnWitness is the proof-of-turn count for a's harness: how many user
// turns carrying the text the harness's own record holds (nil when the
// adapter has no record to read, or the template no longer resolves). The
// conversation the last such turn was found in is left in *found.
func (m *Manager) turnWitness(a *agent, found *string) func(ctx context.Context, text string, since time.Time) (int, error) {
	h, rec, env, ok := m.recordLookup(a)
	if !ok {
		return nil
	}
	w, ok := h.(harness.TurnWitness)
	if !ok {
		return nil
	}
	return func(ctx context.Context, text string, since time.Time) (int, error) {
		m.mu.Lock()
		id := a.rec.SessionID
		m.mu.Unlock()
		q := harness.SessionQuery{Workspace: rec.Workspace, Env: env, Since: since, Exclude: m.claimedIDs(rec.Name)}
		turns, err := w.UserTurns(ctx, q, id)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, u := range turns {
			if turnIs(u.Text, text) {
				n++
				*found = u.SessionID
			}
		}
		return n, nil
	}
}

// turnActivity reads a's harness's own record of turn starts and ends
// (harness.TurnRecorder) for the TUI's current launch: a turn started
// before it (one a killed TUI never ended) is not running. nil when the
// adapter keeps no such record or the template no longer resolves. It
// reads the record on disk, so a daemon restarted mid-turn knows the turn
// runs as well as the one that submitted it.
//
// Before the first turn's record names the agent's conversation, only
// conversations begun since the launch are read (and none another agent
// owns): the workspace may hold older ones — the one a reset left — whose
// unfinished turns are none of this TUI's.
func (m *Manager) turnActivity(a *agent) func(ctx context.Context) (harness.TurnActivity, error) {
	h, rec, env, ok := m.recordLookup(a)
	if !ok {
		return nil
	}
	r, ok := h.(harness.TurnRecorder)
	if !ok {
		return nil
	}
	return func(ctx context.Context) (harness.TurnActivity, error) {
		m.mu.Lock()
		id := a.rec.SessionID
		var since time.Time
		if a.rec.StartedAt != nil {
			since = *a.rec.StartedAt // the harness writes nothing before its launch
		}
		m.mu.Unlock()
		q := harness.SessionQuery{Workspace: rec.Workspace, Env: env, Since: since, Exclude: m.claimedIDs(rec.Name)}
		return r.TurnActivity(ctx, q, id)
	}
}

// recordLookup is what reading a's harness's own record takes: the
// adapter, a copy of the record and the environment the harness runs with.
// ok is false when the harness is not registered or the template no longer
// resolves.
func (m *Manager) recordLookup(a *agent) (harness.Harness, *Record, map[string]string, bool) {
	m.mu.Lock()
	rec := a.rec.clone()
	m.mu.Unlock()
	h, ok := harness.Lookup(rec.Harness)
	if !ok {
		return nil, nil, nil, false
	}
	cfg := m.opts.Config()
	if cfg == nil {
		return nil, nil, nil, false
	}
	res, err := m.resolveRec(cfg, rec)
	if err != nil {
		return nil, nil, nil, false
	}
	return h, rec, m.sessionEnv(res), true
}

// turnIs reports whether a recorded user turn is the message sent: the
// same words, white space aside (a TUI may trim or re-wrap it). A turn
// that merely contains the words ("look" in "please look at the logs") is
// another message.
func turnIs(recorded, sent string) bool {
	want := strings.Join(strings.Fields(sent), " ")
	return want != "" && strings.Join(strings.Fields(recorded), " ") == want
}

// adoptRecorded stores the conversation a first turn was recorded in, for
// a harness that picks its own ids: the record names it, so no "newest
// conversation in the workspace" guess is needed. It reports whether it
// did.
func (m *Manager) adoptRecorded(a *agent, id string) bool {
	m.mu.Lock()
	h, ok := harness.Lookup(a.rec.Harness)
	if !ok || h.Sessions().PinsID() || a.rec.SessionID != "" || a.deleted {
		m.mu.Unlock()
		return false
	}
	for n, o := range m.agents {
		if n != a.rec.Name && o.rec.SessionID == id {
			m.mu.Unlock()
			return false
		}
	}
	a.rec.SessionID = id
	a.rec.SessionUsed = true
	name, harnessName := a.rec.Name, a.rec.Harness
	m.mu.Unlock()
	m.saveAgent(a)
	m.log.Info("conversation id recorded with the first turn", "agent", name, "harness", harnessName, "session", id)
	return true
}

// firstTurnSlot serializes first turns per harness and workspace for
// harnesses whose conversation id is discovered (codex, opencode): their
// session stores only say which conversation in a workspace is newest, so
// two agents of one template whose first turns overlap would both find
// the later one, and one agent would resume the other's conversation while
// the other found none and restarted fresh. The slot is held from the
// first delivery until discovery ends (found, or DiscoverTimeout), so each
// agent's conversation is the newest when it is looked for. It returns the
// release (a no-op when no slot was needed).
func (m *Manager) firstTurnSlot(ctx context.Context, a *agent) (func(), error) {
	m.mu.Lock()
	h, ok := harness.Lookup(a.rec.Harness)
	if !ok || h.Sessions().PinsID() || a.rec.SessionID != "" {
		m.mu.Unlock()
		return func() {}, nil
	}
	key := a.rec.Harness + "\x00" + filepath.Clean(a.rec.Workspace)
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

// markInFlight records, on disk, the message about to be pasted: from here
// until settleInFlight its text may sit in the input line, and a daemon
// killed meanwhile leaves the next one the record to finish it from
// (restore). A failed save stops the delivery before anything is typed.
//
// The same write takes the message off the saved queue: a daemon killed at
// any moment leaves it in exactly one of the two, so it is neither lost
// nor delivered twice.
func (m *Manager) markInFlight(a *agent, id, text string) error {
	f := InFlight{ID: id, Text: text, Since: m.clk.Now()}
	return m.commit(a, func(r *Record) {
		g := f
		r.InFlight = &g
		r.Queue = withoutQueued(r.Queue, id)
	}, false)
}

// settleInFlight drops the in-flight record once the message's outcome is
// known. A delivery cut short by leo shutting down keeps it: its text may
// sit in the input line, and the next daemon finishes it, as after a crash.
func (m *Manager) settleInFlight(a *agent, id string, err error) {
	m.mu.Lock()
	f := a.rec.InFlight
	if f == nil || f.ID != id || (err != nil && m.ctx.Err() != nil) {
		m.mu.Unlock()
		return
	}
	a.rec.InFlight = nil
	m.mu.Unlock()
	m.saveAgent(a)
}

// finished records a message's outcome.
func (m *Manager) finished(a *agent, it *delivery.Item, err error) {
	if it.Job != nil {
		return
	}
	if it.Pasted {
		// A message to finish after a restart that was cancelled before
		// its turn came (a stop, a failed start) has its outcome now: its
		// in-flight record must not be finished again by the next start.
		m.settleInFlight(a, it.ID, err)
	}
	// Its outcome is known: off the saved queue (if it failed before its
	// paste, it is still there). A message cut short by leo shutting down
	// stays, for the next daemon to deliver.
	if m.ctx.Err() == nil {
		m.unqueue(a, it.ID)
	}
	d := api.Delivery{ID: it.ID, Status: "delivered", At: m.clk.Now()}
	what := "message"
	if it.Command {
		d.Kind, what = api.DeliveryCompact, "compaction"
	} else {
		d.From, d.FirstLine = api.DescribeMessage(it.Message)
	}
	m.mu.Lock()
	m.keepOutcome(a, it)
	name := a.rec.Name
	if err != nil {
		d.Status = "failed"
		d.Error = err.Error()
		if errors.Is(err, delivery.ErrCancelled) {
			d.Error = "cancelled: the agent was stopped or leo shut down"
		}
	}
	a.deliveries = append(a.deliveries, d)
	if len(a.deliveries) > recentDeliveries {
		a.deliveries = a.deliveries[len(a.deliveries)-recentDeliveries:]
	}
	m.mu.Unlock()
	if err != nil {
		m.log.Warn(what+" not delivered", "agent", name, "id", it.ID, "err", d.Error)
	} else {
		m.log.Info(what+" delivered", "agent", name, "id", it.ID, "waited", m.clk.Since(it.Enqueued).Round(time.Millisecond))
	}
}

// keepOutcome moves a finished message from a's live items to its kept
// outcomes; m.mu must be held.
func (m *Manager) keepOutcome(a *agent, it *delivery.Item) {
	delete(a.items, it.ID)
	a.outcomes = append(a.outcomes, it)
	if len(a.outcomes) > keptOutcomes {
		a.outcomes = append([]*delivery.Item(nil), a.outcomes[len(a.outcomes)-keptOutcomes:]...)
	}
}

// afterTurn starts, for a harness that picks its own ids (codex, opencode)
// and has none stored yet, the search for the conversation the first turn
// created.
// release is called once the search ends (at once when there is none).
func (m *Manager) afterTurn(a *agent, release func()) {
	m.mu.Lock()
	h, ok := harness.Lookup(a.rec.Harness)
	if !ok || h.Sessions().PinsID() || a.rec.SessionID != "" || a.discovering || m.closed {
		m.mu.Unlock()
		release()
		return
	}
	a.discovering = true
	gen := a.launchGen
	since := time.Time{}
	if a.rec.StartedAt != nil {
		since = *a.rec.StartedAt
	}
	rec := a.rec.clone()
	m.bg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.bg.Done()
		defer release()
		defer func() {
			m.mu.Lock()
			a.discovering = false
			m.mu.Unlock()
		}()
		m.discover(a, h, rec, gen, since)
	}()
}

// discover polls the harness's session store until the new conversation
// shows, then stores its id.
func (m *Manager) discover(a *agent, h harness.Harness, rec *Record, gen int, since time.Time) {
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
			m.mu.Lock()
			if a.launchGen != gen || a.rec.SessionID != "" || a.deleted {
				m.mu.Unlock()
				return
			}
			a.rec.SessionID = id
			a.rec.SessionUsed = true
			m.mu.Unlock()
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

// claimed reports whether another agent already owns conversation id (two
// agents in one workspace must not resume each other's).
// claimedIDs lists the conversation ids the other agents own.
func (m *Manager) claimedIDs(self string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for n, a := range m.agents {
		if n != self && a.rec.SessionID != "" {
			ids = append(ids, a.rec.SessionID)
		}
	}
	return ids
}

func (m *Manager) claimed(id, self string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, a := range m.agents {
		if n != self && a.rec.SessionID == id {
			return true
		}
	}
	return false
}

// Interrupt presses the harness's interrupt key(s) in the agent's pane
// (harness.Interrupter): the turn in flight ends and the TUI stays, ready
// for the next message. Nothing is queued or waited for: on an idle TUI
// the key does nothing. A stopped agent is agent_stopped.
func (m *Manager) Interrupt(ctx context.Context, name string) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	m.mu.Lock()
	state, harnessName := a.rec.State, a.rec.Harness
	m.mu.Unlock()
	if state == api.StateStopped {
		return api.Agent{}, api.Errorf(api.CodeAgentStopped, "agent %s is stopped; there is no turn to interrupt", name)
	}
	h, _ := harness.Lookup(harnessName)
	in, ok := h.(harness.Interrupter)
	if !ok {
		return api.Agent{}, api.Errorf(api.CodeInvalidArgs, "agent %s: the %s harness names no interrupt key", name, harnessName)
	}
	pane := agentPane{m: m, a: a}
	// One key per send, apart: two Escapes in one write reach the TUI as
	// one Alt+Escape, which opencode does not take as its second press.
	for i, k := range in.InterruptKeys() {
		if i > 0 {
			select {
			case <-ctx.Done():
				return api.Agent{}, ctx.Err()
			case <-m.clk.After(interruptKeyGap):
			}
		}
		if err := pane.SendKeys(ctx, k); err != nil {
			if errors.Is(err, delivery.ErrPaneDead) {
				return api.Agent{}, api.Errorf(api.CodeAgentStopped, "agent %s has no live pane (it is starting or restarting); nothing to interrupt", name)
			}
			return api.Agent{}, api.Errorf(api.CodeTmux, "agent %s: interrupt: %v", name, err)
		}
	}
	m.log.Info("interrupt sent", "agent", name, "harness", harnessName)
	if c, ok := h.(harness.InputClearer); ok {
		m.clearRestored(ctx, a, h.Screen(), c.ClearInputKeys())
	}
	return m.Get(name)
}

// interruptKeyGap separates the presses of a multi-key interrupt.
const interruptKeyGap = 200 * time.Millisecond

// clearRestored waits (a few seconds at most) for an interrupted TUI to
// settle and, if it put leo's last message back into its input line
// (claude does when the model had not answered yet), clears that line with
// the adapter's keys: no later message could be pasted over it, and it is
// leo's own text, never a person's. Anything else in the line is left.
func (m *Manager) clearRestored(ctx context.Context, a *agent, r harness.ScreenReader, keys []string) {
	m.mu.Lock()
	last, name := a.lastSent, a.rec.Name
	m.mu.Unlock()
	if last == "" || len(keys) == 0 {
		return
	}
	pane := agentPane{m: m, a: a}
	lines := strings.Count(last, "\n") + 1
	presses := lines // a clear may take one line at a time
	deadline := m.clk.Now().Add(restoreWait)
	for m.clk.Now().Before(deadline) {
		text, err := pane.Capture(ctx)
		if err != nil {
			return
		}
		s := r.Classify(text)
		switch {
		case s.State == harness.ScreenReady && s.Input == "":
			if presses < lines {
				return // cleared
			}
		case s.State == harness.ScreenReady && presses > 0 && (r.Landed(s, last) || strings.Contains(last, s.Input)):
			if err := pane.SendKeys(ctx, keys...); err != nil {
				return
			}
			presses--
			m.log.Info("cleared the interrupted message the TUI put back in its input line", "agent", name)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.clk.After(100 * time.Millisecond):
		}
	}
}

// restoreWait bounds how long an interrupt waits to see whether the TUI
// put the interrupted message back into its input line.
const restoreWait = 3 * time.Second

// Busy reports whether the agent is working: a message queued or being
// delivered, its TUI showing a turn in flight, or the harness's record
// saying a turn runs. A stopped agent is idle.
// It costs one pane capture (the graceful-restart drain polls it).
func (m *Manager) Busy(ctx context.Context, name string) (bool, error) {
	a, err := m.lookup(name)
	if err != nil {
		return false, err
	}
	// Messages, not queue items: an internal job (the startup probe
	// finishing its save) is no work of the agent's.
	if a.queue.Messages() > 0 {
		return true, nil
	}
	m.mu.Lock()
	stopped, pane := a.rec.State == api.StateStopped, a.rec.PaneID
	m.mu.Unlock()
	if stopped || pane == "" {
		return false, nil
	}
	t, ok := m.target(a)
	if !ok {
		return false, nil
	}
	text, err := t.Pane.Capture(ctx)
	if err != nil {
		return false, nil // a dead or vanished pane is not working
	}
	if t.Screen.Classify(text).State == harness.ScreenBusy {
		return true, nil
	}
	// codex streaming a reply looks idle: its record says otherwise.
	if t.Activity != nil {
		if rec, err := t.Activity(ctx); err == nil && rec.Found && rec.Running {
			return true, nil
		}
	}
	return false, nil
}

// enter registers a caller's work with the manager, so Close waits for it
// (its writes never land on disk after Close returned); it fails once the
// manager is closing. The caller runs leave when done.
func (m *Manager) enter() (leave func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, api.Errorf(api.CodeInternal, "agent manager is shutting down")
	}
	m.bg.Add(1)
	return m.bg.Done, nil
}
