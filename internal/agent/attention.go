package agent

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Attention is what a running agent is doing, for a person steering the
// fleet (docs/agents.md, "Attention"). It comes from the harness's own
// signals first — its hooks or plugin through leo's hook command
// (Manager.Signal), leo's own delivery of a message — and from the screen
// second (a prompt the screen shows while a message waits, or while the
// agent needs a person), never from a timer. It lives in memory: a new
// launch starts idle, and a daemon restart starts every adopted agent
// idle until its harness says otherwise.

// publish sends e to the stream (nil Events: nobody listens). The bus
// never calls back, so it may be called with any lock held.
func (m *Manager) publish(e api.Event) { events.Publish(m.opts.Events, e) }

// noteState publishes a's state when it changed since last published, and
// keeps attention to running agents: a new launch starts idle, and an
// agent that stops (or restarts) has none. a.mu must be held.
func (a *agent) noteState() {
	state := string(a.rec.State)
	if a.deleted {
		state = "deleted"
	}
	if state == a.pubState {
		return
	}
	a.pubState = state
	a.m.publish(api.Event{Type: api.EventAgentState, Agent: a.rec.Name, State: state, Reason: a.rec.Error})
	if a.rec.State != api.StateRunning || a.deleted {
		a.attn = nil
		a.stopWatch()
		return
	}
	if a.attn == nil {
		a.setAttentionLocked(api.Attention{State: api.AttentionIdle})
	}
}

// attention is a copy of a's attention (nil while not running); a.mu
// must be held.
func (a *agent) attentionLocked() *api.Attention {
	if a.attn == nil || a.rec.State != api.StateRunning {
		return nil
	}
	c := *a.attn
	if c.Prompt != nil {
		p := *c.Prompt
		p.Choices = slices.Clone(p.Choices)
		p.Answers = slices.Clone(p.Answers)
		c.Prompt = &p
	}
	return &c
}

// setAttention changes a's attention to next and publishes the change.
func (a *agent) setAttention(next api.Attention) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.State != api.StateRunning || a.deleted {
		return
	}
	a.setAttentionLocked(next)
}

// setAttentionLocked is setAttention with a.mu held. It stamps Since and
// the prompt's id, publishes agent.attention, and turn.started or
// turn.ended when a turn begins or ends with the change.
func (a *agent) setAttentionLocked(next api.Attention) {
	prev := a.attn
	if next.Prompt != nil {
		p := *next.Prompt
		p.ID = api.PromptID(p.Kind, p.Text, p.Choices)
		p.Answers = answersOf(a.adapter, p)
		next.Prompt = &p
	}
	if prev != nil && prev.State == api.AttentionWorking && next.State == api.AttentionNeedsInput {
		next.MessageID = prev.MessageID // the turn that asks
	}
	if prev != nil && prev.State == api.AttentionNeedsInput && next.State == api.AttentionNeedsInput {
		next.MessageID = prev.MessageID
	}
	if next.State == api.AttentionWorking {
		a.turnDetail = next.Detail
	}
	if prev != nil && sameAttention(*prev, next) {
		return
	}
	if next.Since.IsZero() {
		next.Since = a.m.clk.Now().UTC()
	}
	a.attn = &next
	name := a.rec.Name
	inTurn := func(x *api.Attention) bool {
		return x != nil && (x.State == api.AttentionWorking || x.State == api.AttentionNeedsInput)
	}
	if next.State == api.AttentionWorking && !inTurn(prev) {
		a.m.publish(api.Event{Type: api.EventTurnStarted, Agent: name, MessageID: next.MessageID, FirstLine: next.Detail})
	}
	if inTurn(prev) && !inTurn(&next) {
		outcome := "ok"
		if next.State != api.AttentionIdle {
			outcome = "error"
		}
		a.turnEnds++
		e := api.Event{Type: api.EventTurnEnded, Agent: name, MessageID: prev.MessageID, State: outcome}
		if outcome == "ok" {
			e.FirstLine = next.Detail
			a.limitBackoff = 0 // a good turn: the next limit's backoff starts over
		} else {
			e.Reason = next.Detail
		}
		a.m.publish(e)
	}
	c := a.attentionLocked()
	a.m.publish(api.Event{Type: api.EventAgentAttention, Agent: name, Attention: c})
	a.wakeLocked()
	if next.State == api.AttentionWorking || next.State == api.AttentionNeedsInput {
		a.startWatch()
	} else {
		a.stopWatch()
	}
}

// sameAttention reports whether y says nothing x does not.
func sameAttention(x, y api.Attention) bool {
	if x.State != y.State || x.Detail != y.Detail || x.MessageID != y.MessageID {
		return false
	}
	if (x.Prompt == nil) != (y.Prompt == nil) || (x.Prompt != nil && x.Prompt.ID != y.Prompt.ID) {
		return false
	}
	if (x.ResetsAt == nil) != (y.ResetsAt == nil) || (x.ResetsAt != nil && !x.ResetsAt.Equal(*y.ResetsAt)) {
		return false
	}
	return true
}

// awaitsPerson reports whether a waits for a person (needs_input, or a
// limit): messages are held then, with no timeout of their own.
func (a *agent) awaitsPerson() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attn != nil && (a.attn.State == api.AttentionNeedsInput || a.attn.State == api.AttentionLimited)
}

// asked is told of a prompt the screen shows: a needs a person.
func (a *agent) asked(p harness.Prompt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.State != api.StateRunning || a.deleted {
		return
	}
	a.promptSeen = true
	a.setAttentionLocked(needsInput(p))
}

func needsInput(p harness.Prompt) api.Attention {
	return api.Attention{
		State: api.AttentionNeedsInput,
		// The whole question in one line: its first line alone often only
		// names the tool ("Bash command"), not what it would run.
		Detail: api.FirstLine(strings.Join(strings.Fields(p.Text), " ")),
		Prompt: &api.Prompt{Kind: p.Kind, Text: p.Text, Choices: slices.Clone(p.Choices)},
	}
}

// deliveredLocked notes that leo's message id (first its first line)
// started a turn, whose Enter and record count turn holds: a is working
// on it, unless the harness already said that turn ended (a reply faster
// than the delivery's own confirmation). a.mu must be held.
func (a *agent) deliveredLocked(id, first string, turn delivery.Turn) {
	if a.rec.State != api.StateRunning || a.deleted {
		return
	}
	if x := a.attn; x != nil && !x.Since.Before(turn.SubmittedAt) && x.State != api.AttentionWorking {
		return // that turn is over already (or waits for a person)
	}
	a.turnBase = -1
	if turn.Recorded {
		a.turnBase = turn.EndedBefore
	}
	a.setAttentionLocked(api.Attention{State: api.AttentionWorking, Detail: first, MessageID: id})
}

// Signal takes what an agent's harness told leo's hook (the payload as
// its adapter read it) and changes the agent's attention by it. A signal
// for an agent that is gone or not running changes nothing.
func (m *Manager) Signal(ctx context.Context, name string, sig harness.Signal) {
	a, err := m.lookup(name)
	if err != nil || sig.Kind == harness.SignalNone {
		return
	}
	switch sig.Kind {
	case harness.SignalTurnStarted:
		a.mu.Lock()
		next := api.Attention{State: api.AttentionWorking, Detail: api.FirstLine(sig.Text)}
		if x := a.attn; x != nil && x.State == api.AttentionWorking {
			next = *x // leo's delivery said so first, with the message's id
		} else {
			a.turnBase = -1
		}
		if a.rec.State == api.StateRunning && !a.deleted {
			a.setAttentionLocked(next)
		}
		a.mu.Unlock()
	case harness.SignalWorking:
		a.mu.Lock()
		next := api.Attention{State: api.AttentionWorking}
		if x := a.attn; x != nil && (x.State == api.AttentionWorking || x.State == api.AttentionNeedsInput) {
			next.Detail, next.MessageID = a.turnDetail, x.MessageID
			if x.State == api.AttentionWorking {
				next.Since = x.Since
			}
		}
		if a.rec.State == api.StateRunning && !a.deleted {
			a.promptSeen = false
			a.setAttentionLocked(next)
		}
		a.mu.Unlock()
	case harness.SignalNeedsInput:
		p := harness.Prompt{Kind: api.PromptQuestion, Text: sig.Text}
		if sig.Prompt != nil {
			p = *sig.Prompt
		}
		// The screen words the prompt fully (its choices); the hook's
		// payload may only name the tool.
		if s, ok := a.screen(ctx); ok && s.Prompt != nil {
			p = *s.Prompt
			a.mu.Lock()
			a.promptSeen = true
			a.mu.Unlock()
		}
		a.setAttention(needsInput(p))
	case harness.SignalTurnEnded:
		a.setAttention(api.Attention{State: api.AttentionIdle, Detail: api.FirstLine(sig.Text)})
	case harness.SignalTurnFailed:
		a.setAttention(api.Attention{State: api.AttentionErrored, Detail: api.FirstLine(sig.Text)})
	case harness.SignalLimited:
		next := api.Attention{State: api.AttentionLimited, Detail: api.FirstLine(sig.Text)}
		if !sig.ResetsAt.IsZero() {
			t := sig.ResetsAt.UTC()
			next.ResetsAt = &t
		}
		a.limit(next, sig.HarnessWaits)
	}
	// The harness goes on by itself (its own retry, a person typing in
	// the TUI): the limit is over, and leo types no continue.
	switch sig.Kind {
	case harness.SignalTurnStarted, harness.SignalWorking:
		a.endLimit(0, "the harness went on by itself", true)
	case harness.SignalTurnEnded:
		a.mu.Lock()
		waits := a.rec.Limit != nil && a.rec.Limit.HarnessWaits
		a.mu.Unlock()
		if waits {
			a.endLimit(0, "the harness went on by itself", true)
		}
	}
}

// screen classifies one capture of a's pane (false: no live pane, or its
// adapter is not registered).
func (a *agent) screen(ctx context.Context) (harness.Screen, bool) {
	t, ok := a.target()
	if !ok {
		return harness.Screen{}, false
	}
	capture, err := t.Pane.Capture(ctx)
	if err != nil {
		return harness.Screen{}, false
	}
	return t.Screen.Classify(capture), true
}

// attentionPoll is how often the watcher of an agent in a turn looks: at
// the harness's record while it works (a file read, no tmux), at the
// screen while it needs a person (one capture; only such agents pay it).
const attentionPoll = time.Second

// startWatch starts a's watcher unless it runs; a.mu must be held. The
// watcher catches what no hook says: a turn whose end only the harness's
// record shows (codex runs no notify for a failed turn), and a prompt
// answered in the TUI.
func (a *agent) startWatch() {
	if a.watchStop != nil || a.m.ctx.Err() != nil {
		return
	}
	stop := make(chan struct{})
	a.watchStop = stop
	go a.watch(stop)
}

// stopWatch ends a's watcher; a.mu must be held.
func (a *agent) stopWatch() {
	if a.watchStop != nil {
		close(a.watchStop)
		a.watchStop = nil
	}
}

func (a *agent) watch(stop chan struct{}) {
	m := a.m
	ctx := m.ctx
	read := a.turnActivity()
	// sawRunning: the record showed the turn running; base: the turn ends
	// it held before the turn's Enter (-1: unknown, a turn leo did not
	// start). Either way a record that counts one end more, and none
	// running, is the turn's end.
	sawRunning := false
	for {
		t := m.clk.NewTimer(attentionPoll)
		select {
		case <-stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		a.mu.Lock()
		var cur api.Attention
		if a.attn != nil {
			cur = *a.attn
		}
		seen := a.promptSeen
		a.mu.Unlock()
		switch cur.State {
		case api.AttentionWorking:
			if read == nil {
				continue
			}
			act, err := read(ctx)
			if err != nil || !act.Found {
				continue
			}
			if act.Running {
				sawRunning = true
				continue
			}
			a.mu.Lock()
			base := a.turnBase
			a.mu.Unlock()
			if sawRunning || (base >= 0 && act.Ended > base) {
				// The record says the turn ended and no hook did.
				if next := recordedEnd(act); next.State == api.AttentionLimited {
					a.limit(next, false)
				} else {
					a.settleTurn(cur, next)
				}
				sawRunning = false
			}
		case api.AttentionNeedsInput:
			s, ok := a.screen(ctx)
			switch {
			case !ok:
			case s.Prompt != nil:
				a.asked(*s.Prompt) // a new prompt gets a new id
			case !seen:
				// The prompt the hook announced has not shown yet (or this
				// harness's prompt cannot be read): only a signal ends it.
			case s.State == harness.ScreenBusy:
				a.mu.Lock()
				detail := a.turnDetail
				a.mu.Unlock()
				a.settleTurn(cur, api.Attention{State: api.AttentionWorking, Detail: detail, MessageID: cur.MessageID})
			case s.State == harness.ScreenReady && s.Input == "":
				a.settleTurn(cur, api.Attention{State: api.AttentionIdle})
			}
		}
	}
}

// recordedEnd is the attention after a turn whose end only the harness's
// record shows: errored in the harness's words when the record says it
// failed (codex runs no notify for a failed turn), limited when that was
// a usage or rate limit, else idle with the reply's first line (where the
// record holds it: the hook that says so may come later).
func recordedEnd(act harness.TurnActivity) api.Attention {
	switch {
	case act.Failed != "" && act.Limited:
		next := api.Attention{State: api.AttentionLimited, Detail: api.FirstLine(act.Failed)}
		if !act.ResetsAt.IsZero() {
			t := act.ResetsAt.UTC()
			next.ResetsAt = &t
		}
		return next
	case act.Failed != "":
		return api.Attention{State: api.AttentionErrored, Detail: api.FirstLine(act.Failed)}
	}
	return api.Attention{State: api.AttentionIdle, Detail: api.FirstLine(act.Reply)}
}

// settleTurn sets a's attention to next only if it is still was (a signal
// that came meanwhile wins).
func (a *agent) settleTurn(was, next api.Attention) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.attn == nil || a.rec.State != api.StateRunning || a.deleted || !a.attn.Since.Equal(was.Since) || a.attn.State != was.State {
		return
	}
	if next.State != api.AttentionNeedsInput {
		a.promptSeen = false
	}
	a.setAttentionLocked(next)
}
