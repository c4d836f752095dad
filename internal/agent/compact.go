package agent

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Compact queues a compaction of the agent's conversation and returns at
// once: the adapter's compact command (harness.Compacter; the text never
// comes from a caller) is typed into the TUI when its input line is idle,
// in order with the messages queued for it, and confirmed by the harness's
// own record of the compaction. Its outcome shows in the agent's
// Deliveries under the returned id (kind "compact"); a refusal by the
// harness ("Not enough messages to compact.") is a failure with the
// harness's words. A parked agent is woken first, as for a message.
//
// Unlike a message it is not written to state/agents.json: a daemon that
// stops before it ran drops it (its caller asks again).
func (m *Manager) Compact(ctx context.Context, name string) (api.SendResult, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.SendResult{}, err
	}
	h, harnessName := a.harness()
	c, ok := h.(harness.Compacter)
	if !ok {
		return api.SendResult{}, api.Errorf(api.CodeInvalidArgs, "compact %s: the %s harness has no compact command leo knows", name, harnessName)
	}
	leave, err := m.enter()
	if err != nil {
		return api.SendResult{}, err
	}
	defer leave()
	// Under the op lock, as a message: a stop is wholly before or after.
	a.op.Lock()
	defer a.op.Unlock()
	woke, err := a.wake(ctx)
	if err != nil {
		return api.SendResult{}, err
	}
	it := &delivery.Item{ID: uuid.NewString(), Message: c.CompactCommand(), Command: true}
	a.mu.Lock()
	a.items[it.ID] = it
	a.mu.Unlock()
	ahead, err := a.queue.Push(it)
	if err != nil {
		a.mu.Lock()
		delete(a.items, it.ID)
		a.mu.Unlock()
		if errors.Is(err, delivery.ErrFull) {
			return api.SendResult{}, a.queueFull(a.queueMax())
		}
		return api.SendResult{}, api.Errorf(api.CodeDeliveryFailed, "compact %s: %w", name, err)
	}
	m.log.Info("compaction queued", "agent", name, "id", it.ID, "ahead", ahead, "woke", woke)
	return api.SendResult{ID: it.ID, Agent: name, Queued: ahead + 1, Woke: woke, Delivery: "queued"}, nil
}

// deliverCommand runs a queued harness command (a compaction) in a's TUI
// and waits for the harness's record of it.
func (a *agent) deliverCommand(ctx context.Context, t delivery.Target, it *delivery.Item) error {
	record := a.compactRecord()
	if record == nil {
		return errors.New("the harness's record of a compaction cannot be read (harness not registered, or the agent's template no longer resolves)")
	}
	a.touch()
	t.Turn = &a.turn
	t.Leftover = a.leftover
	err := a.m.driver.Command(ctx, t, it.Message, record)
	a.touch()
	return err
}

// compactRecord reads a's harness's record of compactions: done when one
// was recorded since, else the harness's refusal if it recorded one (nil
// when the record cannot be read).
func (a *agent) compactRecord() delivery.CommandRecord {
	h, rec, env, ok := a.recordLookup()
	if !ok {
		return nil
	}
	c, ok := h.(harness.Compacter)
	if !ok {
		return nil
	}
	return func(ctx context.Context, since time.Time) (bool, string, error) {
		a.mu.Lock()
		id := a.rec.SessionID
		a.mu.Unlock()
		q := harness.SessionQuery{Workspace: rec.Workspace, Env: env, Since: since, Exclude: a.m.claimedIDs(rec.Name)}
		cs, err := c.Compactions(ctx, q, id)
		if err != nil {
			return false, "", err
		}
		refused := ""
		for _, x := range cs {
			if x.Refused == "" {
				return true, "", nil
			}
			refused = x.Refused
		}
		return false, refused, nil
	}
}
