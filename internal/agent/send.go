package agent

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
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
		return nil, api.SendResult{}, api.Errorf(api.CodeInvalidArgs, "send to %s: %w", name, err)
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
	if err := a.checkNotCommand(message); err != nil {
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
	req.Message = message
	return a.accept(ctx, req, false)
}

// accept puts req's message (checked: text only, no command) on a's
// durable queue, under req.ID or a new id: on disk first, then in the
// queue; first puts it ahead of every queued message (the continue a
// limit's end sends), which the hold lets pass. a.op must be held.
func (a *agent) accept(ctx context.Context, req api.SendRequest, first bool) (*delivery.Item, api.SendResult, error) {
	m, name, message := a.m, a.name(), req.Message
	// A retry is answered before anything else is decided: the agent
	// may be stopped or its queue full by now, and the message is still
	// the one accepted.
	digest := textDigest(message)
	if req.ID != "" {
		if res, ok, err := a.named(req.ID, digest); ok || err != nil {
			return nil, res, err
		}
	}
	woke, err := a.wake(ctx)
	if err != nil {
		return nil, api.SendResult{}, err
	}
	// Checked before the write too: a message refused for a full queue
	// never touches the disk. (Push checks again.)
	if limit := a.queueMax(); a.queue.Waiting() >= limit {
		return nil, api.SendResult{}, a.queueFull(limit)
	}
	now := m.clk.Now()
	q := Queued{ID: cmp.Or(req.ID, uuid.NewString()), Text: message, At: now, Sender: senderOf(req.Sender, message)}
	// The answer a named message is remembered with is the one it gets:
	// its count is taken here, before the write (Push counts the same,
	// unless the message in flight finished meanwhile).
	named := Named{ID: req.ID, Digest: digest, At: now, Queued: a.queue.Messages() + 1, Woke: woke}
	if err := a.commit(func(r *Record) {
		if first {
			r.Queue = append([]Queued{q}, r.Queue...)
		} else {
			r.Queue = append(r.Queue, q)
		}
		if req.ID != "" {
			r.Named = remember(r.Named, named, now)
		}
	}); err != nil {
		return nil, api.SendResult{}, api.Errorf(api.CodeInternal,
			"agent %s: message not accepted: it could not be written to state/agents.json, where it must be to survive a restart (%v)", name, err)
	}
	it := &delivery.Item{ID: q.ID, Message: message, Sender: q.Sender, Unheld: first}
	a.mu.Lock()
	a.items[it.ID] = it
	a.mu.Unlock()
	var ahead int
	if first {
		err = a.queue.PushFront(it)
	} else {
		ahead, err = a.queue.Push(it)
	}
	if err != nil {
		return nil, api.SendResult{}, a.refused(it.ID, req.ID != "", err)
	}
	m.log.Info("message queued", "agent", name, "id", it.ID, "bytes", len(message), "ahead", ahead, "woke", woke)
	_, firstLine := api.DescribeMessage(message)
	m.publish(api.Event{Type: api.EventMessageQueued, Agent: name, MessageID: it.ID, FirstLine: firstLine})
	res := api.SendResult{ID: it.ID, Agent: name, Queued: ahead + 1, Woke: woke, Delivery: api.SendQueued}
	if req.ID != "" {
		res.Queued = named.Queued
	}
	return it, res, nil
}

// refused takes message id, which the queue refused with err after it was
// written, off the disk again, so no later daemon delivers a message its
// sender was told was refused. A named one is forgotten too: a retry must
// not be told it was queued. It returns the sender's error.
func (a *agent) refused(id string, named bool, err error) error {
	name := a.name()
	a.mu.Lock()
	delete(a.items, id)
	a.mu.Unlock()
	if named {
		if err := a.commit(func(r *Record) {
			r.Queue = withoutQueued(r.Queue, id)
			r.Named = withoutNamed(r.Named, id)
		}); err != nil {
			a.m.log.Error("forgetting a refused message's id failed", "agent", name, "id", id, "err", err)
		}
	} else {
		a.unqueue(id)
	}
	if errors.Is(err, delivery.ErrFull) {
		return a.queueFull(a.queueMax())
	}
	return api.Errorf(api.CodeDeliveryFailed, "agent %s: %w", name, err)
}

// named answers a retry of message id sent to a: ok with the first answer
// when a accepted id lately (Record.Named), invalid_args when it did with
// another text, or when id names a message a sender did not name.
func (a *agent) named(id, digest string) (api.SendResult, bool, error) {
	m := a.m
	a.mu.Lock()
	defer a.mu.Unlock()
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

func (a *agent) queueFull(limit int) error {
	name := a.name()
	return api.Errorf(api.CodeQueueFull, "agent %s: queue full (%d messages already wait for it; queue_max %d)", name, a.queue.Waiting(), limit)
}

// unqueue removes message id from a's durable queue (a no-op when it is not
// there). A failed write is logged: the message then stays on disk, and a
// later daemon would deliver it once more than its outcome says.
func (a *agent) unqueue(id string) {
	a.mu.Lock()
	has := !a.deleted && hasQueued(a.rec.Queue, id)
	name := a.rec.Name
	a.mu.Unlock()
	if !has {
		return
	}
	if err := a.commit(func(r *Record) { r.Queue = withoutQueued(r.Queue, id) }); err != nil {
		a.m.log.Error("removing a finished message from the saved queue failed", "agent", name, "id", id, "err", err)
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
	a.mu.Lock()
	defer a.mu.Unlock()
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
func (a *agent) checkNotCommand(text string) error {
	h, harnessName := a.harness()
	name := a.name()
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
func (a *agent) queueMax() int {
	m := a.m
	a.mu.Lock()
	rec := &Record{Template: a.rec.Template, Task: a.rec.Task}
	a.mu.Unlock()
	if cfg := m.opts.Config(); cfg != nil {
		if res, err := m.resolveRec(cfg, rec); err == nil && res.QueueMax > 0 {
			return res.QueueMax
		}
	}
	return config.DefaultQueueMax
}

// wake starts a parked agent; a.op must be held. A stopped agent that
// was not parked is not started behind the user's back: sending to it is
// an error.
func (a *agent) wake(ctx context.Context) (bool, error) {
	a.mu.Lock()
	state, wake, name, deleted := a.rec.State, a.rec.WakeOnMessage, a.rec.Name, a.deleted
	a.mu.Unlock()
	if deleted {
		return false, api.Errorf(api.CodeNotFound, "agent %q not found", name)
	}
	if state != api.StateStopped {
		return false, nil
	}
	if !wake {
		return false, api.Errorf(api.CodeAgentStopped, "agent %s is stopped; start it first (leo agent start %s)", name, name)
	}
	if err := a.start(ctx, "wake on message"); err != nil {
		return false, err
	}
	return true, nil
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
