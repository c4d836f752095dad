// Package humantime is how times and durations read to a person. The CLI
// and the web UI both format through it, so a duration or a "3h ago" reads
// the same in a terminal and on a page.
package humantime

import (
	"fmt"
	"time"
)

// Ago is a coarse, human duration: "42s", "5m", "3h", "2d".
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// Rel is t relative to now: "in 5m" or "3h ago".
func Rel(t, now time.Time) string {
	if d := t.Sub(now); d >= 0 {
		return "in " + Ago(d)
	}
	return Ago(now.Sub(t)) + " ago"
}

// When is a time as a person reads it in a listing: the local clock time
// (with the weekday or date when not today) and how far it is.
func When(t, now time.Time) string {
	lt, ln := t.Local(), now.Local()
	var abs string
	switch d := t.Sub(now); {
	case sameDay(lt, ln):
		abs = lt.Format("15:04")
	case d > -6*24*time.Hour && d < 6*24*time.Hour:
		abs = lt.Format("Mon 15:04")
	default:
		abs = lt.Format("2006-01-02 15:04")
	}
	return abs + " (" + Rel(t, now) + ")"
}

// Stamp is an exact local time that says its zone:
// "2026-05-01 14:03:07 CEST".
func Stamp(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

// Took is how long a run took, "-" when start or end is unknown.
func Took(start, end time.Time) string {
	if end.IsZero() || start.IsZero() || end.Before(start) {
		return "-"
	}
	return Round(end.Sub(start))
}

// Round keeps a duration's meaningful digits: ms under a second, tenths
// under a minute, whole seconds above.
func Round(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
