package codex

import (
	"encoding/json"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.EventStreamer = Codex{}

// noTerminalEvent is the reason of a stream that stated no outcome and no
// error.
const noTerminalEvent = "the stream ended without turn.completed or turn.failed"

// NewEventStream reads `codex exec --json` (docs/harness-behaviour/codex.md,
// "Headless runs"). codex's stream states its own outcome: turn.completed
// succeeds, turn.failed fails. Its error events ("Reconnecting... 1/5")
// and error items are retries and notices it recovers from, recorded as
// warnings: an error followed by turn.completed is a success. Unlike
// claude and opencode, an error event alone does not fail the run.
func (Codex) NewEventStream() harness.EventStream { return &stream{} }

type stream struct {
	threadID  string
	reply     string
	lastError string
	warnings  harness.Warnings

	// outcome is the last terminal event: "" (none), "completed", "failed".
	outcome string
	failMsg string
	usage   *harness.Usage
}

type event struct {
	Type     harness.Text    `json:"type"`
	ThreadID harness.Text    `json:"thread_id"`
	Message  harness.Text    `json:"message"`
	Error    json.RawMessage `json:"error"`
	Item     *struct {
		Type    harness.Text `json:"type"`
		Text    harness.Text `json:"text"`
		Message harness.Text `json:"message"`
	} `json:"item"`
	Usage *struct {
		InputTokens           harness.Count `json:"input_tokens"`
		CachedInputTokens     harness.Count `json:"cached_input_tokens"`
		CacheWriteInputTokens harness.Count `json:"cache_write_input_tokens"`
		OutputTokens          harness.Count `json:"output_tokens"`
	} `json:"usage"`
}

func (s *stream) Line(line []byte) {
	if !harness.JSONObjectLine(line) {
		return
	}
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" {
			s.threadID = string(ev.ThreadID)
		}
	case "item.completed":
		if ev.Item == nil {
			return
		}
		switch ev.Item.Type {
		case "agent_message":
			s.reply = harness.ClipText(string(ev.Item.Text), harness.MaxReplyBytes)
		case "error":
			// Config warnings, deprecation notices, model reroutes: not fatal.
			s.warnings.Add(string(ev.Item.Message))
		}
	case "error":
		msg := string(ev.Message)
		if msg == "" {
			msg = harness.MessageText(ev.Error)
		}
		if msg != "" {
			s.lastError = harness.ClipText(msg, harness.MaxErrorBytes)
			s.warnings.Add(msg)
		}
	case "turn.completed":
		s.outcome, s.failMsg = "completed", ""
		if u := ev.Usage; u != nil {
			// Running totals of the thread; the last one stands.
			s.usage = &harness.Usage{
				InputTokens:      int64(u.InputTokens),
				OutputTokens:     int64(u.OutputTokens),
				CacheReadTokens:  int64(u.CachedInputTokens),
				CacheWriteTokens: int64(u.CacheWriteInputTokens),
			}
		}
	case "turn.failed":
		s.outcome = "failed"
		s.failMsg = harness.ClipText(harness.MessageText(ev.Error), harness.MaxErrorBytes)
		if s.failMsg == "" {
			s.failMsg = s.lastError
		}
		if s.failMsg == "" {
			s.failMsg = "turn failed"
		}
	}
}

func (s *stream) Result() harness.RunResult {
	r := harness.RunResult{SessionID: s.threadID, Reply: s.reply, Warnings: s.warnings.List(), Usage: s.usage}
	switch s.outcome {
	case "completed":
		r.Succeeded = true
	case "failed":
		r.Error = s.failMsg
	default:
		r.Error = s.lastError
		if r.Error == "" {
			r.Error = noTerminalEvent
		}
	}
	return r
}
