package task

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// A run a usage limit stopped holds the later runs of its harness until
// the reset (plus the margin); a task of another harness runs meanwhile.
func TestServiceHoldsTheLimitedHarnessOnly(t *testing.T) {
	yaml := `
defaults:
  harness: codex
tasks:
  lim:
    schedule: "0 7 * * *"
    prompt_file: p.md
  same:
    schedule: "5 7 * * *"
    prompt_file: p.md
  other:
    schedule: "5 7 * * *"
    prompt_file: q.md
    harness: claude
`
	start := time.Date(2026, 3, 2, 6, 59, 0, 0, time.Local)
	r := newServiceRig(t, start, yaml, nil)
	resets := time.Date(2026, 3, 2, 7, 30, 0, 0, time.Local)
	r.mu.Lock()
	r.reply["lim"] = Record{Outcome: OutcomeLimited, Reason: ReasonUsageLimit, Message: "You've hit your usage limit.", ResetsAt: &resets}
	r.mu.Unlock()
	r.run()
	r.clk.advance(t, 2*time.Minute)
	if recs := r.waitHistory("lim", 1); recs[0].Outcome != OutcomeLimited || recs[0].ResetsAt == nil || !recs[0].ResetsAt.Equal(resets) {
		t.Fatalf("lim recorded %+v", recs[0])
	}
	r.clk.advance(t, 5*time.Minute) // 07:06: same and other are due
	r.waitHistory("other", 1)
	if got := r.jobTasks(); strings.Contains(got, "same") {
		t.Fatalf("a run of the limited harness started before the reset: %s", got)
	}
	r.clk.advance(t, 24*time.Minute) // 07:30, the reset; not yet its margin
	if got := r.jobTasks(); strings.Contains(got, "same") {
		t.Fatalf("a run of the limited harness started before the margin: %s", got)
	}
	r.clk.Fake.Advance(LimitMargin)
	r.waitHistory("same", 1)
	if got := r.jobTasks(); got != "lim,other,same" {
		t.Fatalf("runs %q", got)
	}
}

// A run a limit stopped is retried once, after the reset the harness
// named plus the margin, when its retries allow; the scheduler is told.
func TestRunLimitedThenRetriedAfterTheReset(t *testing.T) {
	clk := newTestClock(time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC))
	resets := clk.Now().Add(5 * time.Second)
	f := &firing{r: &Runner{Clock: clk}, j: Job{Task: "t", Scope: &config.Resolved{Retries: 3}}}
	var told []time.Time
	f.j.Limited = func(until time.Time) { told = append(told, until) }
	n := 0
	try := func(int, int) attempt {
		n++
		if n == 1 {
			return attempt{outcome: OutcomeLimited, reason: ReasonUsageLimit, message: "limited", resetsAt: resets}
		}
		return attempt{outcome: OutcomeSucceeded}
	}
	done := make(chan attempt)
	go func() { done <- f.retrying(context.Background(), try) }()
	testutil.WaitFor(t, 10*time.Second, func() bool { return clk.Pending() > 0 }, "the wait for the reset")
	if n != 1 {
		t.Fatalf("tried %d times before the reset", n)
	}
	clk.Fake.Advance(5*time.Second + LimitMargin)
	if a := <-done; a.outcome != OutcomeSucceeded || n != 2 {
		t.Fatalf("after the reset: %+v, %d tries", a, n)
	}
	if len(told) != 1 || !told[0].Equal(resets.Add(LimitMargin)) {
		t.Fatalf("the scheduler was told %v", told)
	}
}

// A run a limit stopped is recorded limited with the reset the harness
// named (codex's words, opencode's retry-after, a claude subscription's
// words), over each fake's imitation of its CLI's stream; claude's 429 to
// an API key, and pi's, name none.
func TestRunLimitedIsRecordedLimited(t *testing.T) {
	forEachHarness(t, func(t *testing.T, g *rig) {
		g.scope.Env = map[string]string{"FAKE_SCENARIO": "limited"}
		if g.scope.HarnessName == "claude" {
			rec := g.wait(g.run(context.Background(), g.job()))
			wantOutcome(t, rec, OutcomeLimited, ReasonUsageLimit)
			if rec.ResetsAt != nil {
				t.Fatalf("claude's 429 to an API key names no reset: %v", rec.ResetsAt)
			}
		}
		g.scope.Env["FAKE_LIMIT_RESETS_IN"] = "120"
		before := time.Now()
		rec := g.wait(g.run(context.Background(), g.job()))
		wantOutcome(t, rec, OutcomeLimited, ReasonUsageLimit)
		switch g.scope.HarnessName {
		case "pi":
			if rec.ResetsAt != nil {
				t.Fatalf("pi's stream names no reset: %v", rec.ResetsAt)
			}
		default:
			if rec.ResetsAt == nil || rec.ResetsAt.Before(before.Add(time.Minute)) || rec.ResetsAt.After(time.Now().Add(4*time.Minute)) {
				t.Fatalf("resets_at %v, want about two minutes on", rec.ResetsAt)
			}
		}
		if err := check(&rec); err != nil {
			t.Fatalf("history would refuse the record: %v", err)
		}
	})
}

// limitedAgents is fakeAgents whose agent a usage limit holds until
// lift closes.
type limitedAgents struct {
	fakeAgents
	lift  chan struct{}
	since time.Time
}

func (f *limitedAgents) HeldByLimit(string) (<-chan struct{}, time.Time) {
	select {
	case <-f.lift:
		return nil, time.Time{}
	default:
		return f.lift, f.since
	}
}

// A persistent firing whose agent a usage limit holds does not time out:
// the time the hold took is given back once it ends.
func TestPersistentFiringHeldByALimitDoesNotTimeOut(t *testing.T) {
	agents := &limitedAgents{lift: make(chan struct{})}
	turns := &fakeTurns{}
	r := newServiceRig(t, time.Date(2026, 3, 2, 7, 0, 0, 0, time.Local), persistentTasks, func(r *serviceRig) *Persistent {
		p, err := NewPersistent(PersistentOptions{Agents: agents, TurnEnds: turns, StatePath: filepath.Join(r.dir, "pending.json"), Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	agents.since = r.clk.Now()
	r.run()
	rec, done := mustStart(t, r.svc, "implicit")
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(agents.queued("implicit")) == 1 }, "the delivery")
	r.clk.advance(t, 3*time.Hour) // far past the 10m timeout, held all along
	select {
	case <-done:
		got, _ := r.svc.Result("implicit", rec.ID)
		t.Fatalf("a held firing ended: %+v", got)
	default:
	}
	close(agents.lift)
	r.clk.advance(t, 30*time.Minute) // the hold's time given back: still no timeout
	select {
	case <-done:
		got, _ := r.svc.Result("implicit", rec.ID)
		t.Fatalf("the firing timed out right after the hold: %+v", got)
	default:
	}
	turns.end(t, rec.ID, TurnEnd{Reply: "done after the limit"})
	<-done
	if got, _ := r.svc.Result("implicit", rec.ID); got.Outcome != OutcomeSucceeded {
		t.Fatalf("record %+v", got)
	}
}
