package config

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones work the same on hosts without a zoneinfo database

	cron "github.com/netresearch/go-cron"
)

// cronParser reads the classic 5-field crontab syntax. DowOrDom keeps the
// Vixie-cron meaning users expect: when both day-of-month and day-of-week
// are restricted, either one matching fires the task.
var cronParser = cron.MustNewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.DowOrDom)

// ParseSchedule parses a task's 5-field cron expression in its time zone
// ("" is the host's local zone). The scheduler uses this same function, so
// what validates is exactly what runs.
func ParseSchedule(expr, timezone string) (cron.Schedule, error) {
	trimmed := strings.TrimSpace(expr)
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		return nil, fmt.Errorf("%q: put the time zone in the timezone field, not in the schedule", expr)
	}
	if strings.HasPrefix(trimmed, "@") {
		return nil, fmt.Errorf("%q: use a 5-field cron expression (minute hour day-of-month month day-of-week), e.g. \"0 7 * * *\"", expr)
	}
	if n := len(strings.Fields(trimmed)); n != 5 {
		return nil, fmt.Errorf("%q has %d fields; a schedule has 5 (minute hour day-of-month month day-of-week)", expr, n)
	}
	loc := time.Local
	if timezone != "" {
		l, err := loadLocation(timezone)
		if err != nil {
			return nil, err
		}
		loc = l
	}
	s, err := cronParser.Parse(trimmed)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %v", expr, err)
	}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return s, nil
}

// checkSchedule also rejects expressions that parse but name no real date
// (e.g. "0 0 30 2 *"): they would never fire.
func checkSchedule(expr, timezone string) error {
	s, err := ParseSchedule(expr, timezone)
	if err != nil {
		if timezone != "" {
			if _, tzErr := loadLocation(timezone); tzErr != nil {
				// The timezone field reports its own error; check the
				// expression alone.
				s, err = ParseSchedule(expr, "")
			}
		}
		if err != nil {
			return err
		}
	}
	if s.Next(time.Now()).IsZero() {
		return fmt.Errorf("%q never fires: no date matches it", expr)
	}
	return nil
}
