package agent

import (
	"testing"
	"time"
)

func TestBackoffDoublesFromFiveSecondsToSixty(t *testing.T) {
	p := DefaultRestartPolicy()
	want := []time.Duration{5, 10, 20, 40, 60, 60, 60}
	for failures, w := range want {
		if got := p.Backoff(failures); got != w*time.Second {
			t.Errorf("Backoff(%d) = %v, want %v", failures, got, w*time.Second)
		}
	}
	if got := p.Backoff(1000); got != time.Minute {
		t.Errorf("Backoff(1000) = %v, want 60s", got)
	}
}

func TestOnExitCountsConsecutiveFailures(t *testing.T) {
	p := DefaultRestartPolicy()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failures := 0
	var delays []time.Duration
	launched := t0
	for i := 0; i < 6; i++ {
		exited := launched.Add(30 * time.Second) // up 30 s each time
		d := p.OnExit(ExitFacts{LaunchedAt: launched, ExitedAt: exited, Failures: failures})
		delays = append(delays, d.Delay)
		failures = d.Failures
		launched = exited.Add(d.Delay)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
}

func TestOnExitResetsBackoffAfterTenMinutesUp(t *testing.T) {
	p := DefaultRestartPolicy()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := p.OnExit(ExitFacts{LaunchedAt: t0, ExitedAt: t0.Add(10 * time.Minute), Failures: 4})
	if d.Delay != 5*time.Second || d.Failures != 1 {
		t.Fatalf("after 10 min up: %+v, want 5s delay and failures 1", d)
	}
	d = p.OnExit(ExitFacts{LaunchedAt: t0, ExitedAt: t0.Add(10*time.Minute - time.Second), Failures: 4})
	if d.Delay != time.Minute || d.Failures != 5 {
		t.Fatalf("just under 10 min up: %+v, want 60s delay and failures 5", d)
	}
}

func TestOnExitDropsSessionOnlyOnQuickExitAfterResume(t *testing.T) {
	p := DefaultRestartPolicy()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		resumed bool
		up      time.Duration
		drop    bool
	}{
		{"resume then exit at 1s", true, time.Second, true},
		{"resume then exit at 14.9s", true, 14900 * time.Millisecond, true},
		{"resume then exit at 15s", true, 15 * time.Second, false},
		{"fresh launch exit at 1s", false, time.Second, false},
		{"resume, long run", true, time.Hour, false},
	}
	for _, c := range cases {
		d := p.OnExit(ExitFacts{LaunchedAt: t0, ExitedAt: t0.Add(c.up), Resumed: c.resumed})
		if d.DropSession != c.drop {
			t.Errorf("%s: DropSession = %v, want %v", c.name, d.DropSession, c.drop)
		}
	}
}
