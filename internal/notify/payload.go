package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
)

// notification is what notifier gets for ev (docs/notifications.md).
func notification(name, notifier string, ev api.Event, test bool) api.Notification {
	return api.Notification{Notify: name, Text: text(name, ev, test), Agent: ev.Agent, Task: ev.Task,
		Notifier: notifier, Test: test, Event: ev}
}

// maxText bounds Notification.Text.
const maxText = 300

// text says ev in one line for a person. What a harness or a task wrote
// is hostile text: control characters become spaces.
func text(name string, ev api.Event, test bool) string {
	detail := ""
	if a := ev.Attention; a != nil {
		detail = a.Detail
	}
	var s string
	switch name {
	case api.NotifyNeedsInput:
		s = "agent " + ev.Agent + " needs input"
		if detail != "" {
			s += ": " + detail
		}
	case api.NotifyErrored:
		s = "agent " + ev.Agent + ": its turn failed"
		if detail != "" {
			s += ": " + detail
		}
	case api.NotifyLimited:
		s = "agent " + ev.Agent + " is stopped by a usage limit"
		if a := ev.Attention; a != nil && a.ResetsAt != nil {
			s += " until " + a.ResetsAt.UTC().Format(time.RFC3339)
		}
		if detail != "" {
			s += ": " + detail
		}
	case api.NotifyResumed:
		s = "agent " + ev.Agent + ": the usage limit is over; leo delivers to it again"
		if ev.Reason != "" {
			s += " (" + ev.Reason + ")"
		}
	case api.NotifyIdle:
		s = "agent " + ev.Agent + " finished its turn"
		if ev.FirstLine != "" {
			s += ": " + ev.FirstLine
		}
	case api.NotifyCrashLoop:
		s = fmt.Sprintf("agent %s is crash-looping: %d launches in a row ended too soon", ev.Agent, ev.Failures)
		if ev.Reason != "" {
			s += " (" + ev.Reason + ")"
		}
	case api.NotifyTaskSucceeded:
		s = "task " + ev.Task + " succeeded"
	case api.NotifyTaskFailed:
		s = "task " + ev.Task + " failed"
		if ev.State == string(api.OutcomeTimeout) {
			s = "task " + ev.Task + " timed out"
		}
		if ev.Reason != "" {
			s += ": " + ev.Reason
		}
	}
	if test {
		s = "[leo notify test] " + s
	}
	return clip(oneLine(s), maxText)
}

// oneLine turns control characters (newlines, escapes) into spaces.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }), " ")
}

// Sample is the stream event `leo notify test` sends as name: what such
// an event looks like, about an agent (or a task) named "sample".
func Sample(name string, now time.Time) api.Event {
	now = now.UTC()
	agent := func(a api.Attention) api.Event {
		a.Since = now
		return api.Event{Type: api.EventAgentAttention, At: now, Agent: "sample", Attention: &a}
	}
	switch name {
	case api.NotifyNeedsInput:
		choices := []string{"Yes", "No"}
		text := "Bash command: touch x — Do you want to proceed?"
		return agent(api.Attention{State: api.AttentionNeedsInput, Detail: "claude asks permission to run `touch x`",
			Prompt: &api.Prompt{ID: api.PromptID(api.PromptPermission, text, choices), Kind: api.PromptPermission, Text: text, Choices: choices}})
	case api.NotifyErrored:
		return agent(api.Attention{State: api.AttentionErrored, Detail: "API Error: 500 (a sample error)"})
	case api.NotifyLimited:
		resets := now.Add(time.Hour).Truncate(time.Minute)
		return agent(api.Attention{State: api.AttentionLimited, Detail: "usage limit reached (a sample)", ResetsAt: &resets})
	case api.NotifyResumed:
		return api.Event{Type: api.EventAgentResumed, At: now, Agent: "sample", Reason: "the limit's reset came"}
	case api.NotifyIdle:
		return api.Event{Type: api.EventTurnEnded, At: now, Agent: "sample", State: "ok", FirstLine: "Done: a sample reply's first line."}
	case api.NotifyCrashLoop:
		return api.Event{Type: api.EventAgentExited, At: now, Agent: "sample", Failures: api.CrashLoopFailures,
			Reason: "exited with status 1 after 2s; restarting in 4s"}
	case api.NotifyTaskSucceeded:
		return api.Event{Type: api.EventTaskRunEnded, At: now, Task: "sample", Run: "sample-run", State: string(api.OutcomeSucceeded)}
	case api.NotifyTaskFailed:
		return api.Event{Type: api.EventTaskRunEnded, At: now, Task: "sample", Run: "sample-run", State: string(api.OutcomeFailed),
			Reason: "claude exited with status 1 (a sample)"}
	}
	return api.Event{}
}

// Test sends a sample of req.Event (default needs_input) to every notifier
// of the running config that listens for it (or only those of req.Scope),
// once each and at once, past the queues: a test never waits behind
// notifications. It says how each one went; a failing test does not make
// a notifier failing in /health.
func (e *Engine) Test(ctx context.Context, req api.NotifyTestRequest) (api.NotifyTestResult, error) {
	name := req.Event
	if name == "" {
		name = api.NotifyNeedsInput
	}
	if !api.IsNotifyEvent(name) {
		return api.NotifyTestResult{}, api.Errorf(api.CodeInvalidArgs, "unknown event %q (valid: %s)", name, strings.Join(api.NotifyEvents, ", "))
	}
	cfg := e.opts.Config()
	if cfg == nil {
		return api.NotifyTestResult{}, api.Errorf(api.CodeNotReady, "no config loaded")
	}
	var jobs []job
	sample := Sample(name, e.clk.Now())
	for _, n := range cfg.AllNotifiers() {
		if !n.Listens(name) || req.Scope != "" && config.NotifyScope(n.Name) != req.Scope {
			continue
		}
		body, err := json.Marshal(notification(name, n.Name, sample, true))
		if err != nil {
			return api.NotifyTestResult{}, err
		}
		for _, kind := range kinds(n) {
			jobs = append(jobs, job{n: n, kind: kind, event: name, body: body})
		}
	}
	if len(jobs) == 0 {
		where := "leo.yaml"
		if req.Scope != "" {
			where = req.Scope + "'s notify: list"
		}
		return api.NotifyTestResult{}, api.Errorf(api.CodeNotFound, "no notifier in %s listens for %s (add it to a notifier's events:)", where, name)
	}
	out := api.NotifyTestResult{Event: name, Results: make([]api.NotifyResult, len(jobs))}
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := e.clk.Now()
			err := e.try(ctx, j)
			r := api.NotifyResult{Target: targetKey(j.n.Name, j.kind), Kind: j.kind, OK: err == nil,
				TookMS: e.clk.Since(start).Milliseconds()}
			if err != nil {
				r.Error = err.Error()
				e.log.Warn("notify test: "+describe(j.n.Name, j.kind)+" failed", "event", name, "err", r.Error)
			} else {
				e.log.Info("notify test: "+describe(j.n.Name, j.kind)+" took the sample", "event", name)
			}
			out.Results[i] = r
		}()
	}
	wg.Wait()
	return out, nil
}
