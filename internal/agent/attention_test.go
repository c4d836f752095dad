package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// withEvents makes the env's managers publish to a bus the test reads.
func (e *testEnv) withEvents() *events.Bus {
	bus := events.New(1, 0, 0, nil)
	prev := e.tuneOpts
	e.tuneOpts = func(o *Options) {
		if prev != nil {
			prev(o)
		}
		o.Events = bus
	}
	return bus
}

func attentionOf(t testing.TB, m *Manager, name string) api.Attention {
	t.Helper()
	a := mustGet(t, m, name)
	if a.Attention == nil {
		return api.Attention{}
	}
	return *a.Attention
}

func waitAttention(t testing.TB, m *Manager, name string, state api.AttentionState) api.Attention {
	t.Helper()
	var at api.Attention
	waitFor(t, "attention "+string(state)+" of "+name, 30*time.Second, func() bool {
		at = attentionOf(t, m, name)
		return at.State == state
	})
	return at
}

// typesOf is the types of the events of agent name, in order.
func typesOf(evs []api.Event, name string, keep ...string) []string {
	var out []string
	for _, e := range evs {
		if e.Agent == name && (len(keep) == 0 || slices.Contains(keep, e.Type)) {
			out = append(out, e.Type)
		}
	}
	return out
}

// A delivered message makes the agent work on it, and the harness's
// record of the turn's end (no hook runs in these tests: LeoBinary is
// /bin/false) makes it idle again; the stream says so in order.
func TestAttentionFollowsAMessagesTurnOnEachHarness(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			bus := e.withEvents()
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			e.waitState(m, h, api.StateRunning)
			if at := waitAttention(t, m, h, api.AttentionIdle); at.Since.IsZero() {
				t.Fatalf("idle without since: %+v", at)
			}
			res, err := m.Send(context.Background(), h, "look at the logs\nand say what failed")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
			waitFor(t, "the turn to start and end on the stream", 30*time.Second, func() bool {
				return slices.Contains(typesOf(bus.Since(0, nil), h), api.EventTurnEnded)
			})
			evs := bus.Since(0, nil)
			got := typesOf(evs, h, api.EventMessageQueued, api.EventMessageDelivered, api.EventTurnStarted, api.EventTurnEnded)
			want := []string{api.EventMessageQueued, api.EventMessageDelivered, api.EventTurnStarted, api.EventTurnEnded}
			if !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			var working *api.Attention
			for _, ev := range evs {
				if ev.Type == api.EventAgentAttention && ev.Attention.State == api.AttentionWorking {
					working = ev.Attention
				}
				if ev.Type == api.EventTurnStarted && (ev.MessageID != res.ID || ev.FirstLine != "look at the logs") {
					t.Fatalf("turn.started %+v, want message %s and its first line", ev, res.ID)
				}
			}
			if working == nil || working.MessageID != res.ID || working.Detail != "look at the logs" {
				t.Fatalf("working attention %+v, want message %s", working, res.ID)
			}
			if at := attentionOf(t, m, h); at.State != api.AttentionIdle {
				t.Fatalf("after the turn: %+v", at)
			}
			for i := 1; i < len(evs); i++ {
				if evs[i].Seq <= evs[i-1].Seq {
					t.Fatalf("sequence not increasing: %d after %d", evs[i].Seq, evs[i-1].Seq)
				}
			}
		})
	}
}

// A message sent while the harness asks a person waits for them — past
// the readiness timeout, which counts only from the answer — and is
// delivered after, not failed.
func TestMessagesWaitForAPersonPastTheReadinessTimeout(t *testing.T) {
	const ready = 300 * time.Millisecond
	e := newEnv(t, withReadyTimeout(ready), withEnv(map[string]string{"FAKE_TURN_MS": "2500"}))
	bus := e.withEvents()
	m := e.manager()
	h := harnesses[0]
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	first, err := m.Send(context.Background(), h, "run the migration")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, h, first.ID)
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalNeedsInput,
		Prompt: &harness.Prompt{Kind: api.PromptPermission, Text: "Bash command\n  touch x\nDo you want to proceed?", Choices: []string{"Yes", "No"}}})
	at := waitAttention(t, m, h, api.AttentionNeedsInput)
	if at.Prompt == nil || at.Prompt.ID == "" || !strings.Contains(at.Prompt.Text, "touch x") || at.Detail != "Bash command touch x Do you want to proceed?" {
		t.Fatalf("needs_input %+v", at)
	}
	sentAt := time.Now()
	second, err := m.Send(context.Background(), h, "then tell me how it went")
	if err != nil {
		t.Fatal(err)
	}
	// The turn runs 2.5 s, far past the readiness timeout: without the
	// hold the second message fails after 300 ms.
	waitFor(t, "the first turn to end", 30*time.Second, func() bool {
		return e.screenOf(h, h).State == harness.ScreenReady
	})
	if time.Since(sentAt) < 3*ready {
		t.Fatalf("the turn ended %s after the send; the test proves nothing", time.Since(sentAt))
	}
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalTurnEnded, Text: "Migrated.\nAll good."})
	waitDelivered(t, m, h, second.ID)
	for _, d := range mustGet(t, m, h).Deliveries {
		if d.Status != "delivered" {
			t.Fatalf("delivery %+v", d)
		}
	}
	var failed []string
	for _, ev := range bus.Since(0, nil) {
		if ev.Type == api.EventMessageFailed {
			failed = append(failed, ev.MessageID+": "+ev.Reason)
		}
	}
	if len(failed) > 0 {
		t.Fatalf("failed: %v", failed)
	}
}

// Hook signals move attention by themselves, each with the harness's
// words; a new prompt gets a new id; a signal for an unknown agent is
// dropped.
func TestSignalsSetAttentionWithTheHarnessWords(t *testing.T) {
	e := newEnv(t)
	bus := e.withEvents()
	m := e.manager()
	h := harnesses[0]
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	waitAttention(t, m, h, api.AttentionIdle)
	ctx := context.Background()

	m.Signal(ctx, h, harness.Signal{Kind: harness.SignalTurnStarted, Text: "\n  fix the build\nplease"})
	if at := attentionOf(t, m, h); at.State != api.AttentionWorking || at.Detail != "fix the build" || at.MessageID != "" {
		t.Fatalf("turn started: %+v", at)
	}
	ask := func(cmd string) api.Attention {
		m.Signal(ctx, h, harness.Signal{Kind: harness.SignalNeedsInput,
			Prompt: &harness.Prompt{Kind: api.PromptPermission, Text: "Bash command " + cmd, Choices: []string{"Yes", "No"}}})
		return attentionOf(t, m, h)
	}
	p1, p1again, p2 := ask("touch a"), ask("touch a"), ask("touch b")
	if p1.Prompt.ID != p1again.Prompt.ID || p1.Prompt.ID == p2.Prompt.ID {
		t.Fatalf("prompt ids: %s %s %s, want the same prompt the same id, another another", p1.Prompt.ID, p1again.Prompt.ID, p2.Prompt.ID)
	}
	m.Signal(ctx, h, harness.Signal{Kind: harness.SignalWorking})
	if at := attentionOf(t, m, h); at.State != api.AttentionWorking || at.Prompt != nil || at.Detail != "fix the build" {
		t.Fatalf("answered: %+v", at)
	}
	m.Signal(ctx, h, harness.Signal{Kind: harness.SignalTurnFailed, Text: "API Error: 500 overloaded"})
	if at := attentionOf(t, m, h); at.State != api.AttentionErrored || at.Detail != "API Error: 500 overloaded" {
		t.Fatalf("failed: %+v", at)
	}
	reset := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	m.Signal(ctx, h, harness.Signal{Kind: harness.SignalLimited, Text: "usage limit reached", ResetsAt: reset})
	if at := attentionOf(t, m, h); at.State != api.AttentionLimited || at.ResetsAt == nil || !at.ResetsAt.Equal(reset) {
		t.Fatalf("limited: %+v", at)
	}
	m.Signal(ctx, h, harness.Signal{Kind: harness.SignalTurnEnded, Text: "Done: the build is green."})
	if at := attentionOf(t, m, h); at.State != api.AttentionIdle || at.Detail != "Done: the build is green." || at.ResetsAt != nil {
		t.Fatalf("ended: %+v", at)
	}
	m.Signal(ctx, "nobody", harness.Signal{Kind: harness.SignalTurnEnded})

	var ends []api.Event
	for _, ev := range bus.Since(0, nil) {
		if ev.Type == api.EventTurnEnded {
			ends = append(ends, ev)
		}
	}
	if len(ends) != 1 || ends[0].State != "error" || ends[0].Reason != "API Error: 500 overloaded" {
		t.Fatalf("turn.ended events %+v, want the one the failure ended", ends)
	}
	// Stopped: no attention at all.
	if _, err := m.Stop(ctx, h); err != nil {
		t.Fatal(err)
	}
	if a := mustGet(t, m, h); a.Attention != nil {
		t.Fatalf("stopped agent has attention %+v", a.Attention)
	}
	states := typesOf(bus.Since(0, nil), h, api.EventAgentState)
	if len(states) < 3 {
		t.Fatalf("agent.state events %v, want starting, running, stopped", states)
	}
}

// A TUI that keeps exiting soon after its launch is on the stream as
// agent.exited with its failures counted up: what a crash-loop
// notification reads.
func TestExitsArePublishedWithTheFailuresInARow(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_CRASH_AFTER_MS": "100", "FAKE_CRASH_CODE": "3"}))
	bus := e.withEvents()
	m := e.manager()
	h := harnesses[0]
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	var exits []api.Event
	waitFor(t, "three exits on the stream", 30*time.Second, func() bool {
		exits = exits[:0]
		for _, ev := range bus.Since(0, nil) {
			if ev.Type == api.EventAgentExited && ev.Agent == h {
				exits = append(exits, ev)
			}
		}
		return len(exits) >= api.CrashLoopFailures
	})
	for i, ev := range exits[:api.CrashLoopFailures] {
		if ev.Failures != i+1 || !strings.Contains(ev.Reason, "exited with status 3") {
			t.Fatalf("exit %d: %+v, want failures %d and the status", i, ev, i+1)
		}
	}
}

// A codex turn the model answers with an error runs no notify: the
// rollout's record of it is what makes the agent errored, in codex's words
// (the fake codex records it as codex 0.171.0 does).
func TestAttentionErroredFromTheRecord(t *testing.T) {
	e := newEnv(t)
	bus := e.withEvents()
	m := e.manager()
	const h = "codex"
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	waitAttention(t, m, h, api.AttentionIdle)
	res, err := m.Send(context.Background(), h, "this one fake-model-error please")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, h, res.ID)
	at := waitAttention(t, m, h, api.AttentionErrored)
	const words = `{"error":{"code":null,"message":"fake: scripted error","type":"server_error"}}`
	if at.Detail != words {
		t.Fatalf("errored: %+v, want codex's words", at)
	}
	var ended *api.Event
	for _, ev := range bus.Since(0, nil) {
		if ev.Type == api.EventTurnEnded && ev.Agent == h {
			ended = &ev
		}
	}
	if ended == nil || ended.State != "error" || ended.Reason != words || ended.MessageID != res.ID {
		t.Fatalf("turn.ended %+v, want the failed turn of %s", ended, res.ID)
	}
}

// A recorded end is idle (with the reply's first line where the record
// holds it), errored in the harness's words, or limited with the reset
// time the record gives.
func TestRecordedEnd(t *testing.T) {
	reset := time.Date(2026, 12, 2, 14, 50, 0, 0, time.FixedZone("x", 3600))
	for _, c := range []struct {
		act  harness.TurnActivity
		want api.Attention
	}{
		{harness.TurnActivity{Found: true, Ended: 1}, api.Attention{State: api.AttentionIdle}},
		{harness.TurnActivity{Found: true, Ended: 1, Reply: "ACK done\nand more"}, api.Attention{State: api.AttentionIdle, Detail: "ACK done"}},
		{harness.TurnActivity{Failed: "boom\nmore"}, api.Attention{State: api.AttentionErrored, Detail: "boom"}},
		{harness.TurnActivity{Failed: "429", Limited: true}, api.Attention{State: api.AttentionLimited, Detail: "429"}},
	} {
		if got := recordedEnd(c.act); !sameAttention(got, c.want) {
			t.Errorf("%+v: %+v, want %+v", c.act, got, c.want)
		}
	}
	got := recordedEnd(harness.TurnActivity{Failed: "You’ve hit your usage limit.", Limited: true, ResetsAt: reset})
	if got.State != api.AttentionLimited || got.ResetsAt == nil || !got.ResetsAt.Equal(reset) || got.ResetsAt.Location() != time.UTC {
		t.Fatalf("limit with a reset: %+v", got)
	}
}
