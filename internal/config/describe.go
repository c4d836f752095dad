package config

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	cron "github.com/netresearch/go-cron"
)

// No maintained Go library that says a cron expression in words is served
// here (lnquy/cron is not), so this is a small one. It reads the
// expression through the same parser the scheduler uses (cronParser) and
// describes the sets of minutes, hours and days the parser built, so names,
// ranges, lists and steps all read the same way.

// starBit is the bit go-cron sets on a field written as "*".
const starBit = 1 << 63

// maxListedTimes bounds "at 09:00, 12:00 and 17:00": more times than this
// read worse than the expression itself.
const maxListedTimes = 6

// DescribeSchedule says a 5-field cron expression in words, for listings:
// "every weekday at 07:00", "every 15 minutes", "at 06:00 on day 1 of the
// month". A form it has no words for (and any invalid expression) comes
// back as written.
func DescribeSchedule(expr string) string {
	trimmed := strings.TrimSpace(expr)
	if len(strings.Fields(trimmed)) != 5 || strings.HasPrefix(trimmed, "@") || strings.Contains(trimmed, "=") {
		return expr
	}
	s, err := cronParser.Parse(trimmed)
	if err != nil {
		return expr
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok || len(spec.DomConstraints) > 0 || len(spec.DowConstraints) > 0 {
		return expr
	}
	if words, ok := describeSpec(spec); ok {
		return words
	}
	return expr
}

func describeSpec(spec *cron.SpecSchedule) (string, bool) {
	minutes := setBits(spec.Minute, 0, 59)
	hours := setBits(spec.Hour, 0, 23)
	months := setBits(spec.Month, 1, 12)
	dows := setBits(spec.Dow, 0, 7)
	if len(dows) > 0 && dows[len(dows)-1] == 7 { // 7 is Sunday too
		dows = dows[:len(dows)-1]
		if len(dows) == 0 || dows[0] != 0 {
			dows = append([]int{0}, dows...)
		}
	}
	doms := setBits(spec.Dom, 1, 31)
	domAll := spec.Dom&starBit != 0 || len(doms) == 31 && spec.Dow&starBit != 0
	dowAll := spec.Dow&starBit != 0 || len(dows) == 7 && spec.Dom&starBit != 0
	if len(minutes) == 0 || len(hours) == 0 || len(months) == 0 || len(doms) == 0 || len(dows) == 0 {
		return "", false
	}

	at, interval, ok := describeTimes(minutes, hours)
	if !ok {
		return "", false
	}
	var b strings.Builder
	switch {
	case domAll && dowAll:
		if at != "" {
			b.WriteString("every day " + at)
		} else {
			b.WriteString(interval)
		}
	case domAll: // only weekdays restricted
		if at != "" {
			b.WriteString(weekdays(dows, "every") + " " + at)
		} else {
			b.WriteString(interval + " " + weekdays(dows, "on"))
		}
	default:
		days := monthDays(doms)
		if !dowAll { // either one matching fires (DowOrDom)
			days += " and " + weekdays(dows, "every")
		}
		if at != "" {
			b.WriteString(at + " " + days)
		} else {
			b.WriteString(interval + " " + days)
		}
	}
	if len(months) < 12 {
		names := make([]string, len(months))
		for i, m := range months {
			names[i] = time.Month(m).String()
		}
		b.WriteString(" in " + rangeOrList(months, names))
	}
	return b.String(), true
}

// describeTimes says when within a day the schedule fires: either a list of
// clock times (at: "at 07:00") or an interval (interval: "every 15
// minutes", "every hour at minute 5").
func describeTimes(minutes, hours []int) (at, interval string, ok bool) {
	allHours := len(hours) == 24
	from, to, contiguous := span(hours)
	within := ""
	if !allHours && contiguous {
		within = fmt.Sprintf(" from %s to %s", clock(from, minutes[0]), clock(to, minutes[len(minutes)-1]))
	}

	if step, ok := everyStep(minutes, 60); ok && (allHours || contiguous) {
		if step == 1 {
			return "", "every minute" + within, true
		}
		return "", fmt.Sprintf("every %d minutes%s", step, within), true
	}
	if len(minutes) == 1 {
		m := minutes[0]
		past := fmt.Sprintf(" at minute %d", m)
		if m == 0 {
			past = ", on the hour"
		}
		if allHours {
			return "", "every hour" + past, true
		}
		if step, ok := everyStep(hours, 24); ok {
			return "", fmt.Sprintf("every %d hours%s", step, past), true
		}
		if contiguous && len(hours) > maxListedTimes {
			return "", "every hour" + within, true
		}
	}
	if len(minutes)*len(hours) <= maxListedTimes {
		var times []string
		for _, h := range hours {
			for _, m := range minutes {
				times = append(times, clock(h, m))
			}
		}
		return "at " + joinWords(times), "", true
	}
	return "", "", false
}

// everyStep reports a set that is 0, step, 2·step, … up to the field's
// size, with step dividing size: "every step units" then holds across the
// wrap too.
func everyStep(set []int, size int) (int, bool) {
	if len(set) < 2 || set[0] != 0 {
		if len(set) == size {
			return 1, true
		}
		return 0, false
	}
	step := set[1] - set[0]
	if size%step != 0 || len(set) != size/step {
		return 0, false
	}
	for i, v := range set {
		if v != i*step {
			return 0, false
		}
	}
	return step, true
}

// span reports whether set is one run of consecutive values, and its ends.
func span(set []int) (from, to int, ok bool) {
	for i := 1; i < len(set); i++ {
		if set[i] != set[i-1]+1 {
			return 0, 0, false
		}
	}
	return set[0], set[len(set)-1], true
}

func clock(h, m int) string { return fmt.Sprintf("%02d:%02d", h, m) }

// weekdays names a set of days of the week after lead ("every" Monday,
// "on" Mondays): the working week and the weekend get their own words.
func weekdays(dows []int, lead string) string {
	key := fmt.Sprint(dows)
	switch {
	case key == "[1 2 3 4 5]" && lead == "every":
		return "every weekday"
	case key == "[1 2 3 4 5]":
		return "on weekdays"
	case key == "[0 6]":
		return lead + " Saturday and Sunday"
	case len(dows) == 1 && lead == "on":
		return "on " + time.Weekday(dows[0]).String() + "s"
	}
	names := make([]string, len(dows))
	for i, d := range dows {
		names[i] = time.Weekday(d).String()
	}
	return lead + " " + rangeOrList(dows, names)
}

// monthDays is "on day 1 of the month", "on days 1 and 15 of the month",
// "on days 1 to 7 of the month".
func monthDays(doms []int) string {
	if len(doms) == 1 {
		return fmt.Sprintf("on day %d of the month", doms[0])
	}
	names := make([]string, len(doms))
	for i, d := range doms {
		names[i] = fmt.Sprint(d)
	}
	return "on days " + rangeOrList(doms, names) + " of the month"
}

// rangeOrList writes three or more consecutive values as "a to b", else
// lists the names.
func rangeOrList(set []int, names []string) string {
	if _, _, ok := span(set); ok && len(set) >= 3 {
		return names[0] + " to " + names[len(names)-1]
	}
	return joinWords(names)
}

// joinWords is "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// setBits lists the values from lo to hi whose bit is set.
func setBits(mask uint64, lo, hi int) []int {
	mask &^= starBit
	out := make([]int, 0, bits.OnesCount64(mask))
	for v := lo; v <= hi; v++ {
		if mask&(1<<uint(v)) != 0 {
			out = append(out, v)
		}
	}
	return out
}
