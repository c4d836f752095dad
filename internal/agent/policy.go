package agent

import "time"

// RestartPolicy decides what happens after an agent's TUI exits. It is a pure
// function of the facts of the exit, so tests drive it without a clock.
type RestartPolicy struct {
	// Base is the first delay; each consecutive failure doubles it.
	Base time.Duration
	// Max caps the delay.
	Max time.Duration
	// ResetAfter: a TUI that stayed up this long starts the backoff over.
	ResetAfter time.Duration
	// QuickResumeExit: an exit this soon after a resume launch means the
	// stored conversation is poisoned; the next launch is fresh.
	QuickResumeExit time.Duration
}

// DefaultRestartPolicy is the documented policy: 5 s doubling to 60 s, reset
// after 10 minutes up, fresh after an exit within 15 s of a resume launch.
func DefaultRestartPolicy() RestartPolicy {
	return RestartPolicy{
		Base:            5 * time.Second,
		Max:             60 * time.Second,
		ResetAfter:      10 * time.Minute,
		QuickResumeExit: 15 * time.Second,
	}
}

// ExitFacts is what is known when a TUI exits.
type ExitFacts struct {
	LaunchedAt time.Time
	ExitedAt   time.Time
	// Resumed: the launch continued a stored conversation.
	Resumed bool
	// Failures is the count of consecutive exits before this one.
	Failures int
}

// RestartDecision is what to do about one exit.
type RestartDecision struct {
	// Delay is how long to wait before relaunching.
	Delay time.Duration
	// Failures is the new consecutive-exit count to store.
	Failures int
	// DropSession: forget the stored conversation id; launch fresh next.
	DropSession bool
}

// OnExit decides the restart of one exit.
func (p RestartPolicy) OnExit(f ExitFacts) RestartDecision {
	up := f.ExitedAt.Sub(f.LaunchedAt)
	failures := f.Failures
	if up >= p.ResetAfter {
		failures = 0
	}
	return RestartDecision{
		Delay:       p.Backoff(failures),
		Failures:    failures + 1,
		DropSession: f.Resumed && up >= 0 && up < p.QuickResumeExit,
	}
}

// Backoff is the delay before the restart that follows `failures` earlier
// consecutive exits: Base, 2·Base, 4·Base… capped at Max.
func (p RestartPolicy) Backoff(failures int) time.Duration {
	d := p.Base
	for i := 0; i < failures && d < p.Max; i++ {
		d *= 2
	}
	if d > p.Max {
		d = p.Max
	}
	return d
}
