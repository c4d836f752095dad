package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.ConversationReader = Codex{}

// Conversation reads the turns of thread id from its rollout, the file
// UserTurns and TurnActivity read, through the same cache: a turn runs
// from its task_started (or, with none, the user message that opens it)
// to its task_complete (ok; an error with codex's words when it carries
// one) or turn_aborted (interrupted); one with no end yet is running.
//
//   - User: the turn's user messages, of the first kind it holds (see
//     UserTurns), joined with a blank line (a message queued into a
//     running turn is folded into it).
//   - Reply: task_complete's last_agent_message, else the turn's last
//     agent message (item_completed AgentMessage, else agent_message
//     events, else assistant items other than a compaction's summary).
//   - Tools: the response_item calls (function_call, custom_tool_call,
//     local_shell_call, web_search_call), in order; MCP tools are
//     function_calls named by codex.
//   - Usage: the growth of token_count's total_token_usage over the turn.
//     Not the sum of last_token_usage: codex repeats the previous total
//     with the previous last_token_usage at the start of a turn that
//     then calls no model (an interrupted or refused turn, a queued
//     message), which a sum would count twice (testdata/records_v0.171.0).
//
// A compaction (/compact) is a turn of its own, with no user text.
func (Codex) Conversation(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Turn, error) {
	if id == "" {
		return nil, nil
	}
	paths, err := rolloutsFor(ctx, q, id, time.Time{})
	if err != nil || len(paths) == 0 {
		return nil, err
	}
	var out []harness.Turn
	err = withRollout(paths[0], time.Time{}, func(s *rolloutState) {
		out = s.conv.turnsCopy()
	})
	return out, err
}

// conversation is the turns read so far of one rollout (read from its
// start: only a state read with no since has one).
type conversation struct {
	turns []harness.Turn
	open  *openTurn // the last turn, while it has not ended

	total tokenUsage // the last total_token_usage seen
}

// openTurn is the turn being read: its texts by kind (see userTurnOf for
// users; replies as in Conversation), kept until it ends.
type openTurn struct {
	turn    harness.Turn
	users   [3]string
	replies [3]string
	final   *string // task_complete's last_agent_message
	lastAt  time.Time
	failure string // an error event's words, for a task_complete that names none
}

type tokenUsage struct {
	Input  int64 `json:"input_tokens"`
	Cached int64 `json:"cached_input_tokens"`
	Output int64 `json:"output_tokens"`
}

func (u tokenUsage) sub(v tokenUsage) (tokenUsage, bool) {
	d := tokenUsage{u.Input - v.Input, u.Cached - v.Cached, u.Output - v.Output}
	return d, d.Input >= 0 && d.Cached >= 0 && d.Output >= 0
}

// convPayloads are the payload types Conversation reads; every other line
// (tool outputs above all, which can be megabytes) is passed over by its
// head, unparsed.
var convPayloads = map[string]bool{
	"task_started": true, "task_complete": true, "turn_aborted": true, "error": true,
	"token_count": true, "item_completed": true, "user_message": true, "agent_message": true,
	"message": true, "function_call": true, "custom_tool_call": true, "local_shell_call": true,
	"web_search_call": true,
}

// mayHoldConv is the test before a line is parsed for the conversation:
// by its head where it names the payload's type (headTypes), else by
// the same names anywhere in it (codex writes them unescaped).
func mayHoldConv(line []byte) bool {
	switch payload, sub := headTypes(line); {
	case payload == "item_completed" && sub != "":
		return sub == "UserMessage" || sub == "AgentMessage"
	case payload == "message" && sub != "":
		return sub == "user" || sub == "assistant" // not codex's developer instructions
	case payload != "":
		return convPayloads[payload]
	}
	for t := range convPayloads {
		if bytes.Contains(line, []byte(`"`+t+`"`)) {
			return true
		}
	}
	return false
}

// take reads one whole line that started at offset of the file.
func (c *conversation) take(line []byte, offset int64) {
	if !mayHoldConv(line) {
		return
	}
	var l rolloutLine
	if json.Unmarshal(line, &l) != nil {
		return
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	p := &l.Payload
	if l.Type == "event_msg" {
		switch p.Type {
		case "task_started":
			c.endUnrecorded()
			c.start(p.TurnID, at, offset)
			return
		case "task_complete":
			t := c.at(at, offset)
			t.final = p.LastAgentMessage
			var e *turnError
			if len(p.Error) > 0 && json.Unmarshal(p.Error, &e) == nil && e != nil {
				t.turn.Error, _, _ = e.read(at)
			} else if t.failure != "" && (t.final == nil || *t.final == "") {
				t.turn.Error = t.failure
			}
			if t.turn.Error != "" {
				c.end(harness.OutcomeError, at)
			} else {
				c.end(harness.OutcomeOK, at)
			}
			return
		case "turn_aborted":
			c.at(at, offset)
			c.end(harness.OutcomeInterrupted, at)
			return
		case "error":
			if c.open != nil { // an error outside a turn is no turn
				c.at(at, offset).failure, _, _ = turnError{Message: p.Message}.read(at) // cut as a task_complete's
			}
			return
		case "token_count":
			c.usage(l)
			return
		}
	}
	if kind, text, ok := userTurnOf(l); ok {
		t := c.at(at, offset)
		if t.users[kind] != "" {
			t.users[kind] = harness.AppendClipped(t.users[kind], "\n\n", harness.TurnTextMax)
		}
		t.users[kind] = harness.AppendClipped(t.users[kind], text, harness.TurnTextMax)
		return
	}
	if kind, text, ok := replyOf(l); ok {
		t := c.at(at, offset)
		t.replies[kind] = harness.ClipText(text, harness.TurnTextMax)
		return
	}
	if name, input, ok := toolOf(l); ok {
		t := c.at(at, offset)
		t.turn.Tools = append(t.turn.Tools, harness.ToolCall{Name: name, Input: input})
	}
}

// replyOf classifies an agent message: kind 0 item_completed AgentMessage,
// 1 event_msg agent_message, 2 an assistant response_item (not a
// compaction's summary).
func replyOf(l rolloutLine) (kind int, text string, ok bool) {
	p := l.Payload
	switch {
	case l.Type == "event_msg" && p.Type == "item_completed" && p.Item.Type == "AgentMessage":
		var parts []string
		for _, c := range p.Item.Content {
			if strings.EqualFold(c.Type, "text") {
				parts = append(parts, c.Text)
			}
		}
		return 0, strings.Join(parts, ""), len(parts) > 0
	case l.Type == "event_msg" && p.Type == "agent_message":
		return 1, p.Message, true
	case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant" && !l.Metadata.CompactionOutput:
		var parts []string
		for _, c := range p.Content {
			if c.Type == "output_text" || c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		return 2, strings.Join(parts, ""), len(parts) > 0
	}
	return 0, "", false
}

// toolOf is a tool call's name and input (compact JSON, cut at
// ToolInputMax). function_call's arguments are JSON text in a string;
// custom_tool_call's input is free text (a patch), kept as a JSON string.
func toolOf(l rolloutLine) (name, input string, ok bool) {
	p := l.Payload
	if l.Type != "response_item" {
		return "", "", false
	}
	var raw []byte
	switch p.Type {
	case "function_call":
		name = p.Name
		var s string
		if json.Unmarshal(p.Arguments, &s) == nil {
			raw = []byte(s)
		} else {
			raw = p.Arguments
		}
	case "custom_tool_call":
		name, raw = p.Name, p.Input
	case "local_shell_call":
		name, raw = "local_shell", p.Action
	case "web_search_call":
		name, raw = "web_search", p.Action
	default:
		return "", "", false
	}
	return name, compactInput(raw), true
}

func compactInput(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		// Not JSON (a malformed arguments string): its text, as a JSON string.
		q, _ := json.Marshal(string(raw[:min(len(raw), harness.ToolInputMax+8)]))
		return harness.ClipText(string(q), harness.ToolInputMax)
	}
	return harness.ClipText(b.String(), harness.ToolInputMax)
}

// start opens a turn at a task_started.
func (c *conversation) start(turnID string, at time.Time, offset int64) {
	id := turnID
	if id == "" {
		id = "@" + strconv.FormatInt(offset, 10)
	}
	c.open = &openTurn{turn: harness.Turn{ID: id, StartedAt: at, Outcome: harness.OutcomeRunning}, lastAt: at}
}

// at is the open turn, opened by this record (offset) when there is none:
// an earlier codex wrote no task_started, and its user message opens the
// turn.
func (c *conversation) at(at time.Time, offset int64) *openTurn {
	if c.open == nil {
		c.start("", at, offset)
	}
	if !at.IsZero() {
		c.open.lastAt = at
	}
	return c.open
}

// end closes the open turn with outcome (at zero: when its last record
// was written).
func (c *conversation) end(outcome harness.TurnOutcome, at time.Time) {
	t := c.open
	if t == nil {
		return
	}
	if at.IsZero() {
		at = t.lastAt
	}
	done := t.snapshot()
	done.Outcome, done.EndedAt = outcome, at
	c.turns = append(c.turns, done)
	c.open = nil
}

// endUnrecorded closes an open turn that a new one followed without an
// end of its own (codex was stopped in it; an earlier codex wrote an
// error event and no task_complete): failed if an error was recorded,
// else interrupted, ended at its last record.
func (c *conversation) endUnrecorded() {
	if c.open == nil {
		return
	}
	if f := c.open.failure; f != "" {
		c.open.turn.Error = f
		c.end(harness.OutcomeError, time.Time{})
		return
	}
	c.end(harness.OutcomeInterrupted, time.Time{})
}

// snapshot is the turn as read so far, its texts chosen by kind.
func (t *openTurn) snapshot() harness.Turn {
	out := t.turn
	for _, u := range t.users {
		if u != "" {
			out.User = u
			break
		}
	}
	if t.final != nil && *t.final != "" {
		out.Reply = harness.ClipText(*t.final, harness.TurnTextMax)
	} else {
		for _, r := range t.replies {
			if r != "" {
				out.Reply = r
				break
			}
		}
	}
	return out
}

// usage adds a token_count's growth of the thread's total to the open
// turn. A total that went down (codex started counting again) counts its
// last_token_usage instead.
func (c *conversation) usage(l rolloutLine) {
	info := l.Payload.Info
	if info == nil || info.Total == nil {
		return
	}
	d, ok := info.Total.sub(c.total)
	if !ok {
		d = tokenUsage{}
		if info.Last != nil {
			d = *info.Last
		}
	}
	c.total = *info.Total
	if c.open == nil || d == (tokenUsage{}) {
		return
	}
	c.open.turn.Usage = c.open.turn.Usage.Add(&harness.Usage{
		InputTokens: d.Input, OutputTokens: d.Output, CacheReadTokens: d.Cached,
	})
}

// turnsCopy is the turns read so far, the open one last: copies the
// caller may keep.
func (c *conversation) turnsCopy() []harness.Turn {
	out := make([]harness.Turn, 0, len(c.turns)+1)
	for _, t := range c.turns {
		out = append(out, cloneTurn(t))
	}
	if c.open != nil {
		out = append(out, cloneTurn(c.open.snapshot()))
	}
	return out
}

func cloneTurn(t harness.Turn) harness.Turn {
	t.Tools = slices.Clone(t.Tools)
	if t.Usage != nil {
		u := *t.Usage
		t.Usage = &u
	}
	return t
}
