package codex

import (
	"encoding/json"
	"strings"
	"time"

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
func (Codex) NewEventStream() harness.EventStream { return &stream{now: time.Now} }

type stream struct {
	now       func() time.Time // the day a "try again at 6:27 AM." is on
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
	var ev event
	if !harness.DecodeEvent(line, &ev) {
		return
	}
	ev.ThreadID = harness.Text(harness.StreamID(string(ev.ThreadID)))
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
		r.Limited, r.ResetsAt = s.limit(s.failMsg)
	default:
		r.Error = s.lastError
		if r.Error == "" {
			r.Error = noTerminalEvent
		}
	}
	return r
}

// limit reads a failed turn's words as a usage limit. codex exec --json
// carries no codex_error_info: only the words of its usage_limit_reached
// ("You’ve hit your usage limit. … try again at 6:27 AM.", captured in
// testdata/streams/limited_*) or of a rate limit it gave up on (429).
func (s *stream) limit(msg string) (bool, time.Time) {
	lower := strings.ToLower(msg)
	if !strings.Contains(lower, "usage limit") && !strings.Contains(lower, "429 too many requests") {
		return false, time.Time{}
	}
	at := retryAt(msg, s.now().In(codexZone()))
	if !at.IsZero() {
		// codex names the minute (its resets_at cut to %M): the limit is
		// over by the end of it.
		at = at.Add(time.Minute)
	}
	return true, at
}
