package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// fakeAgents is the agent manager as persistent firings see it.
type fakeAgents struct {
	mu       sync.Mutex
	ensured  []string
	messages map[string][]string // agent -> queued texts
	ensure   error
	enqueue  error
	fail     error // outcome of every delivery
	items    map[string]chan struct{}
}

func (f *fakeAgents) Ensure(_ context.Context, agent string, target *config.Resolved) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ensured = append(f.ensured, agent+"<-"+target.Scope)
	return "spawned", f.ensure
}

func (f *fakeAgents) Enqueue(_ context.Context, agent, message string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.enqueue != nil {
		return "", f.enqueue
	}
	if f.messages == nil {
		f.messages, f.items = map[string][]string{}, map[string]chan struct{}{}
	}
	f.messages[agent] = append(f.messages[agent], message)
	id := agent + "-" + string(rune('0'+len(f.messages[agent])))
	ch := make(chan struct{})
	close(ch)
	f.items[id] = ch
	return id, nil
}

func (f *fakeAgents) Delivery(_ string, id string) (<-chan struct{}, func() error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.items[id]
	fail := f.fail
	return ch, func() error { return fail }, ok
}

func (f *fakeAgents) queued(agent string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.messages[agent]...)
}

// fakeTurns lets a test end the turn that carries a run's marker.
type fakeTurns struct {
	mu      sync.Mutex
	waiting map[string]chan TurnEnd // runID -> channel
}

func (f *fakeTurns) Await(_, message string) (<-chan TurnEnd, func()) {
	_, runID, _ := turnend.FindMarker(message)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiting == nil {
		f.waiting = map[string]chan TurnEnd{}
	}
	ch := make(chan TurnEnd, 1)
	f.waiting[runID] = ch
	return ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.waiting[runID] == ch {
			delete(f.waiting, runID)
		}
	}
}

func (f *fakeTurns) end(t *testing.T, runID string, te TurnEnd) {
	t.Helper()
	var ch chan TurnEnd
	testutil.WaitFor(t, 10*time.Second, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		ch = f.waiting[runID]
		return ch != nil
	}, "a wait for run "+runID)
	ch <- te
}

const persistentTasks = `
templates:
  helper:
    harness: codex
tasks:
  implicit:
    runtime: persistent
    prompt_file: p.md
    notify_on_fail: true
    timeout: 10m
  viatemplate:
    runtime: persistent
    template: helper
    prompt_file: q.md
`

func persistentRig(t *testing.T, agents *fakeAgents, turns *fakeTurns) *serviceRig {
	return newServiceRig(t, time.Date(2026, 3, 2, 7, 0, 0, 0, time.Local), persistentTasks, func(r *serviceRig) *Persistent {
		p, err := NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns, StatePath: filepath.Join(r.dir, "pending.json"), Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}

func TestPersistentFiringSucceedsOnTurnEnd(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := persistentRig(t, agents, turns)
	r.run()
	rec, done, err := r.svc.Start(context.Background(), "implicit")
	if err != nil {
		t.Fatal(err)
	}
	turns.end(t, rec.ID, TurnEnd{SessionID: "s1", Reply: "done it"})
	<-done
	got, _ := r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeSucceeded || got.Reply != "done it" || got.Agent != "implicit" || got.SessionID != "s1" {
		t.Fatalf("record %+v", got)
	}
	if q := agents.queued("implicit"); len(q) != 1 || q[0] != turnend.Message("do the thing\n", "implicit", rec.ID) {
		t.Fatalf("queued %q", q)
	}
	if agents.ensured[0] != "implicit<-tasks.implicit" {
		t.Fatalf("ensured %v: an implicit agent comes from the task's own scope", agents.ensured)
	}
	// With a template, the agent is the template's and so is its scope.
	rec, done = mustStart(t, r.svc, "viatemplate")
	turns.end(t, rec.ID, TurnEnd{Reply: "ok"})
	<-done
	got, _ = r.svc.Result("viatemplate", rec.ID)
	if got.Outcome != OutcomeSucceeded || got.Agent != "helper" || got.Harness != "codex" || agents.ensured[1] != "helper<-templates.helper" {
		t.Fatalf("template firing %+v, ensured %v", got, agents.ensured)
	}
}

// A persistent firing's start and end on the stream name its agent, so
// that agent's readers (?agent=) see the firings it takes.
func TestPersistentFiringEventsNameTheAgent(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := persistentRig(t, agents, turns)
	r.run()
	rec, done := mustStart(t, r.svc, "viatemplate")
	turns.end(t, rec.ID, TurnEnd{Reply: "ok"})
	<-done
	got := r.events.of("viatemplate")
	if len(got) != 2 || got[0].Type != api.EventTaskRunStarted || got[1].Type != api.EventTaskRunEnded {
		t.Fatalf("events %+v, want started then ended", got)
	}
	for _, e := range got {
		if e.Agent != "helper" || e.Run != rec.ID {
			t.Fatalf("event %+v, want agent helper, run %s", e, rec.ID)
		}
	}
	if got[0].Reason != string(TriggerManual) || got[1].State != string(OutcomeSucceeded) {
		t.Fatalf("events %+v", got)
	}
}

func TestPersistentFailuresAndNotice(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := persistentRig(t, agents, turns)
	r.run()

	// The harness says the turn failed: failed, and a notice follows.
	rec, done := mustStart(t, r.svc, "implicit")
	turns.end(t, rec.ID, TurnEnd{Failed: true, Error: "rate limited\x1b[2J"})
	<-done
	got, _ := r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeFailed || got.Reason != ReasonHarnessError {
		t.Fatalf("record %+v", got)
	}
	q := agents.queued("implicit")
	if len(q) != 2 || !strings.HasPrefix(q[1], "[leo] task implicit run "+rec.ID+" failed (harness_error): rate limited") || strings.ContainsRune(q[1], 0x1b) {
		t.Fatalf("notice %q", q)
	}

	// A full queue is a skip, with no notice.
	agents.enqueue = api.Errorf(api.CodeQueueFull, "agent implicit: queue full")
	rec, done = mustStart(t, r.svc, "implicit")
	<-done
	got, _ = r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeSkipped || got.Reason != ReasonQueueFull || len(agents.queued("implicit")) != 2 {
		t.Fatalf("queue full: %+v", got)
	}

	// claude missing: the ladder's error reason.
	agents.enqueue = nil
	agents.ensure = api.Errorf(api.CodeClaudeNotFound, claude.NotFoundMessage)
	rec, done = mustStart(t, r.svc, "implicit")
	<-done
	got, _ = r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeFailed || got.Reason != ReasonClaudeNotFound || got.Message != claude.NotFoundMessage || got.Agent != "implicit" {
		t.Fatalf("claude missing: %+v", got)
	}

	// A delivery that fails ends the firing at once.
	agents.ensure = nil
	agents.fail = errors.New("TUI exited")
	rec, done = mustStart(t, r.svc, "implicit")
	<-done
	got, _ = r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeFailed || got.Reason != ReasonDelivery || !strings.Contains(got.Message, "TUI exited") {
		t.Fatalf("delivery failed: %+v", got)
	}
}

func TestPersistentTimeout(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := persistentRig(t, agents, turns)
	r.run()
	rec, done := mustStart(t, r.svc, "implicit")
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(agents.queued("implicit")) == 1 }, "the delivery")
	r.clk.advance(t, 11*time.Minute)
	<-done
	got, _ := r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeTimeout || got.Reason != ReasonTimeout {
		t.Fatalf("record %+v", got)
	}
}

// A firing still waiting for its turn end when the daemon stops is taken
// up by the next one, and recorded once.
func TestPersistentFiringSurvivesRestart(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := persistentRig(t, agents, turns)
	r.run()
	rec, _ := mustStart(t, r.svc, "implicit")
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(agents.queued("implicit")) == 1 }, "the delivery")
	r.stop()
	if n := len(r.history("implicit")); n != 0 {
		t.Fatalf("an interrupted firing was recorded %d times", n)
	}

	turns2 := &fakeTurns{}
	p, err := NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns2, StatePath: filepath.Join(r.dir, "pending.json"), Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(ServiceOptions{Clock: r.clk, Config: func() *config.Config { return r.cfg }, History: r.hist, Persistent: p})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go svc.Run(ctx)
	turns2.end(t, rec.ID, TurnEnd{Reply: "after the restart"})
	recs := r.waitHistory("implicit", 1)
	if recs[0].ID != rec.ID || recs[0].Outcome != OutcomeSucceeded || recs[0].Reply != "after the restart" {
		t.Fatalf("record %+v", recs[0])
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.pending) == 0
	}, "the firing to leave state")
	if q := agents.queued("implicit"); len(q) != 1 {
		t.Fatalf("the prompt was queued %d times", len(q))
	}
}

func mustStart(t *testing.T, svc *Service, task string) (Record, <-chan struct{}) {
	t.Helper()
	rec, done, err := svc.Start(context.Background(), task)
	if err != nil {
		t.Fatalf("start %s: %v", task, err)
	}
	return rec, done
}

// A scheduled firing still pending when the daemon stopped is the one
// firing of its slot: the next daemon waits for it again and neither
// fires that slot anew (it is within the grace, and history's newest
// record is older) nor lets another run of the task overlap it.
func TestResumedFiringKeepsItsSlotAndClaim(t *testing.T) {
	yaml := `
tasks:
  sched:
    runtime: persistent
    schedule: "*/5 * * * *"
    prompt_file: p.md
    timeout: 30m
`
	agents, turns := &fakeAgents{}, &fakeTurns{}
	start := time.Date(2026, 3, 2, 7, 4, 30, 0, time.Local)
	var state string
	r := newServiceRig(t, start, yaml, func(r *serviceRig) *Persistent {
		state = filepath.Join(r.dir, "pending.json")
		p, err := NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns, StatePath: state, Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	prev := time.Date(2026, 3, 2, 7, 0, 0, 0, time.Local)
	if err := r.hist.Append(Record{ID: RunID(prev), Task: "sched", Trigger: TriggerPersistent, Due: prev, Start: prev, End: prev, Outcome: OutcomeSucceeded}); err != nil {
		t.Fatal(err)
	}
	r.run()
	r.clk.advance(t, 30*time.Second)
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(agents.queued("sched")) == 1 }, "the 07:05 firing's delivery")
	r.stop()
	r.clk.Fake.Advance(time.Minute) // the daemon is back at 07:06

	turns2 := &fakeTurns{}
	p, err := NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns2, StatePath: state, Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(ServiceOptions{Clock: r.clk, Config: func() *config.Config { return r.cfg }, History: r.hist, Persistent: p})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { svc.Run(ctx); close(stopped) }()
	want := time.Date(2026, 3, 2, 7, 10, 0, 0, time.Local)
	testutil.WaitFor(t, 10*time.Second, func() bool { return svc.sched.Next("sched").Equal(want) }, "the plan's next slot 07:10")
	if _, _, err := svc.Start(context.Background(), "sched"); !api.HasCode(err, api.CodeTaskRunning) {
		t.Fatalf("a run by hand while the resumed firing waits: %v, want task_running", err)
	}
	if got, _ := svc.Get("sched"); !got.Running {
		t.Fatalf("the task is not listed running while its resumed firing waits: %+v", got)
	}
	pendingID := RunID(time.Date(2026, 3, 2, 7, 5, 0, 0, time.Local))
	turns2.end(t, pendingID, TurnEnd{Reply: "done"})
	r.waitHistory("sched", 2)
	testutil.WaitFor(t, 10*time.Second, func() bool { return !svc.sched.Running("sched") }, "the resumed firing's claim to end")
	cancel()
	<-stopped
	if q := agents.queued("sched"); len(q) != 1 {
		t.Fatalf("the 07:05 slot was delivered %d times: %q", len(q), q)
	}
	recs := r.history("sched")
	if len(recs) != 2 || recs[1].ID != pendingID || recs[1].Outcome != OutcomeSucceeded {
		t.Fatalf("history %+v", recs)
	}
}

// A slot of a persistent task skipped because its previous firing still
// waits is recorded with the trigger its firings have (persistent).
func TestPersistentSkippedSlotTrigger(t *testing.T) {
	yaml := `
tasks:
  sched:
    runtime: persistent
    schedule: "*/5 * * * *"
    prompt_file: p.md
    timeout: 30m
`
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := newServiceRig(t, time.Date(2026, 3, 2, 7, 4, 30, 0, time.Local), yaml, func(r *serviceRig) *Persistent {
		p, err := NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns, StatePath: filepath.Join(r.dir, "pending.json"), Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	r.run()
	r.clk.advance(t, 30*time.Second)
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(agents.queued("sched")) == 1 }, "the 07:05 firing's delivery")
	r.clk.advance(t, 5*time.Minute)
	recs := r.waitHistory("sched", 1)
	if got := recs[0]; got.Outcome != OutcomeSkipped || got.Reason != ReasonStillRunning || got.Trigger != TriggerPersistent {
		t.Fatalf("skipped slot %+v: want skipped, still_running, trigger persistent", got)
	}
}

// A persistent prompt a TUI may not be given (ESC would type keys) fails
// the firing as a config error naming the prompt file, and no agent is
// started or spawned for it.
func TestPersistentPromptWithEscapeFailsBeforeTheAgent(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	r := persistentRig(t, agents, turns)
	if err := os.WriteFile(filepath.Join(r.dir, "workspace", "p.md"), []byte("hi\x1b[2Jthere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.run()
	rec, done := mustStart(t, r.svc, "implicit")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the firing did not fail: it waits for a turn")
	}
	got, _ := r.svc.Result("implicit", rec.ID)
	if got.Outcome != OutcomeFailed || got.Reason != ReasonConfigError ||
		!strings.Contains(got.Message, "tasks.implicit.prompt_file") || !strings.Contains(got.Message, "ESC") {
		t.Fatalf("record %+v", got)
	}
	agents.mu.Lock()
	defer agents.mu.Unlock()
	if len(agents.ensured) != 0 || len(agents.messages) != 0 {
		t.Fatalf("an agent was ensured (%v) or a message queued (%v)", agents.ensured, agents.messages)
	}
}

// The restart drain waits for a persistent firing whose prompt the agent
// took until its turn ends; a firing still queued is no turn yet.
func TestPersistentAwaitingTurnEndForTheDrain(t *testing.T) {
	agents, turns := &fakeAgents{}, &fakeTurns{}
	var p *Persistent
	r := newServiceRig(t, time.Date(2026, 3, 2, 7, 0, 0, 0, time.Local), persistentTasks, func(r *serviceRig) *Persistent {
		var err error
		p, err = NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns, StatePath: filepath.Join(r.dir, "pending.json"), Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	r.run()
	if got := p.AwaitingTurnEnd(); len(got) != 0 {
		t.Fatalf("awaiting %q before any firing", got)
	}
	rec, done := mustStart(t, r.svc, "implicit")
	want := "task implicit run " + rec.ID + " (agent implicit)"
	testutil.WaitFor(t, 10*time.Second, func() bool {
		got := p.AwaitingTurnEnd()
		return len(got) == 1 && got[0] == want
	}, "the delivered firing awaiting its turn end")
	turns.end(t, rec.ID, TurnEnd{Reply: "ok"})
	<-done
	if got := p.AwaitingTurnEnd(); len(got) != 0 {
		t.Fatalf("awaiting %q after the turn ended", got)
	}

	// A prompt whose delivery has not finished is not awaited.
	agents.mu.Lock()
	agents.items["held"] = make(chan struct{})
	agents.mu.Unlock()
	if err := p.save(func(m map[string]pendingFiring) {
		m["R2"] = pendingFiring{Rec: Record{ID: "R2", Task: "implicit", Agent: "implicit"}, MessageID: "held"}
	}); err != nil {
		t.Fatal(err)
	}
	if got := p.AwaitingTurnEnd(); len(got) != 0 {
		t.Fatalf("awaiting %q for a prompt still queued", got)
	}
}
