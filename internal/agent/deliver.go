package agent

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// deliver runs the paste protocol for one message (the queue's worker).
func (a *agent) deliver(ctx context.Context, it *delivery.Item) error {
	m := a.m
	// A drain holds messages before anything of them reaches the pane;
	// one already under way finishes (its turn is what the drain awaits).
	if err := a.waitUnpaused(ctx); err != nil {
		return err
	}
	t, ok := a.target()
	if !ok {
		return errors.New("harness not registered")
	}
	if it.Command {
		return a.deliverCommand(ctx, t, it)
	}
	a.touch()
	// A first turn of a harness that picks its own ids waits until no
	// other agent's first turn in the same workspace awaits discovery.
	release := func() {}
	if !it.Pasted {
		var err error
		if release, err = a.firstTurnSlot(ctx); err != nil {
			return err
		}
	}
	var err error
	var found string // the conversation the harness recorded the turn in
	t.TurnsRecorded = a.turnWitness(&found)
	t.PastedAt = it.PastedAt
	t.Turn = &a.turn
	t.Leftover = a.leftover
	if it.Pasted {
		err = m.driver.Finish(ctx, t, it.Message)
	} else {
		t.BeforePaste = func(text string) error { return a.markInFlight(it.ID, text, it.Sender) }
		err = m.driver.Deliver(ctx, t, it.Message)
	}
	a.settleInFlight(it.ID, err)
	a.touch()
	var f *delivery.Failure
	switch {
	case err == nil:
		a.leftover = nil
		a.mu.Lock()
		a.lastSent = it.Message
		a.mu.Unlock()
	case errors.As(err, &f) && (f.Stage == "landed" || f.Stage == "submit"):
		// leo's paste may still sit in the input line: remember it as
		// leo's, so the next message never blames a person for it.
		a.leftover = &delivery.Leftover{ID: it.ID, Text: it.Message, Input: f.Input}
	}
	if err != nil {
		release()
		return err
	}
	if found != "" && a.adoptRecorded(found) {
		release()
		return nil
	}
	a.afterTurn(release)
	return nil
}

// turnWitness is the proof-of-turn count for a's harness: how many user
// turns carrying the text the harness's own record holds (nil when the
// adapter has no record to read, or the template no longer resolves). The
// conversation the last such turn was found in is left in *found.
func (a *agent) turnWitness(found *string) func(ctx context.Context, text string, since time.Time) (int, error) {
	h, rec, env, ok := a.recordLookup()
	if !ok {
		return nil
	}
	w, ok := h.(harness.TurnWitness)
	if !ok {
		return nil
	}
	return func(ctx context.Context, text string, since time.Time) (int, error) {
		a.mu.Lock()
		id := a.rec.SessionID
		a.mu.Unlock()
		q := harness.SessionQuery{Workspace: rec.Workspace, Env: env, Since: since, Exclude: a.m.claimedIDs(rec.Name)}
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
func (a *agent) turnActivity() func(ctx context.Context) (harness.TurnActivity, error) {
	h, rec, env, ok := a.recordLookup()
	if !ok {
		return nil
	}
	r, ok := h.(harness.TurnRecorder)
	if !ok {
		return nil
	}
	return func(ctx context.Context) (harness.TurnActivity, error) {
		a.mu.Lock()
		id := a.rec.SessionID
		var since time.Time
		if a.rec.StartedAt != nil {
			since = *a.rec.StartedAt // the harness writes nothing before its launch
		}
		a.mu.Unlock()
		q := harness.SessionQuery{Workspace: rec.Workspace, Env: env, Since: since, Exclude: a.m.claimedIDs(rec.Name)}
		return r.TurnActivity(ctx, q, id)
	}
}

// recordLookup is what reading a's harness's own record takes: the
// adapter of the current launch, a copy of the record and the environment
// the harness runs with. ok is false when the harness is not registered or
// the template no longer resolves.
func (a *agent) recordLookup() (harness.Harness, *Record, map[string]string, bool) {
	m := a.m
	a.mu.Lock()
	rec, h := a.rec.clone(), a.adapter
	a.mu.Unlock()
	if h == nil {
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

// markInFlight records, on disk, the message about to be pasted: from here
// until settleInFlight its text may sit in the input line, and a daemon
// killed meanwhile leaves the next one the record to finish it from
// (restore). A failed save stops the delivery before anything is typed.
//
// The same write takes the message off the saved queue: a daemon killed at
// any moment leaves it in exactly one of the two, so it is neither lost
// nor delivered twice.
func (a *agent) markInFlight(id, text, sender string) error {
	f := InFlight{ID: id, Text: text, Since: a.m.clk.Now(), Sender: sender}
	return a.commit(func(r *Record) {
		g := f
		r.InFlight = &g
		r.Queue = withoutQueued(r.Queue, id)
	})
}

// settleInFlight drops the in-flight record once the message's outcome is
// known. A delivery cut short by leo shutting down keeps it: its text may
// sit in the input line, and the next daemon finishes it, as after a crash.
func (a *agent) settleInFlight(id string, err error) {
	a.mu.Lock()
	f := a.rec.InFlight
	if f == nil || f.ID != id || (err != nil && a.m.ctx.Err() != nil) {
		a.mu.Unlock()
		return
	}
	a.rec.InFlight = nil
	a.mu.Unlock()
	a.m.saveAgent(a)
}

// finished records a message's outcome.
func (a *agent) finished(it *delivery.Item, err error) {
	if it.Job != nil {
		return
	}
	m := a.m
	if it.Pasted {
		// A message to finish after a restart that was cancelled before
		// its turn came (a stop, a failed start) has its outcome now: its
		// in-flight record must not be finished again by the next start.
		a.settleInFlight(it.ID, err)
	}
	// Its outcome is known: off the saved queue (if it failed before its
	// paste, it is still there). A message cut short by leo shutting down
	// stays, for the next daemon to deliver.
	if m.ctx.Err() == nil {
		a.unqueue(it.ID)
	}
	d := api.Delivery{ID: it.ID, Status: "delivered", At: m.clk.Now()}
	if err == nil && !it.Command {
		a.noteSent(it, d.At)
	}
	what := "message"
	if it.Command {
		d.Kind, what = api.DeliveryCompact, "compaction"
	} else {
		d.From, d.FirstLine = api.DescribeMessage(it.Message)
	}
	a.mu.Lock()
	a.keepOutcome(it)
	name := a.rec.Name
	if err != nil {
		d.Status = "failed"
		d.Error = err.Error()
		if errors.Is(err, delivery.ErrCancelled) {
			d.Error = "cancelled: the agent was stopped or leo shut down"
		}
	}
	a.deliveries = append(a.deliveries, d)
	e := api.Event{Type: api.EventMessageDelivered, Agent: name, MessageID: d.ID, FirstLine: d.FirstLine}
	if err != nil {
		e.Type, e.Reason = api.EventMessageFailed, d.Error
	}
	m.publish(e)
	if err == nil && !it.Command {
		// The turn it started is what the agent works on now; the queue
		// worker (this goroutine) owns a.turn.
		a.deliveredLocked(it.ID, d.FirstLine, a.turn)
	}
	if len(a.deliveries) > recentDeliveries {
		a.deliveries = a.deliveries[len(a.deliveries)-recentDeliveries:]
	}
	a.wakeLocked()
	a.mu.Unlock()
	if err != nil {
		m.log.Warn(what+" not delivered", "agent", name, "id", it.ID, "err", d.Error)
	} else {
		m.log.Info(what+" delivered", "agent", name, "id", it.ID, "waited", m.clk.Since(it.Enqueued).Round(time.Millisecond))
	}
}

// keepOutcome moves a finished message from a's live items to its kept
// outcomes; a.mu must be held.
func (a *agent) keepOutcome(it *delivery.Item) {
	delete(a.items, it.ID)
	a.outcomes = append(a.outcomes, it)
	if len(a.outcomes) > keptOutcomes {
		a.outcomes = append([]*delivery.Item(nil), a.outcomes[len(a.outcomes)-keptOutcomes:]...)
	}
}
