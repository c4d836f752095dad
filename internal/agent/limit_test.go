package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// holdClock is the wall clock moved on by Advance: waits shorter than
// holdClockLong (delivery's polls, the watcher) run on real timers, longer
// ones (a hold's end) fire only when Advance passes them, so a test drives
// a usage limit's hours without sleeping while the fakes' screens are
// polled as usual.
type holdClock struct {
	mu     sync.Mutex
	offset time.Duration
	fake   *clock.Fake // the long timers; set to Now before each is made
}

const holdClockLong = 30 * time.Second

func newHoldClock() *holdClock { return &holdClock{fake: clock.NewFake(time.Now())} }

func (c *holdClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}
func (c *holdClock) Since(t time.Time) time.Duration        { return c.Now().Sub(t) }
func (c *holdClock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }
func (c *holdClock) Sleep(d time.Duration)                  { <-c.After(d) }
func (c *holdClock) NewTimer(d time.Duration) clock.Timer {
	if d < holdClockLong {
		return clock.Real{}.NewTimer(d)
	}
	c.fake.Set(c.Now())
	return c.fake.NewTimer(d)
}

// Advance moves the clock on by d, firing the long timers due.
func (c *holdClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	c.fake.Set(c.Now())
}

// limitEnv is an env whose managers run on a holdClock.
func limitEnv(t *testing.T, opts ...envOption) (*testEnv, *holdClock, *events.Bus) {
	e := newEnv(t, opts...)
	bus := e.withEvents()
	clk := newHoldClock()
	prev := e.tuneOpts
	e.tuneOpts = func(o *Options) {
		prev(o)
		o.Clock = clk
	}
	return e, clk, bus
}

// limitedAgent spawns a running agent of harness h and has its harness
// say a limit stopped it (resets: the reset it names, zero for none).
func limitedAgent(t *testing.T, e *testEnv, m *Manager, h string, resets time.Time) {
	t.Helper()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	waitAttention(t, m, h, api.AttentionIdle)
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalLimited, Text: "You've hit your session limit · resets 3pm", ResetsAt: resets})
}

// savedLimit is the hold agents.json keeps for name (nil: none).
func (e *testEnv) savedLimit(name string) *LimitHold {
	for _, r := range e.readRecords() {
		if r.Name == name {
			return r.Limit
		}
	}
	return nil
}

// waitHeldAt waits until the hold's wait is armed on clk (so an Advance
// reaches it) and a message sent meanwhile says it is held.
func waitHeld(t *testing.T, m *Manager, name, id string) {
	t.Helper()
	waitFor(t, "message "+id+" held by the limit", 30*time.Second, func() bool {
		out, err := m.Message(context.Background(), name, id, "")
		return err == nil && strings.Contains(out.Waiting, "a usage limit holds")
	})
}

func TestLimitHoldsMessagesUntilTheReset(t *testing.T) {
	const h = "claude"
	e, clk, bus := limitEnv(t)
	m := e.manager()
	resets := clk.Now().Add(5 * time.Minute).Truncate(time.Second)
	limitedAgent(t, e, m, h, resets)

	at := waitAttention(t, m, h, api.AttentionLimited)
	if at.ResetsAt == nil || !at.ResetsAt.Equal(resets) {
		t.Fatalf("limited attention %+v, want resets_at %v", at, resets)
	}
	want := resets.Add(limitMargin)
	saved := e.savedLimit(h)
	if saved == nil || !saved.Until.Equal(want) || saved.ResetsAt == nil || !saved.ResetsAt.Equal(resets) {
		t.Fatalf("saved hold %+v, want until %v", saved, want)
	}
	if got := mustGet(t, m, h).HeldUntil; got == nil || !got.Equal(want) {
		t.Fatalf("listing held_until %v, want %v", got, want)
	}
	res, err := m.Send(context.Background(), h, "after the limit")
	if err != nil {
		t.Fatal(err)
	}
	waitHeld(t, m, h, res.ID)
	if got := e.submitted(); slices.Contains(got, "after the limit") {
		t.Fatalf("a held message was delivered: %v", got)
	}
	clk.Advance(5 * time.Minute) // the reset, not yet its margin
	waitHeld(t, m, h, res.ID)

	clk.Advance(limitMargin)
	waitDelivered(t, m, h, res.ID)
	if e.savedLimit(h) != nil || mustGet(t, m, h).HeldUntil != nil {
		t.Fatal("the hold outlived its end")
	}
	if got := e.submitted(); !slices.Equal(got, []string{"after the limit"}) {
		t.Fatalf("submitted %v, want only the held message (on_limit: wait sends no continue)", got)
	}
	types := typesOf(bus.Since(0, nil), h, api.EventAgentResumed, api.EventMessageDelivered)
	if !slices.Equal(types, []string{api.EventAgentResumed, api.EventMessageDelivered}) {
		t.Fatalf("events %v: want agent.resumed, then the delivery", types)
	}
}

// Without a reset time leo waits a minute, then twice as long for each
// limit in a row, up to an hour; a good turn starts it over.
func TestLimitWithoutAResetTimeBacksOff(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	var last time.Duration
	var got []time.Duration
	for range 8 {
		h := limitHoldFor(now, api.Attention{State: api.AttentionLimited, Detail: "API Error: Request rejected (429)"}, false, nil, last)
		got = append(got, h.Until.Sub(now))
		last = time.Duration(h.BackoffSeconds) * time.Second
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	if !slices.Equal(got, want) {
		t.Fatalf("backoff %v, want %v", got, want)
	}
	// The same limit said again while held keeps its wait.
	old := limitHoldFor(now, api.Attention{Detail: "429"}, false, nil, 0)
	again := limitHoldFor(now.Add(30*time.Second), api.Attention{Detail: "429"}, false, &old, time.Minute)
	if !again.Until.Equal(old.Until) || !again.Since.Equal(old.Since) {
		t.Fatalf("said again: %+v, want the first hold's %+v", again, old)
	}

	// Through the manager: a minute, then two; a good turn resets it.
	const name = "codex"
	e, clk, _ := limitEnv(t)
	m := e.manager()
	limitedAgent(t, e, m, name, time.Time{})
	waitAttention(t, m, name, api.AttentionLimited)
	if s := e.savedLimit(name); s == nil || s.BackoffSeconds != 60 || s.ResetsAt != nil {
		t.Fatalf("first hold %+v, want a 60 s backoff", s)
	}
	clk.Advance(time.Minute)
	waitFor(t, "the first hold's end", 30*time.Second, func() bool { return e.savedLimit(name) == nil })
	m.Signal(context.Background(), name, harness.Signal{Kind: harness.SignalLimited, Text: "rate limited"})
	waitFor(t, "a second hold", 30*time.Second, func() bool { s := e.savedLimit(name); return s != nil && s.BackoffSeconds == 120 })
	clk.Advance(2 * time.Minute)
	waitFor(t, "the second hold's end", 30*time.Second, func() bool { return e.savedLimit(name) == nil })
	res, err := m.Send(context.Background(), name, "a good turn")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, name, res.ID)
	waitAttention(t, m, name, api.AttentionWorking)
	waitAttention(t, m, name, api.AttentionIdle)
	m.Signal(context.Background(), name, harness.Signal{Kind: harness.SignalLimited, Text: "rate limited"})
	waitFor(t, "a hold after the good turn", 30*time.Second, func() bool { s := e.savedLimit(name); return s != nil && s.BackoffSeconds == 60 })
}

// A harness that retries a limit by itself (pi's auto-retry: each attempt
// a limited end, then working again) gets a minute's hold each time, not
// one doubled with every attempt: leo did not retry, so nothing of leo's
// failed. Captured: pi's four attempts of a 429 had left a 32-minute hold.
func TestLimitRetriedByTheHarnessDoesNotDoubleTheBackoff(t *testing.T) {
	const name = "codex"
	e, _, _ := limitEnv(t)
	m := e.manager()
	limitedAgent(t, e, m, name, time.Time{})
	waitAttention(t, m, name, api.AttentionLimited)
	for attempt := range 4 {
		m.Signal(context.Background(), name, harness.Signal{Kind: harness.SignalWorking})
		waitFor(t, "the hold ended by the harness going on", 30*time.Second, func() bool { return e.savedLimit(name) == nil })
		m.Signal(context.Background(), name, harness.Signal{Kind: harness.SignalLimited, Text: "429 rate limited"})
		waitFor(t, "the next attempt's hold", 30*time.Second, func() bool { return e.savedLimit(name) != nil })
		if s := e.savedLimit(name); s.BackoffSeconds != 60 {
			t.Fatalf("attempt %d: a %d s hold, want 60 s", attempt+2, s.BackoffSeconds)
		}
	}
}

// A daemon restarted while an agent is limited holds on until the same
// time: the hold and its reset come back from the record.
func TestLimitHoldSurvivesADaemonRestart(t *testing.T) {
	const h = "opencode"
	e, clk, _ := limitEnv(t)
	m := e.manager()
	resets := clk.Now().Add(time.Hour).Truncate(time.Second)
	limitedAgent(t, e, m, h, resets)
	waitAttention(t, m, h, api.AttentionLimited)
	res, err := m.Send(context.Background(), h, "held across the restart")
	if err != nil {
		t.Fatal(err)
	}
	waitHeld(t, m, h, res.ID)
	m.Close()

	clk.Advance(30 * time.Minute)
	m2 := e.manager()
	at := waitAttention(t, m2, h, api.AttentionLimited)
	if at.ResetsAt == nil || !at.ResetsAt.Equal(resets) {
		t.Fatalf("after the restart: %+v, want resets_at %v", at, resets)
	}
	if got := mustGet(t, m2, h).HeldUntil; got == nil || !got.Equal(resets.Add(limitMargin)) {
		t.Fatalf("after the restart held_until %v", got)
	}
	waitHeld(t, m2, h, res.ID)
	clk.Advance(30*time.Minute + limitMargin)
	waitDelivered(t, m2, h, res.ID)
	if got := e.submitted(); !slices.Equal(got, []string{"held across the restart"}) {
		t.Fatalf("submitted %v", got)
	}
}

// on_limit: continue sends "continue" first, as a person would, then the
// held messages.
func TestLimitContinueSendsContinueFirst(t *testing.T) {
	const h = "claude"
	e, clk, _ := limitEnv(t, withTemplateYAML("    on_limit: continue\n"))
	m := e.manager()
	limitedAgent(t, e, m, h, clk.Now().Add(time.Minute))
	waitAttention(t, m, h, api.AttentionLimited)
	res, err := m.Send(context.Background(), h, "next thing")
	if err != nil {
		t.Fatal(err)
	}
	waitHeld(t, m, h, res.ID)
	clk.Advance(time.Minute + limitMargin)
	waitDelivered(t, m, h, res.ID)
	if got := e.submitted(); !slices.Equal(got, []string{"continue", "next thing"}) {
		t.Fatalf("submitted %v, want continue first", got)
	}
}

// on_limit: fail fails the held messages with the limit's words.
func TestLimitFailFailsHeldMessages(t *testing.T) {
	const h = "codex"
	e, clk, _ := limitEnv(t, withTemplateYAML("    on_limit: fail\n"))
	m := e.manager()
	limitedAgent(t, e, m, h, clk.Now().Add(time.Hour))
	waitAttention(t, m, h, api.AttentionLimited)
	res, err := m.Send(context.Background(), h, "cannot wait")
	if err != nil {
		t.Fatal(err)
	}
	err = awaitOutcome(t, m, h, res.ID)
	if !errors.Is(err, delivery.ErrHeld) || !strings.Contains(err.Error(), "You've hit your session limit") {
		t.Fatalf("outcome %v, want held by a usage limit with its words", err)
	}
	if got := e.submitted(); len(got) != 0 {
		t.Fatalf("submitted %v", got)
	}
}

// A harness that goes on by itself (its own retry; a person typing in
// the TUI) ends the hold at once: the queue goes on, no continue typed.
func TestLimitLiftedWhenTheHarnessGoesOnByItself(t *testing.T) {
	const h = "opencode"
	e, clk, bus := limitEnv(t, withTemplateYAML("    on_limit: continue\n"))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	waitAttention(t, m, h, api.AttentionIdle)
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalLimited, Text: "Rate limited", ResetsAt: clk.Now().Add(5 * time.Second), HarnessWaits: true})
	at := waitAttention(t, m, h, api.AttentionLimited)
	if !strings.Contains(at.Detail, "waits for the reset itself") {
		t.Fatalf("detail %q does not say the harness waits itself", at.Detail)
	}
	res, err := m.Send(context.Background(), h, "queued meanwhile")
	if err != nil {
		t.Fatal(err)
	}
	waitHeld(t, m, h, res.ID)
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalWorking})
	waitDelivered(t, m, h, res.ID)
	if got := e.submitted(); !slices.Equal(got, []string{"queued meanwhile"}) {
		t.Fatalf("submitted %v, want no continue", got)
	}
	var why string
	for _, ev := range bus.Since(0, nil) {
		if ev.Type == api.EventAgentResumed && ev.Agent == h {
			why = ev.Reason
		}
	}
	if !strings.Contains(why, "by itself") {
		t.Fatalf("agent.resumed reason %q", why)
	}
}

// A reset while a limit holds the agent: the new conversation's TUI comes
// up (running), and the hold stands — the limit is the provider's, not the
// conversation's.
func TestLimitResetWhileHeldStartsTheAgent(t *testing.T) {
	for _, name := range []string{"codex", "pi"} {
		t.Run(name, func(t *testing.T) {
			e, _, _ := limitEnv(t)
			m := e.manager()
			limitedAgent(t, e, m, name, time.Time{})
			waitAttention(t, m, name, api.AttentionLimited)
			if _, err := m.Reset(context.Background(), name); err != nil {
				t.Fatal(err)
			}
			e.waitState(m, name, api.StateRunning)
			if e.savedLimit(name) == nil {
				t.Fatal("the reset dropped the hold")
			}
		})
	}
}
