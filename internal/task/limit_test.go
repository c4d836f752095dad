package task

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// waitLimitArmed waits until the run said it waits out the limit and the
// one timer armed is that wait (the attempt's timeout timer is stopped).
func waitLimitArmed(t *testing.T, g *rig) {
	t.Helper()
	testutil.WaitFor(t, 20*time.Second, func() bool {
		logs, _ := filepath.Glob(filepath.Join(g.r.LogDir, "brief", "*.log"))
		for _, l := range logs {
			if b, _ := os.ReadFile(l); strings.Contains(string(b), "limited: retrying at") {
				return g.clk.Pending() == 1
			}
		}
		return false
	}, "the wait for the reset armed")
}

// realTimeClock puts the rig's fake clock at the wall time: the adapters
// resolve a limit's reset against the wall clock ("try again at 6:27 AM").
func realTimeClock(g *rig) {
	g.clk = clock.NewFake(time.Now().Truncate(time.Second))
	g.r.Clock = g.clk
}

// A run the harness's stream says was stopped by a usage limit is recorded
// limited (reason usage_limit) with the reset, not failed; without retries
// it is not run again.
func TestRunLimitedIsRecordedLimited(t *testing.T) {
	forEachHarness(t, func(t *testing.T, g *rig) {
		realTimeClock(g)
		g.scope.Env = map[string]string{"FAKE_SCENARIO": "limited", "FAKE_LIMIT_RESETS_IN": "600"}
		before := time.Now()
		rec := g.wait(g.run(context.Background(), g.job()))
		wantOutcome(t, rec, OutcomeLimited, ReasonUsageLimit)
		if rec.ResetsAt == nil {
			t.Fatalf("no resets_at: %+v", rec)
		}
		lo, hi := before.Add(600*time.Second-time.Second), time.Now().Add(600*time.Second+time.Minute)
		if rec.ResetsAt.Before(lo) || rec.ResetsAt.After(hi) {
			t.Errorf("resets_at %v, want about 10 minutes on", rec.ResetsAt)
		}
		if rec.Message == "" || len(g.argvs()) != 1 || rec.Attempt != 1 {
			t.Errorf("message %q, %d starts, attempt %d", rec.Message, len(g.argvs()), rec.Attempt)
		}
	})
}

// With retries, a limited run is retried once, after the reset and a
// margin on the clock, and that retry decides; a limit without a reset
// time waits LimitBackoff.
func TestRunLimitedThenRetriedAfterTheReset(t *testing.T) {
	g := newRig(t, "claude")
	realTimeClock(g)
	g.scope.Retries = 3
	g.scope.Env = map[string]string{"FAKE_SCENARIO": "limited", "FAKE_LIMIT_RESETS_IN": "120",
		"FAKE_LIMIT_ONCE": filepath.Join(t.TempDir(), "limited-once")}
	g.r.Backoff = func(int) time.Duration { t.Error("a limit waited the failure backoff"); return time.Second }
	start := g.clk.Now()
	ch := g.run(context.Background(), g.job())
	waitLimitArmed(t, g)
	g.clk.Advance(2 * time.Minute)
	if n := len(g.argvs()); n != 1 {
		t.Fatalf("%d starts before the reset and its margin", n)
	}
	g.clk.Advance(LimitMargin + time.Second)
	rec := g.wait(ch)
	wantOutcome(t, rec, OutcomeSucceeded, "")
	if rec.Attempt != 2 || rec.ResetsAt != nil || len(rec.Warnings) != 1 || !strings.HasPrefix(rec.Warnings[0], "attempt 1: limited (usage_limit): You've hit your session limit") {
		t.Fatalf("attempt %d resets_at %v warnings %q", rec.Attempt, rec.ResetsAt, rec.Warnings)
	}
	if waited := g.clk.Since(start); waited < 2*time.Minute+LimitMargin-2*time.Second {
		t.Fatalf("retried after %s, want the reset (2m) and the margin", waited)
	}

	// Limited every time: one retry only, after the backoff; the second
	// limit is the record.
	g2 := newRig(t, "codex")
	g2.scope.Retries = 3
	g2.scope.Env = map[string]string{"FAKE_SCENARIO": "limited"}
	start = g2.clk.Now()
	ch = g2.run(context.Background(), g2.job())
	waitLimitArmed(t, g2)
	g2.clk.Advance(LimitBackoff)
	rec = g2.wait(ch)
	wantOutcome(t, rec, OutcomeLimited, ReasonUsageLimit)
	if rec.Attempt != 2 || len(g2.argvs()) != 2 || rec.ResetsAt != nil || g2.clk.Since(start) != LimitBackoff {
		t.Fatalf("attempt %d, %d starts, resets_at %v, waited %s", rec.Attempt, len(g2.argvs()), rec.ResetsAt, g2.clk.Since(start))
	}
}

func TestLimitRetryAt(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	for _, c := range []struct{ reset, want time.Time }{
		{time.Time{}, now.Add(LimitBackoff)},
		{now.Add(-time.Minute), now.Add(LimitBackoff)},
		{now.Add(time.Hour), now.Add(time.Hour + LimitMargin)},
	} {
		if got := LimitRetryAt(c.reset, now); !got.Equal(c.want) {
			t.Errorf("LimitRetryAt(%v) = %v, want %v", c.reset, got, c.want)
		}
	}
}

// A limited run holds its harness: no run of it starts before the reset
// and the margin, while runs of other harnesses go on.
func TestServiceHoldsTheLimitedHarnessOnly(t *testing.T) {
	yaml := `
tasks:
  a:
    harness: claude
    prompt_file: p.md
  b:
    harness: claude
    prompt_file: q.md
  c:
    harness: codex
    prompt_file: q.md
`
	now := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	r := newServiceRig(t, now, yaml, nil)
	reset := now.Add(time.Hour)
	r.mu.Lock()
	r.reply["a"] = Record{Outcome: OutcomeLimited, Reason: ReasonUsageLimit, Message: "You've hit your limit", ResetsAt: &reset}
	r.mu.Unlock()
	r.run()
	start := func(name string) <-chan struct{} {
		t.Helper()
		_, done, err := r.svc.Start(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	<-start("a")
	if got := r.history("a"); len(got) != 1 || got[0].Outcome != OutcomeLimited || got[0].ResetsAt == nil || !got[0].ResetsAt.Equal(reset) {
		t.Fatalf("a's record %+v", got)
	}
	if until := r.svc.HeldUntil("claude"); !until.Equal(reset.Add(LimitMargin)) {
		t.Fatalf("claude held until %v, want the reset and the margin", until)
	}
	armed := r.clk.armed()
	bDone := start("b")
	r.clk.waitArmed(t, armed) // b waits out the hold
	<-start("c")
	if got := r.jobTasks(); got != "a,c" {
		t.Fatalf("runs started %q: want codex's c to run while claude is held, b not", got)
	}
	r.clk.advance(t, time.Hour)
	if got := r.jobTasks(); got != "a,c" {
		t.Fatalf("runs started %q before the margin passed", got)
	}
	r.clk.advance(t, LimitMargin)
	select {
	case <-bDone:
	case <-time.After(10 * time.Second):
		t.Fatal("b did not run after the hold")
	}
	if got := r.jobTasks(); got != "a,c,b" {
		t.Fatalf("runs started %q", got)
	}
}

// A limited attempt waiting for its retry gives up its run slot: with one
// slot, a run of another harness goes meanwhile, and the waiting run takes
// a slot again after the hold.
func TestServiceLimitWaitFreesTheSlot(t *testing.T) {
	yaml := `
tasks:
  a:
    harness: claude
    prompt_file: p.md
  c:
    harness: codex
    prompt_file: q.md
`
	now := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	r := newServiceRig(t, now, yaml, nil)
	waited := make(chan bool, 1)
	r.during = func(ctx context.Context, j Job) {
		if j.Task == "a" {
			waited <- j.WaitLimit(ctx, now.Add(time.Hour))
		}
	}
	r.run()
	armed := r.clk.armed()
	_, aDone, err := r.svc.Start(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	r.clk.waitArmed(t, armed) // a waits out its limit
	if until := r.svc.HeldUntil("claude"); !until.Equal(now.Add(time.Hour)) {
		t.Fatalf("claude held until %v", until)
	}
	_, cDone, err := r.svc.Start(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-cDone:
	case <-time.After(10 * time.Second):
		t.Fatal("codex's run did not get the slot a's wait gave up")
	}
	r.clk.advance(t, time.Hour)
	select {
	case ok := <-waited:
		if !ok {
			t.Fatal("the wait said leo stopped")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a's wait did not end at the hold's end")
	}
	<-aDone
}
