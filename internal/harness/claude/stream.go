package claude

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.EventStreamer = Claude{}

// NewEventStream reads `claude -p … --output-format stream-json --verbose`
// (docs/harness-behaviour/claude.md, "Headless runs"): the outcome is the
// final result event's; is_error true fails even with subtype success; a
// top-level error event fails; a stream without a result states nothing.
func (Claude) NewEventStream() harness.EventStream { return &stream{now: time.Now} }

type stream struct {
	now       func() time.Time // resolves a reset text ("resets 3pm")
	initID    string
	anyID     string
	lastText  string // the last top-level assistant message's text
	errorText string // a top-level error event's message
	warnings  harness.Warnings

	haveResult bool
	result     event  // the result event, its Message and Errors dropped
	resultErr  string // its failure reason, if it is one
}

// event is the union of the fields leo reads; everything else is skipped.
// Fields whose type might drift are read leniently (harness.Text, Count…),
// so one odd field never hides the event.
type event struct {
	Type            harness.Text      `json:"type"`
	Subtype         harness.Text      `json:"subtype"`
	SessionID       harness.Text      `json:"session_id"`
	ParentToolUseID harness.Text      `json:"parent_tool_use_id"`
	Message         *assistantMessage `json:"message"`
	// system/api_retry
	Attempt     harness.Count   `json:"attempt"`
	MaxRetries  harness.Count   `json:"max_retries"`
	ErrorStatus harness.Count   `json:"error_status"`
	Error       json.RawMessage `json:"error"`
	// result
	IsError      harness.Flag    `json:"is_error"`
	APIStatus    harness.Count   `json:"api_error_status"`
	Result       harness.Text    `json:"result"`
	Errors       json.RawMessage `json:"errors"`
	TotalCostUSD harness.Number  `json:"total_cost_usd"`
	Usage        *struct {
		InputTokens              harness.Count `json:"input_tokens"`
		OutputTokens             harness.Count `json:"output_tokens"`
		CacheReadInputTokens     harness.Count `json:"cache_read_input_tokens"`
		CacheCreationInputTokens harness.Count `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

type assistantMessage struct {
	Content []struct {
		Type harness.Text `json:"type"`
		Text harness.Text `json:"text"`
	} `json:"content"`
}

func (s *stream) Line(line []byte) {
	var ev event
	if !harness.DecodeEvent(line, &ev) {
		return
	}
	ev.SessionID = harness.Text(harness.StreamID(string(ev.SessionID)))
	if ev.SessionID != "" && s.anyID == "" {
		s.anyID = string(ev.SessionID)
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			if ev.SessionID != "" {
				s.initID = string(ev.SessionID)
			}
		case "api_retry":
			// claude retries a failed API call itself; the result event
			// says whether it got through.
			msg := fmt.Sprintf("API retry %d/%d", ev.Attempt, ev.MaxRetries)
			if ev.ErrorStatus != 0 {
				msg += fmt.Sprintf(": status %d", ev.ErrorStatus)
			}
			if e := harness.MessageText(ev.Error); e != "" {
				msg += " " + e
			}
			s.warnings.Add(msg)
		}
	case "assistant":
		// A subagent's messages carry the tool use they answer; the reply
		// is the main conversation's.
		if ev.ParentToolUseID != "" {
			return
		}
		if ev.Message == nil {
			return
		}
		text := ""
		for _, c := range ev.Message.Content {
			if c.Type == "text" {
				text = harness.AppendClipped(text, string(c.Text), harness.MaxReplyBytes)
			}
		}
		if text != "" {
			s.lastText = text
		}
	case "result":
		s.resultErr = resultError(ev)
		ev.Message, ev.Errors = nil, nil
		ev.Result = harness.Text(harness.ClipText(string(ev.Result), harness.MaxReplyBytes))
		s.haveResult, s.result = true, ev
		if ev.SessionID != "" {
			s.initID = string(ev.SessionID)
		}
	case "error":
		msg := harness.MessageText(ev.Error)
		if msg == "" {
			var m struct {
				Message harness.Text `json:"message"`
			}
			_ = json.Unmarshal(line, &m)
			msg = string(m.Message)
		}
		if msg == "" {
			msg = "claude reported an error event"
		}
		if s.errorText == "" {
			s.errorText = harness.ClipText(msg, harness.MaxErrorBytes)
		}
	}
}

func (s *stream) Result() harness.RunResult {
	r := harness.RunResult{SessionID: s.initID, Warnings: s.warnings.List(), Reply: s.lastText}
	if r.SessionID == "" {
		r.SessionID = s.anyID
	}
	if s.haveResult {
		res := s.result
		if u := res.Usage; u != nil {
			r.Usage = &harness.Usage{
				InputTokens:      int64(u.InputTokens),
				OutputTokens:     int64(u.OutputTokens),
				CacheReadTokens:  int64(u.CacheReadInputTokens),
				CacheWriteTokens: int64(u.CacheCreationInputTokens),
			}
		}
		if res.TotalCostUSD.Set {
			c := res.TotalCostUSD.Value
			r.CostUSD = &c
		}
		if res.IsError || res.Subtype != "success" {
			r.Error = s.resultErr
			r.Limited, r.ResetsAt = s.limit(res)
		} else {
			r.Succeeded = true
			if res.Result != "" {
				r.Reply = string(res.Result)
			}
		}
	}
	if s.errorText != "" {
		r.Succeeded = false
		r.Error = s.errorText
	}
	return r
}

// limit reads a failed result as a usage or rate limit: the API's 429
// (claude gave up waiting: it waits out a short retry-after itself, as
// testdata/streams/limitonce_* shows, and not a long one, limited_*), or a
// subscription's "You've hit your … limit · resets 3pm" (limit.go).
func (s *stream) limit(res event) (bool, time.Time) {
	text := string(res.Result)
	hit := strings.Contains(text, "hit your") && strings.Contains(text, "limit")
	if res.APIStatus != 429 && !hit {
		return false, time.Time{}
	}
	return true, resetsAt(text, s.now())
}

// resultError is a failed result's reason: its text, else its errors,
// else its subtype.
func resultError(res event) string {
	msg := strings.TrimSpace(string(res.Result))
	if msg == "" {
		msg = harness.MessageText(res.Errors)
	}
	if msg == "" {
		msg = "claude ended with " + string(res.Subtype)
		if res.Subtype == "" {
			msg = "claude ended with an error result"
		}
	}
	return harness.ClipText(msg, harness.MaxErrorBytes)
}
