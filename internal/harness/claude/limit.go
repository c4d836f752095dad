package claude

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// claude words a usage limit it knows the end of as "You've hit your
// session limit · resets 3pm (Europe/Berlin)": the time in the user's zone
// as en-US formats it ("3pm", "3:30pm"; "Dec 3, 3pm" when more than a day
// away, with the year when it is another), then the IANA zone; a fast-mode
// cooldown as "· resets in 5m 30s". These are the texts of claude 2.1.197's
// code (docs/harness-behaviour/claude.md, "Limits"); an API key's 429 says
// "API Error: Request rejected (429) · …" with no time (captured,
// testdata/hooks/rate-limited_*).
var resetsPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`resets (?:in ((?:\d{1,4}[dhms] ?)+)|` +
		`(?:([A-Z][a-z]{2}) (\d{1,2}),? (?:(\d{4}),? )?(?:at )?)?(\d{1,2})(?::(\d{2}))?[ \x{202f}\x{a0}]?([AaPp][Mm])(?: \(([^)]+)\))?)`)
})

// resetsAt is when the limit text says it resets, resolved against now;
// zero when it does not say.
func resetsAt(text string, now time.Time) time.Time {
	all := resetsPattern().FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return time.Time{}
	}
	m := all[len(all)-1]
	if m[1] != "" {
		d := parseShortDuration(m[1])
		if d <= 0 || d > maxReset {
			return time.Time{}
		}
		return now.Add(d)
	}
	loc := time.Local
	if m[8] != "" {
		if l, err := time.LoadLocation(m[8]); err == nil {
			loc = l
		}
	}
	hour, _ := strconv.Atoi(m[5])
	minute, _ := strconv.Atoi(m[6])
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}
	}
	hour %= 12
	if strings.EqualFold(m[7], "pm") {
		hour += 12
	}
	local := now.In(loc)
	if m[2] == "" {
		// Within a day: the next such time (claude made the text a moment
		// ago, so one a few minutes past is today's).
		t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
		if t.Before(local.Add(-resetSlack)) {
			t = time.Date(local.Year(), local.Month(), local.Day()+1, hour, minute, 0, 0, loc)
		}
		return t
	}
	month, err := time.Parse("Jan", m[2])
	if err != nil {
		return time.Time{}
	}
	day, _ := strconv.Atoi(m[3])
	year, explicit := local.Year(), m[4] != ""
	if explicit {
		year, _ = strconv.Atoi(m[4])
	}
	t := time.Date(year, month.Month(), day, hour, minute, 0, 0, loc)
	if t.Day() != day {
		return time.Time{} // "Feb 31"
	}
	if !explicit && t.Before(local.Add(-24*time.Hour)) {
		t = t.AddDate(1, 0, 0) // "Jan 2" said on Dec 30
	}
	return t
}

// maxReset bounds a "resets in …" taken for a time (the sum of many
// fields would overflow).
const maxReset = 400 * 24 * time.Hour

// resetSlack is how far past a "3pm" may be and still be today's.
const resetSlack = 10 * time.Minute

// parseShortDuration reads claude's "1d 2h 5m 30s".
func parseShortDuration(s string) time.Duration {
	var d time.Duration
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f[:len(f)-1])
		if err != nil {
			continue
		}
		if d > maxReset {
			return d // no further: it is too far already
		}
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}[f[len(f)-1]]
		d += time.Duration(n) * unit
	}
	return d
}
