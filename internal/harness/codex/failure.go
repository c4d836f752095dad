package codex

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"time"
)

// turnError is the error codex 0.171.0 writes into a failed turn's
// task_complete (testdata/records_v0.171.0): its message, as the TUI shows
// it, and codex_error_info, a name ("other" for an HTTP 400,
// "internal_server_error" after the retries of a 5xx, "usage_limit_exceeded")
// or an object keyed by one ({"response_too_many_failed_attempts":
// {"http_status_code": 429}}). docs/harness-behaviour/codex.md, "A turn
// that fails".
type turnError struct {
	Message string          `json:"message"`
	Info    json.RawMessage `json:"codex_error_info"`
}

// maxFailedRunes bounds the words kept of a failure (an error body can be
// anything the server sent); the cache keeps one per failed turn.
const maxFailedRunes = 1000

// limitInfos are the codex_error_info names of a usage or rate limit.
var limitInfos = map[string]bool{
	"usage_limit_exceeded": true, // a usage limit: codex does not retry it
	"rate_limit_exceeded":  true,
}

// read is the failure in codex's words, whether it is a limit, and when
// that resets as far as the words say. at is when the turn ended.
func (e turnError) read(at time.Time) (failed string, limited bool, resetsAt time.Time) {
	info, status := e.info()
	failed = strings.TrimSpace(e.Message)
	if failed == "" {
		failed = info
	}
	if failed == "" {
		failed = "turn failed"
	}
	if r := []rune(failed); len(r) > maxFailedRunes {
		failed = string(r[:maxFailedRunes-1]) + "…"
	}
	limited = limitInfos[info] || status == 429
	if limited {
		resetsAt = retryAt(e.Message, at.In(codexZone()))
	}
	return failed, limited, resetsAt
}

// info is codex_error_info's name, and the HTTP status it carries when it
// is an object that has one.
func (e turnError) info() (name string, status int) {
	if len(e.Info) == 0 {
		return "", 0
	}
	if json.Unmarshal(e.Info, &name) == nil {
		return name, 0
	}
	var obj map[string]struct {
		Status int `json:"http_status_code"`
	}
	if json.Unmarshal(e.Info, &obj) != nil || len(obj) != 1 {
		return "", 0
	}
	for k, v := range obj {
		name, status = k, v.Status
	}
	return name, status
}

// codexZone is the zone codex formats its reset times in: the system's,
// which codex and leo share (leo launches codex with its own
// environment). Tests read a capture made in UTC.
var codexZone = func() *time.Location { return time.Local }

// retryAtPattern finds codex's reset time in a usage limit's words: "…
// try again at 2:47 PM." on the day it fails, "… try again at Dec 3rd,
// 2026 2:47 PM." on another (its format_retry_timestamp: "%-I:%M %p", or
// "%b %-d<st|nd|rd|th>, %Y %-I:%M %p", in local time).
var retryAtPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th), (\d{4}) )?(\d{1,2}:\d{2} [AP]M)\.`)
})

// retryAt is the reset time message names, in the zone of now (when the
// turn ended): to the minute, as codex words it. Zero when it names none
// ("try again later").
func retryAt(message string, now time.Time) time.Time {
	m := retryAtPattern().FindStringSubmatch(message)
	if m == nil {
		return time.Time{}
	}
	clock, err := time.Parse("3:04 PM", strings.ToUpper(m[4]))
	if err != nil {
		return time.Time{}
	}
	y, mo, d := now.Date()
	if m[1] != "" {
		day, err := time.Parse("Jan 2 2006", m[1]+" "+m[2]+" "+m[3])
		if err != nil {
			return time.Time{}
		}
		y, mo, d = day.Date()
	}
	return time.Date(y, mo, d, clock.Hour(), clock.Minute(), 0, 0, now.Location())
}
