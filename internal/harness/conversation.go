package harness

import (
	"context"
	"time"
)

// ConversationReader is implemented by adapters that can read a whole
// conversation back from the harness's own record (claude's transcript,
// codex's rollout, opencode's session store), turn by turn. It is what
// `leo agent conversation` and `leo agent send --reply` read: never the
// pane, which redraws, wraps and forgets.
type ConversationReader interface {
	// Conversation returns the turns of conversation id (never ""),
	// oldest first. q carries the workspace and the environment the
	// harness runs with (its home); q.Since and q.Exclude are not used.
	// A conversation with no record yet is no turns and no error.
	//
	// Readers keep what they parsed (FileCache) and read only what was
	// appended since the last call, so a conversation asked about every
	// second costs the bytes it grew by; memory is bounded by the turns'
	// texts (each cut with ClipText at TurnTextMax, tool inputs at ToolInputMax), never
	// by the record's size, which tool outputs can make many megabytes.
	Conversation(ctx context.Context, q SessionQuery, id string) ([]Turn, error)
}

// Turn is one user message and everything the harness did for it, up to
// the next user message.
type Turn struct {
	// ID is the harness's own id for the turn (its user message's id, or
	// the turn id where the record has one): stable across reads.
	ID        string
	StartedAt time.Time
	// EndedAt is zero while the turn runs.
	EndedAt time.Time
	// User is the user message as the harness stored it. Several inputs
	// of one turn (a message typed while the model worked) are joined
	// with a blank line.
	User string
	// Reply is the assistant's final text of the turn: its last text
	// after the last tool call, "" when it gave none (yet).
	Reply string
	// Tools are the tool calls of the turn, in order.
	Tools   []ToolCall
	Outcome TurnOutcome
	// Error is the harness's words for a turn that failed.
	Error string
	// Usage sums the tokens the record reports for the turn; nil when it
	// reports none. CostUSD likewise, where the harness reports a cost.
	Usage   *Usage
	CostUSD *float64
}

// ToolCall is one tool the model ran in a turn.
type ToolCall struct {
	Name string
	// Input is the tool's input as compact JSON text, cut at ToolInputMax
	// bytes (a cut input ends with "…").
	Input string
}

// TurnOutcome is how a turn ended, by the record.
type TurnOutcome string

const (
	OutcomeOK          TurnOutcome = "ok"
	OutcomeError       TurnOutcome = "error"
	OutcomeInterrupted TurnOutcome = "interrupted"
	OutcomeRunning     TurnOutcome = "running"
)

const (
	// TurnTextMax bounds a turn's user and reply texts kept in memory.
	TurnTextMax = 256 << 10
	// ToolInputMax bounds a tool call's input kept in memory.
	ToolInputMax = 2 << 10
)

// Add sums u and v, nil when both are.
func (u *Usage) Add(v *Usage) *Usage {
	switch {
	case u == nil && v == nil:
		return nil
	case u == nil:
		c := *v
		return &c
	case v == nil:
		c := *u
		return &c
	}
	return &Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}
