package config

import (
	"strings"
	"testing"
)

func TestDescribeSchedule(t *testing.T) {
	cases := map[string]string{
		"0 7 * * 1-5":       "every weekday at 07:00",
		"0 7 * * MON-FRI":   "every weekday at 07:00",
		"*/15 * * * *":      "every 15 minutes",
		"0 6 1 * *":         "at 06:00 on day 1 of the month",
		"0 7 * * *":         "every day at 07:00",
		"30 6 1,15 * *":     "at 06:30 on days 1 and 15 of the month",
		"0 0 1-7 * *":       "at 00:00 on days 1 to 7 of the month",
		"0 9 * * MON":       "every Monday at 09:00",
		"0 9 * * 1,3,5":     "every Monday, Wednesday and Friday at 09:00",
		"0 9 * * 1-4":       "every Monday to Thursday at 09:00",
		"0 10 * * 0,6":      "every Saturday and Sunday at 10:00",
		"0 10 * * 6,7":      "every Saturday and Sunday at 10:00", // 7 is Sunday
		"0 10 * * 7":        "every Sunday at 10:00",
		"*/30 8-18 * * 1-5": "every 30 minutes from 08:00 to 18:30 on weekdays",
		"* * * * *":         "every minute",
		"* 9 * * *":         "every minute from 09:00 to 09:59",
		"0 * * * *":         "every hour, on the hour",
		"15 * * * *":        "every hour at minute 15",
		"0 */2 * * *":       "every 2 hours, on the hour",
		"5 */6 * * *":       "every 6 hours at minute 5",
		"0 9-17 * * 1-5":    "every hour from 09:00 to 17:00 on weekdays",
		"0 9,17 * * *":      "every day at 09:00 and 17:00",
		"0,30 9,17 * * *":   "every day at 09:00, 09:30, 17:00 and 17:30",
		"0 0 1 1 *":         "at 00:00 on day 1 of the month in January",
		"0 8 * 6-8 *":       "every day at 08:00 in June to August",
		"0 8 * 1,7 1":       "every Monday at 08:00 in January and July",
		"0 0 15 * FRI":      "at 00:00 on day 15 of the month and every Friday",
		"*/10 * * * 1":      "every 10 minutes on Mondays",
		"*/5 * 1 * *":       "every 5 minutes on day 1 of the month",
		"  0 7 * * *  ":     "every day at 07:00",
	}
	for expr, want := range cases {
		if got := DescribeSchedule(expr); got != want {
			t.Errorf("DescribeSchedule(%q) = %q, want %q", expr, got, want)
		}
	}
}

// Forms without words, and anything that is not a valid 5-field
// expression, come back as written.
func TestDescribeScheduleFallsBackToTheExpression(t *testing.T) {
	for _, expr := range []string{
		"*/7 * * * *",     // 56 → 0 is not every 7 minutes
		"0,20,45 * * * *", // an irregular list of minutes
		"*/15 */2 * * *",  // steps in both
		"0 1,3,4,9,11,13,15 * * *",
		"61 7 * * *",
		"0 7 * *",
		"@daily",
		"CRON_TZ=UTC 0 7 * * *",
		"",
		"\x00\x01 7 * * *",
		strings.Repeat("1,", 10000) + "1 * * * *",
		"0 0 L * *",
	} {
		if got := DescribeSchedule(expr); got != expr {
			t.Errorf("DescribeSchedule(%q) = %q, want the expression back", expr, got)
		}
	}
}

// Every expression the validator accepts gets an answer without panicking.
func FuzzDescribeSchedule(f *testing.F) {
	for _, s := range []string{"0 7 * * 1-5", "*/15 * * * *", "0 0 15 * FRI", "1-5/2 3 * 1-2 SUN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if DescribeSchedule(expr) == "" && expr != "" {
			t.Fatalf("empty description of %q", expr)
		}
	})
}
