package api

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// AttentionState is what a running agent is doing, as a person steering
// the fleet needs to know it (docs/agents.md, "Attention").
type AttentionState string

const (
	// AttentionWorking: a turn is running.
	AttentionWorking AttentionState = "working"
	// AttentionNeedsInput: the harness waits for a person (a permission
	// prompt, a question, a dialog leo does not answer).
	AttentionNeedsInput AttentionState = "needs_input"
	// AttentionIdle: the last turn ended; the input is free.
	AttentionIdle AttentionState = "idle"
	// AttentionErrored: the last turn failed.
	AttentionErrored AttentionState = "errored"
	// AttentionLimited: a usage or rate limit stops the harness.
	AttentionLimited AttentionState = "limited"
)

// AttentionStates lists every state, in the order a person reads them
// (the ones that need a person first).
var AttentionStates = []AttentionState{AttentionNeedsInput, AttentionErrored, AttentionLimited, AttentionWorking, AttentionIdle}

// Attention is a running agent's attention state and what it carries.
type Attention struct {
	State AttentionState `json:"state"`
	Since time.Time      `json:"since"`
	// Detail is, by state: working, the first line of the message (or the
	// task firing) that started the turn; idle, the first line of the last
	// reply; errored and limited, the harness's words; needs_input, what
	// the prompt asks, in one line.
	Detail string `json:"detail,omitempty"`
	// MessageID is the id of leo's message whose turn runs (working), or
	// asks (needs_input); empty for a turn a person typed in the TUI.
	MessageID string `json:"message_id,omitempty"`
	// Prompt is what the harness asks, only in needs_input.
	Prompt *Prompt `json:"prompt,omitempty"`
	// ResetsAt is when the limit resets, only in limited and only where
	// the harness says.
	ResetsAt *time.Time `json:"resets_at,omitempty"`
}

// Prompt kinds.
const (
	PromptPermission = "permission"
	PromptQuestion   = "question"
	PromptDialog     = "dialog"
)

// Prompt is what a harness waiting for a person asks, in its own words.
type Prompt struct {
	// ID names this prompt: it changes when the prompt does (PromptID).
	ID string `json:"id"`
	// Kind is PromptPermission, PromptQuestion or PromptDialog.
	Kind string `json:"kind"`
	// Text is the harness's question: the tool and the command or file it
	// asks about.
	Text string `json:"text"`
	// Choices are the answers the harness offers, as it words them.
	Choices []string `json:"choices,omitempty"`
	// Answers are the answers leo can give it (AnswerApprove, AnswerAlways,
	// AnswerDeny, AnswerText): the ones its adapter knows the keys of and
	// the prompt offers; none for a prompt leo cannot answer. Not part of
	// the id.
	Answers []string `json:"answers,omitempty"`
}

// PromptID is the id of a prompt of kind with text and choices: the same
// prompt always gets the same id, another prompt another one.
func PromptID(kind, text string, choices []string) string {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(text))
	for _, c := range choices {
		h.Write([]byte{0})
		h.Write([]byte(c))
	}
	return "p-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// FirstLine is s's first line that is not blank, trimmed and cut at
// FirstLineRunes (with "…").
func FirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > FirstLineRunes {
				return string(r[:FirstLineRunes-1]) + "…"
			}
			return line
		}
	}
	return ""
}

// Event types (docs/api.md, "The event stream").
const (
	EventDaemonStarting = "daemon.starting"
	EventDaemonStopping = "daemon.stopping"
	EventConfigReloaded = "config.reloaded"
	EventProblem        = "problem"
	EventAgentState     = "agent.state"
	EventAgentAttention = "agent.attention"
	// EventAgentExited: an agent's TUI exited and leo restarts it
	// (Reason: how it ended; Failures: the exits in a row that came too
	// soon after their launch — CrashLoopFailures or more is a crash loop).
	EventAgentExited = "agent.exited"
	// EventAgentResumed: the usage limit that held an agent's queue is
	// over (Reason: how leo knows — the reset came, or the harness went
	// on by itself); its messages are delivered again.
	EventAgentResumed     = "agent.resumed"
	EventMessageQueued    = "message.queued"
	EventMessageDelivered = "message.delivered"
	EventMessageFailed    = "message.failed"
	EventTurnStarted      = "turn.started"
	EventTurnEnded        = "turn.ended"
	EventTaskRunStarted   = "task.run.started"
	EventTaskRunEnded     = "task.run.ended"
	// EventPromptAnswered: leo pressed the keys of an answer to an
	// agent's prompt (PromptID, Answer, By: who gave it).
	EventPromptAnswered = "prompt.answered"
	// EventStreamBehind is the first event a reader gets when what it
	// asked for (Last-Event-ID, --since) is older than the ring keeps:
	// Missed counts what it will not see.
	EventStreamBehind = "stream.behind"
	// EventStreamDropped is the last event of a reader too slow to keep
	// up: the daemon dropped it rather than wait.
	EventStreamDropped = "stream.dropped"
)

// EventTypes lists every event type (docs/api.md lists each).
var EventTypes = []string{
	EventDaemonStarting, EventDaemonStopping, EventConfigReloaded, EventProblem,
	EventAgentState, EventAgentAttention, EventAgentExited, EventAgentResumed,
	EventMessageQueued, EventMessageDelivered, EventMessageFailed,
	EventTurnStarted, EventTurnEnded, EventTaskRunStarted, EventTaskRunEnded,
	EventPromptAnswered,
	EventStreamBehind, EventStreamDropped,
}

// Event is one thing that happened, in order. Seq only increases, across
// daemon restarts too (docs/api.md). Fields not of the event's type are
// absent.
type Event struct {
	Seq  uint64    `json:"seq"`
	Type string    `json:"type"`
	At   time.Time `json:"at"`

	Agent string `json:"agent,omitempty"`
	Task  string `json:"task,omitempty"`
	Run   string `json:"run,omitempty"`
	// MessageID is the message an event is about (message.*, turn.started
	// of leo's message).
	MessageID string `json:"message_id,omitempty"`
	// State is an agent's state (agent.state: starting, running, stopped,
	// deleted), a turn's end (turn.ended: ok, error), a run's outcome
	// (task.run.ended) or a reload's (config.reloaded: ok, error).
	State string `json:"state,omitempty"`
	// Attention is the agent's new attention (agent.attention).
	Attention *Attention `json:"attention,omitempty"`
	// FirstLine is a message's first line (message.*), or a reply's
	// (turn.ended).
	FirstLine string `json:"first_line,omitempty"`
	// Reason says why, in words: a failure's reason, a problem, a change.
	Reason string `json:"reason,omitempty"`
	// Missed counts the events a reader will not get (stream.behind).
	Missed uint64 `json:"missed,omitempty"`
	// Failures counts an agent's failed launches in a row (agent.exited).
	Failures int `json:"failures,omitempty"`
	// Changed names the scopes of leo.yaml a reload changed
	// (config.reloaded): "defaults", "web", "scheduler", "notify",
	// "templates.NAME", "tasks.NAME" — never a value.
	Changed []string `json:"changed,omitempty"`
	// PromptID, Answer and By are an answer to a prompt (prompt.answered):
	// the prompt's id, approve|always|deny|text, and who gave it (cli, web,
	// api).
	PromptID string `json:"prompt_id,omitempty"`
	Answer   string `json:"answer,omitempty"`
	By       string `json:"by,omitempty"`
}

// CrashLoopFailures is how many failed launches in a row make an agent
// crash-looping (agent.exited with Failures at least this).
const CrashLoopFailures = 3
