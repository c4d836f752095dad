package codex

import (
	"encoding/json"
	"regexp"
	"sync"
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
		r.Limited, r.ResetsAt = streamLimit(s.failMsg, time.Now())
	default:
		r.Error = s.lastError
		if r.Error == "" {
			r.Error = noTerminalEvent
		}
	}
	return r
}

// streamLimitWords are how codex words a usage or rate limit in exec's
// stream: its UsageLimitReached error ("You've hit your usage limit. …
// try again at 2:47 PM.") and the 429 it gives up on after its retries
// ("exceeded retry limit, last status: 429 Too Many Requests").
var streamLimitWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)usage limit|rate limit|usage_limit_reached|429 Too Many Requests`)
})

// streamLimit is whether a failed run's words say a limit, and its reset
// as far as they say (codex words it in local time, to the minute).
func streamLimit(msg string, now time.Time) (bool, time.Time) {
	if !streamLimitWords().MatchString(msg) {
		return false, time.Time{}
	}
	return true, retryAt(msg, now.In(codexZone()))
}
