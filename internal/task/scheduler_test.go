package task

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"

	"github.com/blackpaw-studio/leo/internal/clock"
)

// testClock is a fake clock whose wall clock can also jump on its own, as
// it does when a machine resumes from suspend or NTP steps it: jump moves
// Now without firing any timer (timers follow the monotonic clock).
type testClock struct {
	*clock.Fake
	mu     sync.Mutex
	off    time.Duration
	timers int
	maxD   time.Duration
}

func newTestClock(start time.Time) *testClock { return &testClock{Fake: clock.NewFake(start)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Fake.Now().Add(c.off)
}

func (c *testClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *testClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.timers++
	if d > c.maxD {
		c.maxD = d
	}
	c.mu.Unlock()
	return c.Fake.NewTimer(d)
}

func (c *testClock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timers
}

func (c *testClock) jump(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// waitArmed waits until the scheduler has armed more than n timers, i.e.
// finished the pass that followed whatever woke it.
func (c *testClock) waitArmed(t *testing.T, n int) {
	t.Helper()
	testutil.WaitForEvery(t, 10*time.Second, time.Millisecond, func() bool {
		return c.armed() > n && c.Pending() > 0
	}, "the scheduler to re-arm its timer")
}

// advance moves the monotonic (and wall) clock by d in steps of at most a
// minute, waiting for the scheduler after each step that woke it.
func (c *testClock) advance(t *testing.T, d time.Duration) {
	t.Helper()
	for d > 0 {
		step := min(d, time.Minute)
		d -= step
		n := c.armed()
		c.Fake.Advance(step)
		if c.Pending() == 0 {
			c.waitArmed(t, n)
		}
	}
}

// schedRig drives a Scheduler under test (not named harness: that is a package
// this one imports).
type schedRig struct {
	t      *testing.T
	clk    *testClock
	s      *Scheduler
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	log   []string
	block map[string]chan struct{} // task -> released when closed
}

func startScheduler(t *testing.T, clk *testClock, specs []Spec) *schedRig {
	h := &schedRig{t: t, clk: clk, done: make(chan struct{}), block: map[string]chan struct{}{}}
	h.s = NewScheduler(clk, func(ctx context.Context, f Firing) {
		h.mu.Lock()
		h.log = append(h.log, fmt.Sprintf("fire %s %s %s", f.Task, f.Due.Format("01-02 15:04 MST"), f.Trigger))
		b := h.block[f.Task]
		h.mu.Unlock()
		if b != nil {
			<-b
		}
	}, func(f Firing, r Reason) {
		h.mu.Lock()
		h.log = append(h.log, fmt.Sprintf("skip %s %s %s", f.Task, f.Due.Format("01-02 15:04 MST"), r))
		h.mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	n := clk.armed()
	go func() { h.s.Run(ctx, specs); close(h.done) }()
	clk.waitArmed(t, n)
	t.Cleanup(h.stop)
	return h
}

func (h *schedRig) update(specs []Spec) {
	h.t.Helper()
	n := h.clk.armed()
	if err := h.s.Update(context.Background(), specs); err != nil {
		h.t.Fatal(err)
	}
	h.clk.waitArmed(h.t, n)
}

func (h *schedRig) stop() {
	h.mu.Lock()
	for k, b := range h.block {
		close(b)
		delete(h.block, k)
	}
	h.mu.Unlock()
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("Run did not return after cancel")
	}
}

// events stops the scheduler (so every started firing has logged) and
// returns the log.
func (h *schedRig) events() string {
	h.stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.log, "\n")
}

func spec(t *testing.T, name, expr, tz string, catchUp bool) Spec {
	return Spec{Name: name, Schedule: mustSchedule(t, expr, tz), CatchUp: catchUp}
}

func expectLog(t *testing.T, got string, want ...string) {
	t.Helper()
	if w := strings.Join(want, "\n"); got != w {
		t.Fatalf("scheduler log:\n%s\nwant:\n%s", got, w)
	}
}

func TestSchedulerFiresEachSlotOnTimeAcrossDST(t *testing.T) {
	loc := mustLoc(t, "Europe/Berlin")
	clk := newTestClock(time.Date(2026, 3, 28, 6, 0, 0, 0, loc))
	h := startScheduler(t, clk, []Spec{spec(t, "inbox", "30 2,7 * * *", "Europe/Berlin", true)})
	clk.advance(t, 50*time.Hour)
	if clk.maxD > time.Minute {
		t.Errorf("scheduler slept %v at once; the wall clock must be re-read at least every %v", clk.maxD, Recheck)
	}
	expectLog(t, h.events(),
		"fire inbox 03-28 07:30 CET schedule",
		"fire inbox 03-29 03:30 CEST schedule", // 02:30 is in the gap
		"fire inbox 03-29 07:30 CEST schedule",
		"fire inbox 03-30 02:30 CEST schedule",
		"fire inbox 03-30 07:30 CEST schedule",
	)
}

func TestSchedulerRepeatedHourFiresOnce(t *testing.T) {
	loc := mustLoc(t, "America/New_York")
	clk := newTestClock(time.Date(2026, 11, 1, 0, 50, 0, 0, loc))
	h := startScheduler(t, clk, []Spec{spec(t, "nightly", "30 1 * * *", "America/New_York", true)})
	clk.advance(t, 3*time.Hour)
	expectLog(t, h.events(), "fire nightly 11-01 01:30 EDT schedule")
}

// TestSchedulerWallClockJump: the machine sleeps (or NTP steps the clock)
// and no timer fires for the jump; the scheduler still fires within a
// Recheck, once, and as a catch-up when the slot is long past.
func TestSchedulerWallClockJump(t *testing.T) {
	loc := mustLoc(t, "Europe/Berlin")
	at := func(h, m int) time.Time { return time.Date(2026, 5, 4, h, m, 0, 0, loc) }

	t.Run("short jump fires on schedule within a minute", func(t *testing.T) {
		clk := newTestClock(at(6, 0))
		h := startScheduler(t, clk, []Spec{spec(t, "inbox", "0 7 * * *", "Europe/Berlin", true)})
		clk.jump(59*time.Minute + 30*time.Second) // wall 06:59:30, timer still a minute out
		clk.advance(t, time.Minute)               // its Recheck timer: wall 07:00:30
		expectLog(t, h.events(), "fire inbox 05-04 07:00 CEST schedule")
	})
	t.Run("long sleep fires one catch-up", func(t *testing.T) {
		clk := newTestClock(at(6, 0))
		h := startScheduler(t, clk, []Spec{spec(t, "hourly", "0 * * * *", "Europe/Berlin", true)})
		clk.jump(5*time.Hour + 20*time.Minute) // slept through 07:00..11:00
		clk.advance(t, time.Minute)
		clk.advance(t, 40*time.Minute)
		expectLog(t, h.events(),
			"fire hourly 05-04 11:00 CEST catch_up",
			"fire hourly 05-04 12:00 CEST schedule")
	})
	t.Run("long sleep with catch_up off fires nothing missed", func(t *testing.T) {
		clk := newTestClock(at(6, 0))
		h := startScheduler(t, clk, []Spec{spec(t, "hourly", "0 * * * *", "Europe/Berlin", false)})
		clk.jump(5*time.Hour + 20*time.Minute)
		clk.advance(t, time.Minute)
		clk.advance(t, 40*time.Minute)
		expectLog(t, h.events(), "fire hourly 05-04 12:00 CEST schedule")
	})
	t.Run("clock stepped back fires nothing twice", func(t *testing.T) {
		clk := newTestClock(at(6, 59))
		h := startScheduler(t, clk, []Spec{spec(t, "inbox", "0 7 * * *", "Europe/Berlin", true)})
		clk.advance(t, 2*time.Minute)
		clk.jump(-10 * time.Minute)
		clk.advance(t, 20*time.Minute)
		expectLog(t, h.events(), "fire inbox 05-04 07:00 CEST schedule")
	})
}

func TestSchedulerCatchUpAtStart(t *testing.T) {
	loc := mustLoc(t, "Europe/Berlin")
	now := time.Date(2026, 5, 8, 9, 0, 0, 0, loc)
	lastRun := time.Date(2026, 5, 1, 7, 0, 5, 0, loc) // a week of missed mornings
	for _, c := range []struct {
		name    string
		catchUp bool
		last    time.Time
		want    []string
	}{
		{"once for a week missed", true, lastRun, []string{"fire inbox 05-08 07:00 CEST catch_up"}},
		{"catch_up off", false, lastRun, nil},
		{"no history", true, time.Time{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newTestClock(now)
			sp := spec(t, "inbox", "0 7 * * *", "Europe/Berlin", c.catchUp)
			sp.LastRun = c.last
			h := startScheduler(t, clk, []Spec{sp})
			clk.advance(t, time.Hour)
			expectLog(t, h.events(), c.want...)
		})
	}
}

func TestSchedulerSkipsWhileStillRunning(t *testing.T) {
	clk := newTestClock(time.Date(2026, 5, 4, 7, 0, 30, 0, time.UTC))
	h := startScheduler(t, clk, []Spec{spec(t, "slow", "* * * * *", "UTC", true)})
	release := make(chan struct{})
	h.mu.Lock()
	h.block["slow"] = release
	h.mu.Unlock()
	clk.advance(t, time.Minute) // 07:01 runs and hangs
	// The firing is recorded by the run's own goroutine: wait for it, so
	// the log's order is the scheduler's, not the goroutines'.
	testutil.WaitForEvery(t, 10*time.Second, time.Millisecond, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.log) == 1
	}, "the 07:01 firing")
	clk.advance(t, 2*time.Minute) // 07:02, 07:03 skipped
	h.mu.Lock()
	delete(h.block, "slow")
	h.mu.Unlock()
	close(release)
	// The run ends; wait for the scheduler to see it before the next slot.
	testutil.WaitForEvery(t, 10*time.Second, time.Millisecond, func() bool {
		h.s.mu.Lock()
		defer h.s.mu.Unlock()
		return !h.s.running["slow"]
	}, "the slow run to end")
	clk.advance(t, time.Minute)
	expectLog(t, h.events(),
		"fire slow 05-04 07:01 UTC schedule",
		"skip slow 05-04 07:02 UTC still_running",
		"skip slow 05-04 07:03 UTC still_running",
		"fire slow 05-04 07:04 UTC schedule")
}

func TestSchedulerReload(t *testing.T) {
	loc := mustLoc(t, "Europe/Berlin")
	at := func(h, m, s int) time.Time { return time.Date(2026, 5, 4, h, m, s, 0, loc) }

	t.Run("same schedule reloaded after its firing does not fire again", func(t *testing.T) {
		clk := newTestClock(at(6, 59, 0))
		specs := []Spec{spec(t, "inbox", "0 7 * * *", "Europe/Berlin", true)}
		h := startScheduler(t, clk, specs)
		clk.advance(t, time.Minute)
		h.update([]Spec{spec(t, "inbox", "0 7 * * *", "Europe/Berlin", true)})
		clk.advance(t, 10*time.Minute)
		expectLog(t, h.events(), "fire inbox 05-04 07:00 CEST schedule")
	})
	t.Run("a firing due during the reload fires once, under the old plan", func(t *testing.T) {
		clk := newTestClock(at(6, 59, 50))
		h := startScheduler(t, clk, []Spec{spec(t, "inbox", "0 7 * * *", "Europe/Berlin", true)})
		clk.jump(30 * time.Second) // 07:00:20 on the wall; the timer has not fired yet
		h.update([]Spec{spec(t, "inbox", "30 7 * * *", "Europe/Berlin", true)})
		clk.advance(t, 40*time.Minute)
		expectLog(t, h.events(),
			"fire inbox 05-04 07:00 CEST schedule",
			"fire inbox 05-04 07:30 CEST schedule")
	})
	t.Run("a new schedule does not fire its past slots", func(t *testing.T) {
		clk := newTestClock(at(6, 59, 0))
		h := startScheduler(t, clk, []Spec{spec(t, "inbox", "0 7 * * *", "Europe/Berlin", true)})
		clk.advance(t, 31*time.Minute)
		// 07:15 lies between the last firing and now: not a missed slot.
		h.update([]Spec{spec(t, "inbox", "15 7,9 * * *", "Europe/Berlin", true)})
		clk.advance(t, 2*time.Hour)
		expectLog(t, h.events(),
			"fire inbox 05-04 07:00 CEST schedule",
			"fire inbox 05-04 09:15 CEST schedule")
	})
	t.Run("removed and added tasks", func(t *testing.T) {
		clk := newTestClock(at(6, 30, 0))
		h := startScheduler(t, clk, []Spec{spec(t, "old", "0 7 * * *", "Europe/Berlin", true)})
		h.update([]Spec{spec(t, "new", "45 6 * * *", "Europe/Berlin", true)})
		clk.advance(t, time.Hour)
		expectLog(t, h.events(), "fire new 05-04 06:45 CEST schedule")
	})
}

// Tasks due at once share the work of finding their next slot only when
// schedule and time zone are the same: "0 9 * * *" in UTC and in London
// are due at the same instant in winter, and an hour apart once London
// has sprung forward (2026-03-29).
func TestSchedulerSharedDueTimeKeepsEachZone(t *testing.T) {
	clk := newTestClock(time.Date(2026, 3, 28, 8, 59, 0, 0, time.UTC))
	var specs []Spec
	for _, name := range []string{"utc-a", "utc-b"} {
		specs = append(specs, spec(t, name, "0 9 * * *", "UTC", true))
	}
	for _, name := range []string{"london-a", "london-b"} {
		specs = append(specs, spec(t, name, "0 9 * * *", "Europe/London", true))
	}
	h := startScheduler(t, clk, specs)
	clk.advance(t, time.Minute) // 03-28 09:00 UTC: all four
	for _, name := range []string{"utc-a", "utc-b", "london-a", "london-b"} {
		want := time.Date(2026, 3, 29, 9, 0, 0, 0, time.UTC)
		if strings.HasPrefix(name, "london") {
			want = want.Add(-time.Hour) // 09:00 BST
		}
		if got := h.s.Next(name); !got.Equal(want) {
			t.Errorf("%s: next slot %v, want %v", name, got, want)
		}
	}
	clk.advance(t, 24*time.Hour)
	got := strings.Split(h.events(), "\n")
	sort.Strings(got)
	expectLog(t, strings.Join(got, "\n"),
		"fire london-a 03-28 09:00 GMT schedule",
		"fire london-a 03-29 09:00 BST schedule",
		"fire london-b 03-28 09:00 GMT schedule",
		"fire london-b 03-29 09:00 BST schedule",
		"fire utc-a 03-28 09:00 UTC schedule",
		"fire utc-a 03-29 09:00 UTC schedule",
		"fire utc-b 03-28 09:00 UTC schedule",
		"fire utc-b 03-29 09:00 UTC schedule")
}
