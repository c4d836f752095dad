package pi

import (
	"encoding/json"
	"fmt"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.EventStreamer = Pi{}

// NewEventStream reads `pi --mode json` (docs/harness-behaviour/pi.md,
// "Headless runs"; testdata/streams). The first line is the session header
// ({"type":"session","id":…}); then pi's events. pi exits 0 whatever the
// turn's outcome, so the stream decides it: the last agent_end's last
// assistant message — stopReason "stop" (or "length") succeeds, "error"
// fails with its errorMessage, "aborted" fails. An error pi retries
// (auto_retry_start, then another agent_start) is a warning; a retry that
// gave up is auto_retry_end with success false.
func (Pi) NewEventStream() harness.EventStream { return &stream{} }

type stream struct {
	sessionID string
	warnings  harness.Warnings
	reply     string
	usage     *harness.Usage
	cost      *float64

	last    *streamMessage // the last assistant message of the stream
	outcome string         // "", "completed", "failed"
	failMsg string
}

type streamMessage struct {
	Role         harness.Text    `json:"role"`
	Content      json.RawMessage `json:"content"`
	StopReason   harness.Text    `json:"stopReason"`
	ErrorMessage harness.Text    `json:"errorMessage"`
	Usage        *rawUsage       `json:"usage"`
}

type streamEvent struct {
	Type         harness.Text   `json:"type"`
	ID           harness.Text   `json:"id"`
	Message      *streamMessage `json:"message"`
	Attempt      harness.Count  `json:"attempt"`
	MaxAttempts  harness.Count  `json:"maxAttempts"`
	ErrorMessage harness.Text   `json:"errorMessage"`
	FinalError   harness.Text   `json:"finalError"`
	Success      harness.Flag   `json:"success"`
}

func (s *stream) Line(line []byte) {
	var ev streamEvent
	if !harness.DecodeEvent(line, &ev) {
		return
	}
	switch ev.Type {
	case "session":
		if id := harness.StreamID(string(ev.ID)); id != "" && s.sessionID == "" {
			s.sessionID = id
		}
	case "message_end":
		m := ev.Message
		if m == nil || m.Role != "assistant" {
			return
		}
		s.last = m
		var e entry
		text := contentText(m.Content, &e)
		if len(e.tools) > 0 || text != "" {
			s.reply = harness.ClipText(text, harness.MaxReplyBytes)
		}
		if u := m.Usage; u != nil {
			s.usage = s.usage.Add(&harness.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite})
			if u.Cost != nil && u.Cost.Total != nil {
				c := *u.Cost.Total
				if s.cost != nil {
					c += *s.cost
				}
				s.cost = &c
			}
		}
	case "agent_end":
		s.outcome, s.failMsg = "completed", ""
		if m := s.last; m != nil {
			switch m.StopReason {
			case "error":
				s.outcome = "failed"
				s.failMsg = harness.ClipText(string(m.ErrorMessage), harness.MaxErrorBytes)
				if s.failMsg == "" {
					s.failMsg = "the model call failed"
				}
			case "aborted":
				s.outcome, s.failMsg = "failed", "the turn was aborted"
			}
		}
	case "auto_retry_start":
		// pi tries again: the failure before it is a warning.
		s.outcome, s.failMsg = "", ""
		s.warnings.Add(fmt.Sprintf("%s (retry %d/%d)", ev.ErrorMessage, ev.Attempt, ev.MaxAttempts))
	case "auto_retry_end":
		if !bool(ev.Success) && ev.FinalError != "" {
			s.outcome = "failed"
			s.failMsg = harness.ClipText(string(ev.FinalError), harness.MaxErrorBytes)
		}
	case "compaction_end":
		if ev.ErrorMessage != "" {
			s.warnings.Add("compaction: " + string(ev.ErrorMessage))
		}
	}
}

func (s *stream) Result() harness.RunResult {
	r := harness.RunResult{SessionID: s.sessionID, Reply: s.reply, Warnings: s.warnings.List(), Usage: s.usage, CostUSD: s.cost}
	switch s.outcome {
	case "completed":
		r.Succeeded = true
	case "failed":
		r.Error = s.failMsg
		// A rate or usage limit pi gave up retrying: limited, not
		// failed. pi names no reset (testdata/streams/limited_*: the
		// server's retry-after is not in its stream).
		r.Limited = limitPattern().MatchString(s.failMsg)
	}
	// No agent_end: nothing stated. The runner then goes by the exit
	// status (a crash's own words), else "the stream ended without a
	// result".
	if !r.Succeeded {
		r.Reply = ""
	}
	return r
}
