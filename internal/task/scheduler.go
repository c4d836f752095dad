package task

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/clock"
)

// Recheck is the longest the scheduler sleeps without reading the wall
// clock. Go timers run on the monotonic clock, which stops while a Linux
// machine is suspended and ignores NTP steps; waking at least this often
// bounds how late such a jump can make a firing.
const Recheck = time.Minute

// Grace is how late a firing may start and still count as on time
// (trigger schedule). A slot found later than that was missed (the machine
// slept or the daemon was down): it becomes the one catch-up firing, or
// nothing when the task has catch_up off.
const Grace = 2 * time.Minute

// Spec is what the scheduler needs of one enabled task. Disabled tasks are
// not given to it.
type Spec struct {
	Name     string
	Schedule *Schedule
	CatchUp  bool
	// LastRun is when the task last ran (from history), for a task the
	// scheduler is not tracking yet: slots after it that passed are missed
	// slots. Zero means none are (the task is planned from now on).
	LastRun time.Time
}

// Firing is one due slot of a task.
type Firing struct {
	Task    string
	Due     time.Time
	Trigger Trigger
}

// Scheduler fires tasks at their due times on a clock. It does not poll:
// it sleeps until the next due time, or Recheck, whichever is sooner.
type Scheduler struct {
	clk  clock.Clock
	fire func(ctx context.Context, f Firing)
	skip func(f Firing, reason Reason)

	updates chan []Spec

	mu      sync.Mutex
	running map[string]bool
	next    map[string]time.Time // each task's next due time, for listings
	wg      sync.WaitGroup
}

// NewScheduler makes a scheduler. fire runs one firing: it is called on a
// goroutine of its own, and the task counts as running until it returns
// (firings of one task never overlap). skip is told, on the scheduler's
// goroutine, of a firing that did not run (reason still_running).
func NewScheduler(clk clock.Clock, fire func(ctx context.Context, f Firing), skip func(f Firing, reason Reason)) *Scheduler {
	return &Scheduler{clk: clk, fire: fire, skip: skip, updates: make(chan []Spec), running: map[string]bool{}, next: map[string]time.Time{}}
}

// Update replaces the set of scheduled tasks (a config reload). A task that
// stays keeps its place: slots it already fired never fire again, and any
// slot that came due before the update is fired under the old plan first.
// A task whose schedule, time zone or catch-up changed is planned afresh
// from the moment of the update. It blocks until Run takes the update.
func (s *Scheduler) Update(ctx context.Context, specs []Spec) error {
	select {
	case s.updates <- specs:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type plan struct {
	spec Spec
	done time.Time // the last slot handled, or when planning started
	next time.Time // zero: never again
}

// Run schedules specs until ctx ends, then waits for running firings
// (whose ctx is ctx) to return.
func (s *Scheduler) Run(ctx context.Context, specs []Spec) {
	plans := map[string]*plan{}
	plans = s.apply(plans, specs, s.clk.Now())
	for {
		now := s.clk.Now()
		s.pass(ctx, plans, now)
		s.noteNext(plans)
		d := Recheck
		for _, p := range plans {
			if !p.next.IsZero() && p.next.Sub(now) < d {
				d = p.next.Sub(now)
			}
		}
		timer := s.clk.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			s.wg.Wait()
			return
		case <-timer.C():
		case specs := <-s.updates:
			timer.Stop()
			now := s.clk.Now()
			s.pass(ctx, plans, now) // what came due fires under the plan it came due in
			plans = s.apply(plans, specs, now)
		}
	}
}

func (s *Scheduler) apply(old map[string]*plan, specs []Spec, now time.Time) map[string]*plan {
	plans := make(map[string]*plan, len(specs))
	for _, spec := range specs {
		p, kept := old[spec.Name]
		switch {
		case kept && sameSchedule(p.spec, spec):
			p.spec = spec
		case kept:
			p = &plan{spec: spec, done: laterOf(p.done, now)}
		default:
			p = &plan{spec: spec, done: now}
			if !spec.LastRun.IsZero() && spec.LastRun.Before(now) {
				p.done = spec.LastRun
			}
		}
		p.next = spec.Schedule.Next(p.done)
		plans[spec.Name] = p
	}
	return plans
}

func sameSchedule(a, b Spec) bool {
	return a.CatchUp == b.CatchUp && a.Schedule.String() == b.Schedule.String() &&
		a.Schedule.Location().String() == b.Schedule.Location().String()
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// pass starts every task with a slot due by now: one firing per task,
// however many of its slots passed.
func (s *Scheduler) pass(ctx context.Context, plans map[string]*plan, now time.Time) {
	var due []*plan
	for _, p := range plans {
		if !p.next.IsZero() && !p.next.After(now) {
			due = append(due, p)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].next.Equal(due[j].next) {
			return due[i].next.Before(due[j].next)
		}
		return due[i].spec.Name < due[j].spec.Name
	})
	firings := make([]Firing, 0, len(due))
	next := nextSlots{}
	for _, p := range due {
		// p.next is the first slot after p.done; while the one after it is
		// still ahead, p.next is the latest slot due (the usual case: no
		// walk over missed slots).
		latest, after := p.next, next.of(p.spec.Schedule, p.next)
		if !after.IsZero() && !after.After(now) {
			latest, _ = p.spec.Schedule.Missed(p.done, now.Add(time.Nanosecond), true)
			if latest.IsZero() {
				latest = p.next
			}
			after = next.of(p.spec.Schedule, latest)
		}
		p.done = latest
		p.next = after
		trigger := TriggerSchedule
		if now.Sub(latest) >= Grace {
			if !p.spec.CatchUp {
				continue
			}
			trigger = TriggerCatchUp
		}
		firings = append(firings, Firing{Task: p.spec.Name, Due: latest, Trigger: trigger})
	}
	// Planned first, started after: runs already started do not slow the
	// planning of the rest when many tasks share a due time.
	for _, f := range firings {
		s.start(ctx, f)
	}
}

// nextSlots remembers Schedule.Next within one pass. Tasks due at once
// mostly share a schedule (every task "0 9 * * *" fires at nine), and Next
// depends only on the expression, the time zone and the instant, so a
// thousand of them cost one computation instead of a thousand.
type nextSlots map[nextKey]time.Time

type nextKey struct {
	expr, zone string
	after      int64 // t.UnixNano(): the instant, whatever t's *Location
}

func (n nextSlots) of(s *Schedule, t time.Time) time.Time {
	k := nextKey{s.String(), s.Location().String(), t.UnixNano()}
	if v, ok := n[k]; ok {
		return v
	}
	v := s.Next(t)
	n[k] = v
	return v
}

func (s *Scheduler) start(ctx context.Context, f Firing) {
	if !s.Claim(f.Task) {
		s.skip(f, ReasonStillRunning)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.Release(f.Task)
		s.fire(ctx, f)
	}()
}

// Claim marks task as running unless it already is: the one rule that
// keeps a task's runs from overlapping, shared by scheduled firings and
// runs started by hand. A successful Claim must be paired with Release.
func (s *Scheduler) Claim(task string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[task] {
		return false
	}
	s.running[task] = true
	return true
}

// Release ends a Claim.
func (s *Scheduler) Release(task string) {
	s.mu.Lock()
	delete(s.running, task)
	s.mu.Unlock()
}

// Running reports whether task has a run going.
func (s *Scheduler) Running(task string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[task]
}

// Next is task's next due time as of the scheduler's last pass; zero when
// the task is not scheduled (disabled, unknown) or never fires again.
func (s *Scheduler) Next(task string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next[task]
}

func (s *Scheduler) noteNext(plans map[string]*plan) {
	next := make(map[string]time.Time, len(plans))
	for name, p := range plans {
		next[name] = p.next
	}
	s.mu.Lock()
	s.next = next
	s.mu.Unlock()
}
