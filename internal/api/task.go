package api

import (
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The task operations of the socket (and later HTTP and MCP) API:
//
//	GET  /tasks                         []Task
//	GET  /tasks/{name}                  Task
//	GET  /tasks/{name}/history?limit=N  TaskHistory (newest last)
//	GET  /history?limit=N               TaskHistory of every task, by start
//	GET  /tasks/{name}/logs?run=ID      TaskLog (run "" = the newest run)
//	POST /tasks/{name}/run              RunRequest → TaskRun (Wait: the
//	                                    finished run; else the run as started)
//	POST /tasks/{name}/enable           Task (an atomic, validated leo.yaml edit)
//	POST /tasks/{name}/disable          Task
//	POST /hooks/turn-end                TurnEndReport → {"ok":true} (a
//	                                    harness's turn-end hook, see
//	                                    persistent tasks)

// Trigger says why a run started.
type Trigger string

const (
	TriggerSchedule   Trigger = "schedule"
	TriggerCatchUp    Trigger = "catch_up"
	TriggerManual     Trigger = "manual"
	TriggerPersistent Trigger = "persistent"
)

// Outcome is how a run ended; "running" only ever shows on a run that has
// not ended (it is never written to history).
type Outcome string

const (
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomeTimeout   Outcome = "timeout"
	OutcomeSkipped   Outcome = "skipped"
	// OutcomeLimited: a usage or rate limit stopped the run (reason
	// usage_limit, ResetsAt when the harness said when it resets).
	OutcomeLimited Outcome = "limited"
	OutcomeRunning Outcome = "running"
)

// Reason is the typed cause of an outcome other than success.
type Reason string

const (
	ReasonExitStatus      Reason = "exit_status"
	ReasonHarnessError    Reason = "harness_error"
	ReasonTimeout         Reason = "timeout"
	ReasonClaudeNotFound  Reason = "claude_not_found"
	ReasonHarnessNotFound Reason = "harness_not_found"
	ReasonStillRunning    Reason = "still_running"
	ReasonQueueFull       Reason = "queue_full"
	ReasonConfigError     Reason = "config_error"    // the task no longer resolves, or its prompt file cannot be read
	ReasonDelivery        Reason = "delivery_failed" // a persistent firing could not be put into its agent
	ReasonInterrupted     Reason = "interrupted"     // the daemon stopped (or was killed) during the run
	ReasonStartFailed     Reason = "start_failed"    // the harness process could not be started
	ReasonUsageLimit      Reason = "usage_limit"     // the harness hit a usage or rate limit
)

// Usage is what a harness reports about tokens (harness.Usage: the
// adapters fill it, history keeps it as they gave it).
type Usage = harness.Usage

// TaskRun is one run of a task: the history record. Unknown fields are
// ignored on read, so older leo versions read newer history.
type TaskRun struct {
	// ID names the run: its start time (UTC, "20060102T150405.000Z"), which
	// is also the base name of its log file state/logs/<task>/<ID>.log.
	ID       string    `json:"id,omitempty"`
	Task     string    `json:"task"`
	Trigger  Trigger   `json:"trigger"`
	Due      time.Time `json:"due,omitzero"` // the slot a scheduled or catch-up run was for
	Start    time.Time `json:"start"`
	End      time.Time `json:"end,omitzero"`
	Outcome  Outcome   `json:"outcome"`
	Reason   Reason    `json:"reason,omitempty"`
	Message  string    `json:"message,omitempty"` // the reason in words
	ExitCode *int      `json:"exit_code,omitempty"`
	// ResetsAt is when a limited run's limit resets, as the harness said.
	ResetsAt  *time.Time `json:"resets_at,omitempty"`
	Attempt   int        `json:"attempt,omitempty"`
	Harness   string     `json:"harness,omitempty"`
	Agent     string     `json:"agent,omitempty"` // a persistent run's target agent
	SessionID string     `json:"session_id,omitempty"`
	Reply     string     `json:"reply,omitempty"` // the reply's first lines
	Warnings  []string   `json:"warnings,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"`
	CostUSD   *float64   `json:"cost_usd,omitempty"`
	// Worktree is the worktree a run of a task with worktree: true ran
	// in; Kept when the run left changes or commits in it (removed, with
	// its branch, when it left none).
	Worktree *Worktree `json:"worktree,omitempty"`
}

// Task is a task as listings show it. It never carries env values.
type Task struct {
	Name    string `json:"name"`
	Runtime string `json:"runtime"` // "oneshot" | "persistent"
	Harness string `json:"harness"`
	// HarnessInherited: the task sets no harness of its own (it runs
	// defaults.harness), as on api.Template.
	HarnessInherited bool   `json:"harness_inherited"`
	Model            string `json:"model,omitempty"`
	Schedule         string `json:"schedule,omitempty"`
	ScheduleWords    string `json:"schedule_words,omitempty"` // the cron in words
	Timezone         string `json:"timezone"`                 // the IANA name in effect ("Local" when unset)
	Enabled          bool   `json:"enabled"`
	CatchUp          bool   `json:"catch_up"`
	// Agent is a persistent task's target agent.
	Agent   string     `json:"agent,omitempty"`
	NextRun *time.Time `json:"next_run,omitempty"`
	Running bool       `json:"running"`
	LastRun *TaskRun   `json:"last_run,omitempty"`
}

// TaskHistory is GET /tasks/{name}/history. Dropped names the lines of the
// history files that were not records (a torn last record after a crash).
type TaskHistory struct {
	Runs    []TaskRun `json:"runs"`
	Dropped []string  `json:"dropped,omitempty"`
}

// TaskLog is GET /tasks/{name}/logs.
type TaskLog struct {
	Task string `json:"task"`
	Run  string `json:"run"`
	Text string `json:"text"`
}

// RunRequest is POST /tasks/{name}/run.
type RunRequest struct {
	// Wait: answer when the run has ended, with its record.
	Wait bool `json:"wait,omitempty"`
}

// TurnEndReport is what a harness's turn-end hook (`leo hook turn-end`)
// posts: the agent it ran in (from the LEO_AGENT variable leo puts in
// every agent's environment), the harness, and the hook's raw payload,
// which only the harness's adapter reads.
type TurnEndReport struct {
	Agent   string `json:"agent"`
	Harness string `json:"harness"`
	Payload []byte `json:"payload"`
}
