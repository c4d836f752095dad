package task

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// fataler is what testing.T and rapid.T share.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func mustLoc(t fataler, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustSchedule(t fataler, expr, tz string) *Schedule {
	t.Helper()
	s, err := ParseSchedule(expr, tz)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// firings lists every due time in [from, to).
func firings(s *Schedule, from, to time.Time) []time.Time {
	var out []time.Time
	for x := s.Next(from.Add(-time.Nanosecond)); !x.IsZero() && x.Before(to); x = s.Next(x) {
		out = append(out, x)
	}
	return out
}

func fmtTimes(ts []time.Time, loc *time.Location) string {
	var b []string
	for _, t := range ts {
		b = append(b, t.In(loc).Format("01-02 15:04 MST"))
	}
	return strings.Join(b, ", ")
}

func TestNextAcrossDST(t *testing.T) {
	cases := []struct {
		name, expr, tz string
		day            [3]int // local date whose 00:00..24:00 (+1h) is listed
		want           string
	}{
		{"berlin gap slot shifts once", "30 2 * * *", "Europe/Berlin", [3]int{2026, 3, 29}, "03-29 03:30 CEST"},
		{"berlin gap slot and its shifted instant fire once", "30 2,3 * * *", "Europe/Berlin", [3]int{2026, 3, 29}, "03-29 03:30 CEST"},
		{"berlin half-hourly over the gap", "*/30 1-3 * * *", "Europe/Berlin", [3]int{2026, 3, 29}, "03-29 01:00 CET, 03-29 01:30 CET, 03-29 03:00 CEST, 03-29 03:30 CEST"},
		{"berlin repeated slot fires once", "30 2 * * *", "Europe/Berlin", [3]int{2026, 10, 25}, "10-25 02:30 CEST"},
		{"berlin half-hourly over the repeated hour", "*/30 1-3 * * *", "Europe/Berlin", [3]int{2026, 10, 25}, "10-25 01:00 CEST, 10-25 01:30 CEST, 10-25 02:00 CEST, 10-25 02:30 CEST, 10-25 03:00 CET, 10-25 03:30 CET"},
		{"berlin ordinary day", "30 2 * * *", "Europe/Berlin", [3]int{2026, 3, 30}, "03-30 02:30 CEST"},
		{"new york gap slot shifts once", "15 2 * * *", "America/New_York", [3]int{2026, 3, 8}, "03-08 03:15 EDT"},
		{"new york hourly over the gap", "0 * * * *", "America/New_York", [3]int{2026, 3, 8}, ""},
		{"new york repeated slot fires once", "45 1 * * *", "America/New_York", [3]int{2026, 11, 1}, "11-01 01:45 EDT"},
		{"new york every 20 min over the repeated hour", "*/20 0-2 * * *", "America/New_York", [3]int{2026, 11, 1}, "11-01 00:00 EDT, 11-01 00:20 EDT, 11-01 00:40 EDT, 11-01 01:00 EDT, 11-01 01:20 EDT, 11-01 01:40 EDT, 11-01 02:00 EST, 11-01 02:20 EST, 11-01 02:40 EST"},
		{"weekday 7:00 berlin across the gap weekend", "0 7 * * 1-5", "Europe/Berlin", [3]int{2026, 3, 30}, "03-30 07:00 CEST"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := mustLoc(t, c.tz)
			s := mustSchedule(t, c.expr, c.tz)
			from := time.Date(c.day[0], time.Month(c.day[1]), c.day[2], 0, 0, 0, 0, loc)
			to := time.Date(c.day[0], time.Month(c.day[1]), c.day[2]+1, 0, 0, 0, 0, loc)
			got := fmtTimes(firings(s, from, to), loc)
			if c.want == "" { // hourly: 23 firings on a 23-hour day, none doubled
				n := len(firings(s, from, to))
				if n != 23 {
					t.Fatalf("%d firings on a 23-hour day: %s", n, got)
				}
				return
			}
			if got != c.want {
				t.Fatalf("firings of %q on %v:\n got %s\nwant %s", c.expr, c.day, got, c.want)
			}
		})
	}
}

func TestMissedCatchUp(t *testing.T) {
	loc := mustLoc(t, "Europe/Berlin")
	at := func(mo, d, h, mi int) time.Time { return time.Date(2026, time.Month(mo), d, h, mi, 0, 0, loc) }
	daily := mustSchedule(t, "0 7 * * *", "Europe/Berlin")
	minutely := mustSchedule(t, "* * * * *", "Europe/Berlin")
	cases := []struct {
		name    string
		s       *Schedule
		last    time.Time
		now     time.Time
		catchUp bool
		want    time.Time // zero: none
	}{
		{"nothing missed", daily, at(5, 1, 7, 0), at(5, 1, 23, 0), true, time.Time{}},
		{"one missed", daily, at(5, 1, 7, 0), at(5, 2, 9, 0), true, at(5, 2, 7, 0)},
		{"a week missed is one firing, the latest", daily, at(5, 1, 7, 0), at(5, 8, 9, 0), true, at(5, 8, 7, 0)},
		{"catch_up off", daily, at(5, 1, 7, 0), at(5, 8, 9, 0), false, time.Time{}},
		{"never ran", daily, time.Time{}, at(5, 8, 9, 0), true, time.Time{}},
		{"due exactly now is not missed", daily, at(5, 1, 7, 0), at(5, 2, 7, 0), true, time.Time{}},
		{"frequent schedule after a year down", minutely, at(1, 1, 0, 0), at(12, 1, 12, 0), true, at(12, 1, 11, 59)},
		{"clock behind the last run", daily, at(5, 2, 7, 0), at(5, 1, 7, 0), true, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.s.Missed(c.last, c.now, c.catchUp)
			if ok != !c.want.IsZero() || (ok && !got.Equal(c.want)) {
				t.Fatalf("Missed(%v, %v, %v) = %v, %v; want %v", c.last, c.now, c.catchUp, got, ok, c.want)
			}
		})
	}
}

// TestNextProperty checks Next against a brute-force reference over windows
// around DST transitions: every wall-clock slot the expression names fires
// exactly once (at its first occurrence, or shifted forward by the gap when
// the slot does not exist), due times strictly increase, nothing else fires.
func TestNextProperty(t *testing.T) {
	zones := []string{"Europe/Berlin", "America/New_York"}
	// Days around the 2026 transitions, plus an ordinary day.
	days := [][3]int{{2026, 3, 29}, {2026, 10, 25}, {2026, 3, 8}, {2026, 11, 1}, {2026, 6, 15}}
	rapid.Check(t, func(rt *rapid.T) {
		tz := rapid.SampledFrom(zones).Draw(rt, "tz")
		loc := mustLoc(rt, tz)
		day := rapid.SampledFrom(days).Draw(rt, "day")
		minutes := rapid.SliceOfNDistinct(rapid.IntRange(0, 59), 1, 4, rapid.ID[int]).Draw(rt, "minutes")
		hours := rapid.SliceOfNDistinct(rapid.IntRange(0, 23), 1, 6, rapid.ID[int]).Draw(rt, "hours")
		sort.Ints(minutes)
		sort.Ints(hours)
		expr := fmt.Sprintf("%s %s * * *", joinInts(minutes), joinInts(hours))
		s := mustSchedule(rt, expr, tz)

		from := time.Date(day[0], time.Month(day[1]), day[2]-1, 0, 0, 0, 0, loc)
		to := time.Date(day[0], time.Month(day[1]), day[2]+2, 0, 0, 0, 0, loc)
		want := map[time.Time]bool{}
		// Walk civil minutes of the window's local days.
		for d := -1; d <= 1; d++ {
			for _, h := range hours {
				for _, m := range minutes {
					inst := time.Date(day[0], time.Month(day[1]), day[2]+d, h, m, 0, 0, loc)
					if inst.Hour() != h || inst.Minute() != m {
						// In a gap (these zones jump in the small
						// hours): read with the offset of that
						// day's midnight, i.e. shifted forward by
						// the gap.
						_, pre := time.Date(day[0], time.Month(day[1]), day[2]+d, 0, 0, 0, 0, loc).Zone()
						want[time.Date(day[0], time.Month(day[1]), day[2]+d, h, m, 0, 0, time.FixedZone("pre", pre)).UTC()] = true
						continue
					}
					// Existing slot: its first occurrence.
					first := inst
					for back := time.Minute; back <= 3*time.Hour; back += time.Minute {
						e := inst.Add(-back)
						if e.Hour() == h && e.Minute() == m && e.Day() == inst.Day() {
							first = e
						}
					}
					want[first.UTC()] = true
				}
			}
		}
		got := firings(s, from, to)
		for i := 1; i < len(got); i++ {
			if !got[i].After(got[i-1]) {
				rt.Fatalf("%q in %s: due times not increasing: %s", expr, tz, fmtTimes(got, loc))
			}
		}
		gotSet := map[time.Time]bool{}
		for _, g := range got {
			gotSet[g.UTC()] = true
		}
		for w := range want {
			if !gotSet[w] {
				rt.Fatalf("%q in %s: slot %s skipped; got %s", expr, tz, w.In(loc).Format("01-02 15:04 MST"), fmtTimes(got, loc))
			}
		}
		for g := range gotSet {
			if !want[g] {
				rt.Fatalf("%q in %s: unexpected firing %s", expr, tz, g.In(loc).Format("01-02 15:04 MST"))
			}
		}
	})
}

func joinInts(xs []int) string {
	var b []string
	for _, x := range xs {
		b = append(b, fmt.Sprint(x))
	}
	return strings.Join(b, ",")
}
