// Package task holds the foundation of leo's scheduled tasks: the schedule
// planner (pure functions over a task's cron expression and time zone), the
// scheduler loop that fires tasks on an injectable clock, and the append-only
// run history store. The daemon does not use this package yet.
package task

import (
	"fmt"
	"time"

	cron "github.com/netresearch/go-cron"

	"github.com/blackpaw-studio/leo/internal/config"
)

// Schedule is a task's parsed cron expression in its time zone. Its methods
// are pure: they depend only on their arguments.
type Schedule struct {
	expr string
	loc  *time.Location
	// civil is the same expression read in UTC, which has no DST: it
	// enumerates wall-clock slots (local date, hour, minute) as if they
	// were UTC instants. instant maps each slot to the real instant.
	civil cron.Schedule
}

// ParseSchedule parses expr in timezone ("" is the host's local zone) with
// the very parser config validation uses, so what validates is what runs.
func ParseSchedule(expr, timezone string) (*Schedule, error) {
	s, err := config.ParseSchedule(expr, timezone)
	if err != nil {
		return nil, err
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("schedule %q: unexpected schedule type %T", expr, s)
	}
	loc := time.Local
	if spec.Location != nil {
		loc = spec.Location
	}
	civil := *spec
	civil.Location = time.UTC
	return &Schedule{expr: expr, loc: loc, civil: &civil}, nil
}

// String is the cron expression as written.
func (s *Schedule) String() string { return s.expr }

// Location is the time zone the schedule is read in.
func (s *Schedule) Location() *time.Location { return s.loc }

// nearTransition is how close to a UTC-offset change a time must be for a
// slot's instant to possibly be out of wall-clock order (a gap slot shifted
// past later slots). It exceeds any real zone's jump, Samoa's skipped day
// included.
const nearTransition = 26 * time.Hour

// Next is the first due time strictly after t, or the zero time when the
// schedule never fires again. DST rules, for a wall-clock slot (the local
// date, hour and minute the expression names):
//   - a slot inside a spring-forward gap (02:30 on a night that jumps from
//     02:00 to 03:00) fires once, shifted forward by the length of the gap
//     (03:30); if that instant is also a slot of its own it fires once;
//   - a slot that occurs twice in a fall-back (02:30 on a night that goes
//     from 03:00 back to 02:00) fires once, at its first occurrence. This
//     holds for every slot, so "*/15 * * * *" does not fire during the
//     repeated hour.
//
// (go-cron's own Next in the task's zone fires a repeated slot twice and,
// for some hour lists, drops a gap slot; hence the civil walk here.)
func (s *Schedule) Next(t time.Time) time.Time {
	// Slots map to instants in wall-clock order except around a
	// spring-forward: a gap slot, shifted by the jump, can land after
	// slots up to one jump later, or after t though its wall reading is
	// up to one jump before t's. Widen the walk by that much, only there.
	start := s.wall(t).Add(-s.jump(t))
	var best, limit time.Time
	for c := s.civil.Next(start.Add(-time.Nanosecond)); !c.IsZero(); c = s.civil.Next(c) {
		if !best.IsZero() && c.After(limit) {
			break
		}
		i := s.instant(c)
		if !i.After(t) || (!best.IsZero() && !i.Before(best)) {
			continue
		}
		best = i
		limit = s.wall(best).Add(s.jump(best))
	}
	return best
}

// jump is the size of a forward offset change (spring-forward) within
// nearTransition of u, or zero.
func (s *Schedule) jump(u time.Time) time.Duration {
	var j time.Duration
	start, end := u.In(s.loc).ZoneBounds()
	for _, tr := range []time.Time{start, end} {
		if tr.IsZero() || u.Sub(tr).Abs() >= nearTransition {
			continue
		}
		_, before := tr.Add(-time.Second).In(s.loc).Zone()
		_, after := tr.In(s.loc).Zone()
		if d := time.Duration(after-before) * time.Second; d > j {
			j = d
		}
	}
	return j
}

// wall is u's local wall-clock reading as a UTC time (the civil frame).
func (s *Schedule) wall(u time.Time) time.Time {
	l := u.In(s.loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// instant is the due instant of the civil slot c: its first occurrence, or,
// when the slot falls in a gap, the slot shifted forward by the gap.
func (s *Schedule) instant(c time.Time) time.Time {
	x := time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), s.loc)
	if s.wall(x).Equal(c) {
		if back := s.repeatedBy(x); back > 0 {
			return x.Add(-back)
		}
		return x
	}
	// In a gap: read c with the offset in force before the gap. Which of
	// x's zone bounds is the gap depends on how time.Date normalised it.
	zs, ze := x.ZoneBounds()
	for _, tr := range []time.Time{zs, ze} {
		if tr.IsZero() {
			continue
		}
		_, before := tr.Add(-time.Second).In(s.loc).Zone()
		_, after := tr.In(s.loc).Zone()
		shifted := c.Add(-time.Duration(before) * time.Second)
		if after > before && !shifted.Before(tr) && c.Add(-time.Duration(after)*time.Second).Before(tr) {
			return shifted.In(s.loc)
		}
	}
	return x
}

// repeatedBy is how far back u's wall-clock reading first occurred, when u
// lies in the second pass of a fall-back; zero otherwise.
func (s *Schedule) repeatedBy(u time.Time) time.Duration {
	u = u.In(s.loc)
	start, _ := u.ZoneBounds()
	if start.IsZero() {
		return 0
	}
	_, before := start.Add(-time.Second).In(s.loc).Zone()
	_, now := u.Zone()
	back := time.Duration(before-now) * time.Second
	if back > 0 && u.Before(start.Add(back)) {
		return back
	}
	return 0
}

// Missed is the catch-up decision after downtime or sleep: the latest due
// time in (lastRun, now) that did not run, or false when nothing was missed,
// when catchUp is off, or when lastRun is zero (a task that never ran has
// missed nothing). However many slots passed, the answer is at most one
// firing.
func (s *Schedule) Missed(lastRun, now time.Time, catchUp bool) (time.Time, bool) {
	if !catchUp || lastRun.IsZero() || !lastRun.Before(now) {
		return time.Time{}, false
	}
	first := s.Next(lastRun)
	if first.IsZero() || !first.Before(now) {
		return time.Time{}, false
	}
	// Walk only the recent past when a slot lies there, so a frequent
	// schedule after a long downtime does not walk every missed slot.
	from := first
	if recent := now.Add(-48 * time.Hour); recent.After(first) {
		if x := s.Next(recent); !x.IsZero() && x.Before(now) {
			from = x
		}
	}
	latest := from
	for x := s.Next(from); !x.IsZero() && x.Before(now); x = s.Next(x) {
		latest = x
	}
	return latest, true
}
