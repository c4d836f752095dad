// Package clock is leo's one source of time. Production code takes a Clock so
// restart backoff, idle sweeps and delivery deadlines can be driven by tests
// without sleeping; Real is the wall clock and Fake moves only when told.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// Since is Now().Sub(t).
	Since(t time.Time) time.Duration
	// After fires once, d from now.
	After(d time.Duration) <-chan time.Time
	// NewTimer is a stoppable After.
	NewTimer(d time.Duration) Timer
	// Sleep blocks for d (or until the fake clock passes it).
	Sleep(d time.Duration)
}

// Timer is the part of *time.Timer leo uses.
type Timer interface {
	C() <-chan time.Time
	// Stop reports whether it stopped the timer before it fired.
	Stop() bool
	// Reset re-arms the timer to fire d from now.
	Reset(d time.Duration) bool
}

// Real is the wall clock.
type Real struct{}

// New returns the wall clock.
func New() Clock { return Real{} }

func (Real) Now() time.Time                         { return time.Now() }
func (Real) Since(t time.Time) time.Duration        { return time.Since(t) }
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (Real) Sleep(d time.Duration)                  { time.Sleep(d) }
func (Real) NewTimer(d time.Duration) Timer         { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Fake is a clock that moves only on Advance or Set. Timers fire (in due
// order) when the clock passes them. It is safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

func (f *Fake) After(d time.Duration) <-chan time.Time { return f.NewTimer(d).C() }

// Sleep blocks until another goroutine advances the clock past d.
func (f *Fake) Sleep(d time.Duration) { <-f.After(d) }

func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	f.arm(t, d)
	return t
}

// arm schedules t; f.mu must be held.
func (f *Fake) arm(t *fakeTimer, d time.Duration) {
	t.due = f.now.Add(d)
	t.armed = true
	if d <= 0 {
		t.fire(f.now)
		return
	}
	f.timers = append(f.timers, t)
}

// Advance moves the clock forward by d, firing every timer due on the way.
func (f *Fake) Advance(d time.Duration) { f.Set(f.Now().Add(d)) }

// Set moves the clock to t (never backwards), firing due timers in order.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Before(f.now) {
		return
	}
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].due.Before(f.timers[j].due) })
	keep := f.timers[:0]
	for _, tm := range f.timers {
		if !tm.armed {
			continue
		}
		if !tm.due.After(t) {
			f.now = tm.due
			tm.fire(tm.due)
			continue
		}
		keep = append(keep, tm)
	}
	f.timers = keep
	f.now = t
}

// Pending is the number of armed timers (tests wait for a goroutine to block).
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.timers {
		if t.armed {
			n++
		}
	}
	return n
}

type fakeTimer struct {
	f     *Fake
	c     chan time.Time
	due   time.Time
	armed bool
}

// fire delivers without blocking, as a time.Timer with a buffered channel does.
func (t *fakeTimer) fire(now time.Time) {
	t.armed = false
	select {
	case t.c <- now:
	default:
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.armed
	// Drop a stale fire so the channel reflects only the new deadline.
	select {
	case <-t.c:
	default:
	}
	if was {
		t.armed = false
	}
	t.f.arm(t, d)
	return was
}
