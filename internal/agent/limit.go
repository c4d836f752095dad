package agent

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// A usage limit holds an agent (docs/agents.md, "Usage limits"): once its
// harness says a limit stopped it, leo writes a hold into the agent's
// record — until the reset plus limitMargin, or a backoff when the harness
// names no time — and the agent's queue keeps its messages, neither
// pasted nor failed, until the hold ends. At the end leo delivers again;
// on_limit says what to do about the turn the limit cut. A harness that
// goes on by itself (its own retry, a person typing in the TUI) ends the
// hold at once. The hold is on disk before memory has it, so a daemon
// restarted meanwhile holds on until the same time.

// LimitHold is a usage limit holding an agent's queue, as its record
// keeps it.
type LimitHold struct {
	// Since is when the harness first said so.
	Since time.Time `json:"since"`
	// Text is the harness's words about the limit.
	Text string `json:"text"`
	// ResetsAt is the reset the harness named; nil when it named none.
	ResetsAt *time.Time `json:"resets_at,omitempty"`
	// Until is when leo delivers again.
	Until time.Time `json:"until"`
	// BackoffSeconds is the wait leo chose for a limit without a reset
	// time: the next such limit, before a good turn, waits twice as long.
	BackoffSeconds int64 `json:"backoff_seconds,omitempty"`
	// HarnessWaits: the harness waits out the limit itself and goes on by
	// itself; leo types nothing into it (no continue).
	HarnessWaits bool `json:"harness_waits,omitempty"`
}

const (
	// limitMargin is how long after the reset the harness named leo
	// delivers again: its clock and the provider's may differ a little.
	limitMargin = 10 * time.Second
	// limitBackoffFirst and limitBackoffMax bound the wait for a limit
	// that names no reset time: it doubles from the first to the last.
	limitBackoffFirst = time.Minute
	limitBackoffMax   = time.Hour
	// limitContinue is what on_limit: continue sends, as a person would.
	limitContinue = "continue"
	// harnessWaitsNote ends the attention's detail of a limit the harness
	// waits out itself.
	harnessWaitsNote = " (the harness waits for the reset itself; leo types nothing into it)"
)

// limitHoldFor is the hold for a limit said now (next: its attention;
// waits: the harness waits it out itself), given the hold already kept
// (nil: none) and the backoff of the last limit without a reset time.
func limitHoldFor(now time.Time, next api.Attention, waits bool, old *LimitHold, lastBackoff time.Duration) LimitHold {
	h := LimitHold{Since: now.UTC(), Text: next.Detail, HarnessWaits: waits}
	if old != nil {
		h.Since = old.Since
	}
	switch {
	case next.ResetsAt != nil:
		t := next.ResetsAt.UTC()
		h.ResetsAt = &t
		h.Until = t.Add(limitMargin)
		if h.Until.Before(now) {
			h.Until = now.Add(limitMargin)
		}
	case old != nil && old.ResetsAt == nil && old.BackoffSeconds > 0:
		// The same limit said again while it holds: its wait stands.
		h.Until, h.BackoffSeconds = old.Until, old.BackoffSeconds
	default:
		b := limitBackoffFirst
		if lastBackoff > 0 {
			b = min(2*lastBackoff, limitBackoffMax)
		}
		h.Until, h.BackoffSeconds = now.Add(b), int64(b/time.Second)
	}
	h.Until = h.Until.UTC()
	return h
}

// limit takes the harness's word that a usage limit stopped a: the hold
// goes on disk, then into memory with the attention next (limited).
func (a *agent) limit(next api.Attention, waits bool) {
	m := a.m
	waits = waits || a.waitsOutLimit()
	a.mu.Lock()
	if a.rec.State != api.StateRunning || a.deleted {
		a.mu.Unlock()
		return
	}
	h := limitHoldFor(m.clk.Now(), next, waits, a.rec.Limit, a.limitBackoff)
	name := a.rec.Name
	a.mu.Unlock()
	mode := a.onLimit()
	if err := a.commit(func(r *Record) { x := h; r.Limit = &x }); err != nil {
		// Not on disk, so not held: leo still says the harness is limited,
		// and delivery waits for its screen as for a person.
		m.log.Error("usage limit: the hold could not be written; messages are not held", "agent", name, "err", err)
		a.setAttention(next)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if h.BackoffSeconds > 0 {
		a.limitBackoff = time.Duration(h.BackoffSeconds) * time.Second
	}
	a.limitMode = mode
	a.armLimitLocked()
	if a.rec.State == api.StateRunning && !a.deleted {
		a.setAttentionLocked(limitedAttention(h, next.Since))
	}
	m.log.Info("usage limit: messages held", "agent", name, "until", h.Until, "resets_at", h.ResetsAt, "harness_waits", h.HarnessWaits, "on_limit", mode)
}

// waitsOutLimit reports whether a's screen shows its harness waiting out
// the limit by itself (harness.LimitWaiter): one capture, only for
// adapters that know such a wait.
func (a *agent) waitsOutLimit() bool {
	h, _ := a.harness()
	w, ok := h.(harness.LimitWaiter)
	if !ok {
		return false
	}
	t, ok := a.target()
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(a.m.ctx, 5*time.Second)
	defer cancel()
	capture, err := t.Pane.Capture(ctx)
	return err == nil && w.WaitsOutLimit(capture)
}

// limitedAttention is the attention of an agent h holds.
func limitedAttention(h LimitHold, since time.Time) api.Attention {
	at := api.Attention{State: api.AttentionLimited, Detail: h.Text, ResetsAt: h.ResetsAt, Since: since}
	if h.HarnessWaits {
		at.Detail = api.FirstLine(h.Text + harnessWaitsNote)
	}
	return at
}

// armLimitLocked makes a's queue hold its messages and starts the wait
// for the hold's end; a.mu must be held and a.rec.Limit set.
func (a *agent) armLimitLocked() {
	if a.limitLifted == nil {
		a.limitLifted = make(chan struct{})
	}
	a.limitGen++
	gen, until := a.limitGen, a.rec.Limit.Until
	if a.m.ctx.Err() != nil {
		return
	}
	go a.awaitLimitEnd(gen, until)
}

// awaitLimitEnd ends hold gen at until (the clock's: tests drive it).
func (a *agent) awaitLimitEnd(gen int, until time.Time) {
	m := a.m
	t := m.clk.NewTimer(max(until.Sub(m.clk.Now()), 0))
	defer t.Stop()
	select {
	case <-m.ctx.Done():
		return
	case <-t.C():
	}
	leave, err := m.enter()
	if err != nil {
		return
	}
	defer leave()
	a.endLimit(gen, "the limit's reset came", false)
}

// endLimit ends a's hold gen (0: whichever holds): off the disk first,
// then "continue" ahead of the held messages when on_limit says so and
// leo, not the harness, ends it, then the queue goes on. onItsOwn: the
// harness went on by itself.
func (a *agent) endLimit(gen int, why string, onItsOwn bool) {
	m := a.m
	a.mu.Lock()
	h := a.rec.Limit
	if h == nil || (gen != 0 && gen != a.limitGen) {
		a.mu.Unlock()
		return
	}
	hold := *h
	name, running := a.rec.Name, a.rec.State == api.StateRunning && !a.deleted
	a.mu.Unlock()
	mode := a.onLimit()
	if err := a.commit(func(r *Record) { r.Limit = nil }); err != nil {
		// Still held on disk: try again in a minute rather than deliver
		// what a restarted daemon would hold.
		m.log.Error("usage limit: the end of the hold could not be written; trying again in a minute", "agent", name, "err", err)
		a.mu.Lock()
		if a.rec.Limit != nil && a.limitLifted != nil && a.m.ctx.Err() == nil {
			a.limitGen++
			go a.awaitLimitEnd(a.limitGen, m.clk.Now().Add(time.Minute))
		}
		a.mu.Unlock()
		return
	}
	if running && !onItsOwn && !hold.HarnessWaits && mode == config.OnLimitContinue {
		if err := a.sendContinue(); err != nil {
			m.log.Warn("usage limit: continue not queued", "agent", name, "err", err)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limitGen++
	if onItsOwn {
		// The harness retried by itself (pi's auto-retry, opencode's): a
		// limit it meets again is not leo's retry failing, so its
		// backoff starts over instead of doubling with each attempt.
		a.limitBackoff = 0
	}
	if a.limitLifted != nil {
		close(a.limitLifted)
		a.limitLifted = nil
	}
	if !onItsOwn && a.attn != nil && a.attn.State == api.AttentionLimited && a.rec.State == api.StateRunning && !a.deleted {
		a.setAttentionLocked(api.Attention{State: api.AttentionIdle})
	}
	m.publish(api.Event{Type: api.EventAgentResumed, Agent: name, Reason: why})
	m.log.Info("usage limit over: delivering again", "agent", name, "why", why, "on_limit", mode)
}

// sendContinue queues limitContinue ahead of the held messages, through
// the edge every message passes (its text rule, the durable queue).
func (a *agent) sendContinue() error {
	text, err := delivery.PasteText(limitContinue)
	if err != nil {
		return err
	}
	a.op.Lock()
	defer a.op.Unlock()
	_, _, err = a.accept(a.m.ctx, api.SendRequest{Message: text, Sender: api.SenderLeo}, true)
	return err
}

// limitHeld is the queue's Held: while a hold is on, a message waits for
// its end (on_limit: fail fails it with the limit's words); a message
// already pasted, and the continue the end sends, pass.
func (a *agent) limitHeld(it *delivery.Item) (<-chan struct{}, error) {
	if it.Pasted || it.Unheld {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.limitLifted == nil {
		return nil, nil
	}
	if a.limitMode == config.OnLimitFail && a.rec.Limit != nil {
		return nil, fmt.Errorf("%w: %s", delivery.ErrHeld, a.rec.Limit.Text)
	}
	return a.limitLifted, nil
}

// onLimit is a's on_limit as its scope resolves now (wait when it does
// not resolve).
func (a *agent) onLimit() string {
	cfg := a.m.opts.Config()
	if cfg == nil {
		return config.OnLimitWait
	}
	a.mu.Lock()
	rec := a.rec.clone()
	a.mu.Unlock()
	res, err := a.m.resolveRec(cfg, rec)
	if err != nil {
		return config.OnLimitWait
	}
	return cmp.Or(res.OnLimit, config.OnLimitWait)
}

// rearmLimit takes up the hold an earlier daemon wrote (boot restore):
// the queue holds until the same time, and a running agent is limited.
func (a *agent) rearmLimit() {
	a.mu.Lock()
	h := a.rec.Limit
	a.mu.Unlock()
	if h == nil {
		return
	}
	mode := a.onLimit()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Limit == nil {
		return
	}
	if a.rec.Limit.BackoffSeconds > 0 {
		a.limitBackoff = time.Duration(a.rec.Limit.BackoffSeconds) * time.Second
	}
	a.limitMode = mode
	a.armLimitLocked()
	if a.rec.State == api.StateRunning && !a.deleted {
		a.setAttentionLocked(limitedAttention(*a.rec.Limit, time.Time{}))
	}
}

// heldWhyLocked says what holds a's messages, for a message's wait
// ("" when no limit does); a.mu must be held.
func (a *agent) heldWhyLocked() string {
	if a.rec.Limit == nil {
		return ""
	}
	return "a usage limit holds the agent's messages until " + a.rec.Limit.Until.UTC().Format(time.RFC3339)
}

// limitHeldUntil is when a's hold ends (nil: none), for the listing;
// a.mu must be held.
func (a *agent) limitHeldUntilLocked() *time.Time {
	if a.rec.Limit == nil {
		return nil
	}
	t := a.rec.Limit.Until
	return &t
}

// HeldByLimit is a channel that closes when the usage limit holding
// agent name ends, and since when it holds; nil when no limit holds it
// (or no such agent). Persistent firings do not time out meanwhile.
func (m *Manager) HeldByLimit(name string) (lifted <-chan struct{}, since time.Time) {
	a, err := m.lookup(name)
	if err != nil {
		return nil, time.Time{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.limitLifted == nil || a.rec.Limit == nil {
		return nil, time.Time{}
	}
	return a.limitLifted, a.rec.Limit.Since
}
