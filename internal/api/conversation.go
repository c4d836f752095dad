package api

import "time"

// Conversation is GET /agents/{name}/conversation: the turns of one
// conversation of an agent, oldest first, read from the harness's own
// record (never the pane).
type Conversation struct {
	Agent          string `json:"agent"`
	ConversationID string `json:"conversation_id"`
	Turns          []Turn `json:"turns"`
	// Earlier are the agent's conversations before this one (a reset
	// starts a new one), newest first; `--conversation ID` reads one.
	Earlier []string `json:"earlier,omitempty"`
}

// Turn is one user message and what the agent did for it.
type Turn struct {
	ID        string     `json:"id"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	User      TurnUser   `json:"user"`
	Reply     TurnReply  `json:"reply"`
	// Tools is never null: [] for a turn that ran none.
	Tools []ToolCall `json:"tools"`
	// Outcome is OutcomeOK, OutcomeError, OutcomeInterrupted or
	// OutcomeRunning.
	Outcome string `json:"outcome"`
	// Error is the harness's words for a turn that failed.
	Error   string   `json:"error,omitempty"`
	Usage   *Usage   `json:"usage,omitempty"`
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// TurnUser is a turn's user message.
type TurnUser struct {
	Text string `json:"text"`
	// Sender is leo's record of who sent a message it delivered: "cli",
	// "web", "api", "task <t>", "agent <a>". Empty for text a person typed
	// in the TUI.
	Sender string `json:"sender"`
	// MessageID is leo's id of the message, when leo delivered it.
	MessageID string `json:"message_id,omitempty"`
}

// TurnReply is the assistant's final text of a turn.
type TurnReply struct {
	Text string `json:"text"`
}

// ToolCall is one tool the model ran in a turn; Input is compact JSON text,
// cut at a few KiB (a cut one ends with "…").
type ToolCall struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

// Turn outcomes.
const (
	OutcomeTurnOK          = "ok"
	OutcomeTurnError       = "error"
	OutcomeTurnInterrupted = "interrupted"
	OutcomeTurnRunning     = "running"
)

// Senders leo records for the messages it delivers (TurnUser.Sender).
const (
	SenderCLI = "cli"
	SenderWeb = "web"
	SenderAPI = "api"
	// SenderLeo is a message leo itself sends: the "continue" after a
	// usage limit's reset (on_limit: continue).
	SenderLeo = "leo"
)

// SenderHeader carries, from the web server to the socket route it hands
// a request to, which surface sent it (SenderWeb, SenderAPI). The web
// server sets it on every request it passes on, whatever the client sent;
// a request on the socket without it is the CLI's.
const SenderHeader = "Leo-Sender"

// SenderTask and SenderAgent name a task's or an agent's message.
func SenderTask(task string) string   { return "task " + task }
func SenderAgent(agent string) string { return "agent " + agent }

// What a send waits for (SendRequest.Wait).
const (
	WaitDelivered = "delivered"
	WaitReply     = "reply"
)

// ConversationQuery selects what GET /agents/{name}/conversation reads.
type ConversationQuery struct {
	// ID is an earlier conversation of the agent; "" the current one.
	ID string
	// Last keeps the newest Last turns; 0 keeps all.
	Last int
}

// ParseWaitTimeout reads a wait's timeout: a Go duration, at most MaxWait;
// "" is MaxWait.
func ParseWaitTimeout(s string) (time.Duration, error) {
	if s == "" {
		return MaxWait, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > MaxWait {
		return 0, Errorf(CodeInvalidArgs, "timeout: %q is not a duration from 1s to %s (e.g. 90s, 10m)", clipID(s), MaxWait)
	}
	return d, nil
}

// MaxWait bounds SendRequest.Timeout: a caller that needs longer asks for
// the reply later (GET /agents/{name}/messages/{id}, leo_get_reply).
const MaxWait = 24 * time.Hour

// MessageOutcome is a waited send's answer (and GET
// /agents/{name}/messages/{id}): the message's status, its delivery's
// reason when it failed, and, once its turn ended, the reply.
type MessageOutcome struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Status is "queued", "in_flight", "delivered" or "failed".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Reply is the assistant's final text of the turn the message
	// started, once that turn ended; nil before.
	Reply *TurnReply `json:"reply,omitempty"`
	// Outcome is that turn's outcome (OutcomeTurn*), once it ended.
	Outcome string   `json:"outcome,omitempty"`
	Usage   *Usage   `json:"usage,omitempty"`
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Waiting says what the message waits for, when it does (a queue
	// ahead of it, a prompt a person must answer).
	Waiting string `json:"waiting,omitempty"`
}

// Message statuses of MessageOutcome.
const (
	MessageQueued    = "queued"
	MessageInFlight  = "in_flight"
	MessageDelivered = "delivered"
	MessageFailed    = "failed"
)
