package api

import "time"

// Notify events: what a notify: entry of leo.yaml chooses to send out
// (docs/notifications.md). The names are an API.
const (
	// NotifyNeedsInput: an agent's harness waits for a person (a
	// permission prompt, a question, a dialog); once per prompt.
	NotifyNeedsInput = "needs_input"
	// NotifyErrored: an agent's last turn failed.
	NotifyErrored = "errored"
	// NotifyLimited: a usage or rate limit stops an agent's harness.
	NotifyLimited = "limited"
	// NotifyResumed: the limit that held an agent is over; leo delivers
	// to it again.
	NotifyResumed = "resumed"
	// NotifyIdle: an agent's turn ended well; its input is free.
	NotifyIdle = "idle"
	// NotifyTaskFailed: a task run failed or timed out.
	NotifyTaskFailed = "task_failed"
	// NotifyTaskSucceeded: a task run succeeded.
	NotifyTaskSucceeded = "task_succeeded"
	// NotifyCrashLoop: an agent's TUI exited too soon after its launch
	// CrashLoopFailures times in a row; once per loop.
	NotifyCrashLoop = "crash_loop"
)

// NotifyEvents lists every notify event, in the order docs list them.
var NotifyEvents = []string{NotifyNeedsInput, NotifyErrored, NotifyLimited, NotifyResumed, NotifyIdle,
	NotifyTaskFailed, NotifyTaskSucceeded, NotifyCrashLoop}

// IsNotifyEvent reports whether name is one of NotifyEvents.
func IsNotifyEvent(name string) bool {
	for _, e := range NotifyEvents {
		if e == name {
			return true
		}
	}
	return false
}

// Notification is what a notifier is handed: a command reads it as JSON
// on its stdin, a webhook receives it as the JSON body of a POST
// (docs/notifications.md). Field names are an API.
type Notification struct {
	// Notify is the notify event (NotifyEvents).
	Notify string `json:"notify"`
	// Text says what happened in one line, for a person (a chat
	// webhook shows it as the message).
	Text string `json:"text"`
	// Agent and Task name what it is about (one of them, or both for a
	// persistent task's agent).
	Agent string `json:"agent,omitempty"`
	Task  string `json:"task,omitempty"`
	// Notifier is the notify: entry that sends it, as leo.yaml's field
	// path: "notify[0]", "templates.x.notify[1]", "tasks.y.notify[0]".
	Notifier string `json:"notifier"`
	// Test marks a sample sent by `leo notify test`.
	Test bool `json:"test,omitempty"`
	// Event is the stream event it comes from, as GET /events shows it.
	Event Event `json:"event"`
}

// Notifier kinds: one notify: entry may have both.
const (
	NotifierCommand = "command"
	NotifierWebhook = "webhook"
)

// NotifyTestRequest is POST /notify/test.
type NotifyTestRequest struct {
	// Event is the notify event the sample is (default needs_input).
	Event string `json:"event,omitempty"`
	// Scope limits the test to one scope's notify: list ("notify" for the
	// top level, "templates.x", "tasks.y"); "" tests every notifier.
	Scope string `json:"scope,omitempty"`
}

// NotifyResult is one notifier's answer to a sample.
type NotifyResult struct {
	// Target is the notifier's field: "notify[0].command",
	// "templates.x.notify[1].webhook".
	Target string `json:"target"`
	Kind   string `json:"kind"` // NotifierCommand or NotifierWebhook
	OK     bool   `json:"ok"`
	// TookMS is how long it took, in milliseconds.
	TookMS int64 `json:"took_ms"`
	// Error says why it failed, never with the URL or an env value.
	Error string `json:"error,omitempty"`
}

// NotifyTestResult is POST /notify/test's answer: the sample sent, and one
// result per notifier that listens for its event.
type NotifyTestResult struct {
	Event   string         `json:"event"`
	Results []NotifyResult `json:"results"`
}

// NotifierStatus is one notifier as GET /notify lists it. It never
// carries the command's arguments, the URL or an env value.
type NotifierStatus struct {
	Target string   `json:"target"`
	Kind   string   `json:"kind"`
	Events []string `json:"events"`
	// Program is a command's program (its argv[0]); empty for a webhook.
	Program string `json:"program,omitempty"`
	// Sent and Failed count the notifications delivered and given up on
	// (after the retries) since the daemon started; Dropped those never
	// tried because the notifier's queue was full.
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Dropped int `json:"dropped"`
	// Queued counts the notifications waiting for it now.
	Queued int `json:"queued"`
	// Failing: the last notification failed or was dropped, and none
	// was delivered since. /health lists it under problems.
	Failing   bool       `json:"failing"`
	LastOK    *time.Time `json:"last_ok,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	// LastErrorAt is when LastError happened.
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// NotifyStatus is GET /notify.
type NotifyStatus struct {
	Notifiers []NotifierStatus `json:"notifiers"`
	// Missed counts the stream events the notifier engine never saw
	// (the stream's ring had moved past them).
	Missed uint64 `json:"missed,omitempty"`
}
