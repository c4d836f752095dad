package opencode

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// leo's plugin (turnend_plugin.js) sends more than a turn's end: what
// attention needs of opencode's own events (docs/harness-behaviour/
// opencode.md, "Signals"). ParseSignal reads each at once: every word it
// needs is in the payload.
var _ harness.SignalReader = Opencode{}

// PermissionChoices are the answers opencode 1.18's TUI offers a permission
// prompt, as it words them (testdata/screens/opencode/dialog-permission_*).
var PermissionChoices = []string{"Allow once", "Allow always", "Reject"}

// CustomAnswer is the choice opencode 1.18's TUI adds to a question's
// options unless the question says custom: false.
const CustomAnswer = "Type your own answer"

// signalPayload is a payload of the plugin: the event's type and the
// properties the plugin kept, the turn's messages (idle and error only)
// and when the plugin made it (ms since the epoch).
type signalPayload struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string `json:"sessionID"`
		// session.status
		Status struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Next    int64  `json:"next"`
			Action  *struct {
				Reason string `json:"reason"`
				Title  string `json:"title"`
			} `json:"action"`
		} `json:"status"`
		// permission.asked
		Permission string   `json:"permission"`
		Patterns   []string `json:"patterns"`
		Metadata   struct {
			Command      string `json:"command"`
			Description  string `json:"description"`
			Filepath     string `json:"filepath"`
			ParentDir    string `json:"parentDir"`
			Pattern      string `json:"pattern"`
			Path         string `json:"path"`
			URL          string `json:"url"`
			Query        string `json:"query"`
			SubagentType string `json:"subagent_type"`
		} `json:"metadata"`
		// question.asked
		Questions []struct {
			Header   string `json:"header"`
			Question string `json:"question"`
			Custom   bool   `json:"custom"`
			Options  []struct {
				Label string `json:"label"`
			} `json:"options"`
		} `json:"questions"`
	} `json:"properties"`
	Time int64 `json:"time"`
}

// ParseSignal reads one payload of leo's plugin:
//
//   - session.status busy: a turn started (the plugin sends it once per
//     turn); retry: opencode will try a failed model call again — limited
//     when its words say a rate or usage limit (ResetsAt: when it tries
//     again), else the turn goes on; idle: nothing (session.idle follows);
//   - permission.asked: a person is asked (Prompt: the tool and what it
//     would do, as the TUI titles it, and the TUI's choices);
//     permission.replied: the turn goes on;
//   - question.asked: a question (its words; the first question's option
//     labels, and the TUI's own answer, as choices); question.replied or question.rejected: the turn
//     goes on;
//   - session.idle, session.error: the turn ended (the reply), or failed
//     (the error's message, as TurnActivity words it) — limited when the
//     error is a rate or usage limit (an HTTP 429, or its words), ResetsAt
//     from its retry-after.
func (Opencode) ParseSignal(payload []byte) (harness.Signal, error) {
	var p signalPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return harness.Signal{}, fmt.Errorf("opencode: hook payload: %w", err)
	}
	pr := p.Properties
	sig := harness.Signal{SessionID: pr.SessionID}
	switch p.Type {
	case "session.status":
		switch pr.Status.Type {
		case "busy":
			sig.Kind = harness.SignalTurnStarted
		case "retry":
			sig.Kind, sig.Text = harness.SignalWorking, pr.Status.Message
			if isLimit(pr.Status.Message) || pr.Status.Action != nil && limitReasons[pr.Status.Action.Reason] {
				// opencode retries by itself at Next: leo types nothing.
				sig.Kind, sig.HarnessWaits = harness.SignalLimited, true
				if pr.Status.Next > 0 {
					sig.ResetsAt = plausible(time.UnixMilli(pr.Status.Next), msTime(p.Time))
				}
			}
		}
		return sig, nil
	case "permission.asked":
		text := permissionText(p)
		sig.Kind, sig.Text = harness.SignalNeedsInput, text
		sig.Prompt = &harness.Prompt{Kind: "permission", Text: text, Choices: append([]string(nil), PermissionChoices...)}
		return sig, nil
	case "question.asked":
		var texts, choices []string
		for i, q := range pr.Questions {
			if t := strings.TrimSpace(q.Question); t != "" {
				texts = append(texts, t)
			}
			if i == 0 {
				for _, o := range q.Options {
					if l := strings.TrimSpace(o.Label); l != "" {
						choices = append(choices, l)
					}
				}
				if q.Custom {
					choices = append(choices, CustomAnswer)
				}
			}
		}
		text := strings.Join(texts, "\n")
		sig.Kind, sig.Text = harness.SignalNeedsInput, text
		sig.Prompt = &harness.Prompt{Kind: "question", Text: text, Choices: choices}
		return sig, nil
	case "permission.replied", "question.replied", "question.rejected":
		sig.Kind = harness.SignalWorking
		return sig, nil
	case "session.idle", "session.error":
		te, errRaw, err := parseEnd(payload)
		if err != nil {
			return harness.Signal{}, err
		}
		sig = harness.TurnEndSignal(te)
		if te.Failed {
			// In the words the session store's record gives (TurnActivity).
			if words, _ := (messageData{Error: errRaw}).failure(); words != "" {
				sig.Text = words
			}
			if limited, resets := limitOf(errRaw, p.Time); limited {
				sig.Kind, sig.ResetsAt = harness.SignalLimited, resets
			}
		}
		return sig, nil
	}
	return harness.Signal{}, fmt.Errorf("opencode: hook payload: type %q is not one leo's plugin sends", p.Type)
}

// permissionText is the prompt's question as opencode 1.18's TUI titles it
// (its title line, then its body: "Shell command" / "$ <command>"), from
// what the plugin kept of the request; a tool it has no words for is
// "Call tool <name>".
func permissionText(p signalPayload) string {
	pr := p.Properties
	md := pr.Metadata
	first := func(vs ...string) string {
		for _, v := range vs {
			if v != "" {
				return v
			}
		}
		return ""
	}
	pattern := ""
	if len(pr.Patterns) > 0 {
		pattern = pr.Patterns[0]
	}
	var lines []string
	switch pr.Permission {
	case "bash":
		lines = []string{"Shell command"}
		if md.Command != "" {
			lines = append(lines, "$ "+md.Command)
		} else {
			for _, p := range pr.Patterns {
				lines = append(lines, "- "+p)
			}
		}
	case "edit":
		lines = []string{"Edit " + first(md.Filepath, pattern)}
	case "read":
		lines = []string{"Read " + first(md.Filepath, pattern)}
	case "list":
		lines = []string{"List " + first(md.Path, pattern)}
	case "glob", "grep":
		name := "Glob"
		if pr.Permission == "grep" {
			name = "Grep"
		}
		lines = []string{fmt.Sprintf("%s %q", name, first(md.Pattern, pattern))}
	case "webfetch":
		lines = []string{"WebFetch " + first(md.URL, pattern)}
	case "task":
		lines = []string{titleCase(first(md.SubagentType, pattern, "unknown")) + " Task"}
		if md.Description != "" {
			lines = append(lines, "◉ "+md.Description)
		}
	case "external_directory":
		lines = []string{"Access external directory " + first(md.ParentDir, md.Filepath, strings.TrimSuffix(pattern, "/*"))}
		for _, p := range pr.Patterns {
			lines = append(lines, "- "+p)
		}
	case "doom_loop":
		lines = []string{"Continue after repeated failures"}
	default:
		lines = []string{"Call tool " + pr.Permission}
		for _, p := range pr.Patterns {
			if p != "*" {
				lines = append(lines, "- "+p)
			}
		}
	}
	return strings.Join(lines, "\n")
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// limitReasons are the retry actions opencode gives a usage limit of its
// own service (its free tier, its Go plan).
var limitReasons = map[string]bool{"free_tier_limit": true, "account_rate_limit": true}

// limitWords are how providers and opencode word a rate or usage limit;
// compiled on first use.
var limitWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)rate[ _-]?limit|too many requests|too_many_requests|usage limit|quota|free usage exceeded|FreeUsageLimitError|GoUsageLimitError`)
})

func isLimit(s string) bool { return s != "" && limitWords().MatchString(s) }

// limitOf reports whether a turn's error (opencode's {name, data}) is a
// rate or usage limit: an HTTP 429, or a message or body saying so. The
// reset is the response's retry-after (retry-after-ms, retry-after in
// seconds or as a date), counted from the response's date or else from
// the payload's time (ms).
func limitOf(raw json.RawMessage, at int64) (bool, time.Time) {
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message         string            `json:"message"`
			StatusCode      int               `json:"statusCode"`
			ResponseBody    string            `json:"responseBody"`
			ResponseHeaders map[string]string `json:"responseHeaders"`
		} `json:"data"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &e) != nil {
		return false, time.Time{}
	}
	d := e.Data
	if d.StatusCode != http.StatusTooManyRequests && !isLimit(d.Message) && !isLimit(d.ResponseBody) {
		return false, time.Time{}
	}
	h := map[string]string{}
	for k, v := range d.ResponseHeaders {
		h[strings.ToLower(k)] = strings.TrimSpace(v)
	}
	base := msTime(at)
	if t, err := http.ParseTime(h["date"]); err == nil {
		base = t
	}
	after := func(v string, unit time.Duration) (time.Time, bool) {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 0 || base.IsZero() || n*float64(unit) > float64(maxReset) {
			return time.Time{}, false
		}
		return base.Add(time.Duration(n * float64(unit))), true
	}
	if t, ok := after(h["retry-after-ms"], time.Millisecond); ok {
		return true, t.UTC()
	}
	if t, ok := after(h["retry-after"], time.Second); ok {
		return true, t.UTC()
	}
	if t, err := http.ParseTime(h["retry-after"]); err == nil {
		return true, plausible(t, base)
	}
	return true, time.Time{}
}

// maxReset bounds a reset leo believes: opencode waits at most 2^31 ms
// (about 25 days) for a retry; a later one is no reset time.
const maxReset = 31 * 24 * time.Hour

// plausible is reset, UTC, unless it lies before base or more than
// maxReset after it (base zero: not known, any reset goes).
func plausible(reset, base time.Time) time.Time {
	if !base.IsZero() && (reset.Before(base.Add(-time.Minute)) || reset.After(base.Add(maxReset))) {
		return time.Time{}
	}
	return reset.UTC()
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
