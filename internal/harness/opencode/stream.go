package opencode

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.EventStreamer = Opencode{}

// maxParts bounds the text parts kept of one message (each is clipped as a
// whole to harness.MaxReplyBytes).
const maxParts = 64

// NewEventStream reads `opencode run --format json`
// (docs/harness-behaviour/opencode.md, "Headless runs"): every event
// carries the sessionID; any error event fails the run, whatever the exit
// code; the turn ends at EOF (there is no end event to wait for), so a
// stream of the session with no error succeeded; tokens and cost are
// summed over step_finish events.
func (Opencode) NewEventStream() harness.EventStream { return &stream{} }

type stream struct {
	sessionID string
	errMsg    string
	// limited: the error was the API's 429 (opencode waited its
	// retry-after out itself and gave up); resetsAt from its headers.
	limited  bool
	resetsAt time.Time

	// The last message that had text: its id and its parts in order.
	msgID string
	parts []textPart
	size  int // bytes kept in parts

	usage    *harness.Usage
	cost     float64
	haveCost bool
}

type textPart struct {
	id   string
	text []byte // grown in place: deltas may be many and small
}

type event struct {
	Type      harness.Text    `json:"type"`
	SessionID harness.Text    `json:"sessionID"`
	Timestamp harness.Number  `json:"timestamp"` // Unix ms
	Error     json.RawMessage `json:"error"`
	Part      *struct {
		ID        harness.Text   `json:"id"`
		MessageID harness.Text   `json:"messageID"`
		Type      harness.Text   `json:"type"`
		Text      harness.Text   `json:"text"`
		Cost      harness.Number `json:"cost"`
		Tokens    *struct {
			Input  harness.Count `json:"input"`
			Output harness.Count `json:"output"`
			Cache  struct {
				Read  harness.Count `json:"read"`
				Write harness.Count `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"part"`
}

func (s *stream) Line(line []byte) {
	var ev event
	if !harness.DecodeEvent(line, &ev) {
		return
	}
	ev.SessionID = harness.Text(harness.StreamID(string(ev.SessionID)))
	if ev.SessionID != "" && s.sessionID == "" {
		s.sessionID = string(ev.SessionID)
	}
	switch ev.Type {
	case "error":
		if s.errMsg == "" {
			s.errMsg = harness.ClipText(errorText(ev.Error), harness.MaxErrorBytes)
			// The API's 429 (testdata/streams/limited_*): opencode waits
			// each retry-after out itself and emits this once it gives
			// up; read as the TUI's turn error is (signal.go).
			var at int64
			if ev.Timestamp.Set {
				at = int64(ev.Timestamp.Value)
			}
			s.limited, s.resetsAt = limitOf(ev.Error, at)
		}
	case "text":
		if p := ev.Part; p != nil {
			s.addText(string(p.MessageID), string(p.ID), string(p.Text))
		}
	case "step_finish":
		p := ev.Part
		if p == nil {
			return
		}
		if p.Cost.Set {
			s.cost += p.Cost.Value
			s.haveCost = true
		}
		if t := p.Tokens; t != nil {
			if s.usage == nil {
				s.usage = &harness.Usage{}
			}
			s.usage.InputTokens += int64(t.Input)
			s.usage.OutputTokens += int64(t.Output)
			s.usage.CacheReadTokens += int64(t.Cache.Read)
			s.usage.CacheWriteTokens += int64(t.Cache.Write)
		}
	}
}

// addText adds a text event to its message: the classic path sends each
// part once, whole; the v2 path sends deltas of one part under its id.
func (s *stream) addText(msgID, partID, text string) {
	if text == "" {
		return
	}
	if msgID != s.msgID || s.parts == nil {
		s.msgID, s.parts, s.size = msgID, nil, 0
	}
	i := len(s.parts) - 1
	for ; i >= 0 && s.parts[i].id != partID; i-- {
	}
	if i < 0 {
		if len(s.parts) >= maxParts || s.size >= harness.MaxReplyBytes {
			return
		}
		s.parts = append(s.parts, textPart{id: partID})
		i = len(s.parts) - 1
	}
	room := harness.MaxReplyBytes - s.size
	if room <= 0 {
		return
	}
	add := text[:min(len(text), room)]
	s.parts[i].text = append(s.parts[i].text, add...)
	s.size += len(add)
}

// errorText is an error event's reason, in both shapes:
// {name, data:{message}} (classic) and {type, message} (v2).
func errorText(raw json.RawMessage) string {
	var o struct {
		Name harness.Text `json:"name"`
		Data struct {
			Message harness.Text `json:"message"`
		} `json:"data"`
	}
	msg := harness.MessageText(raw)
	if json.Unmarshal(raw, &o) == nil && o.Name != "" && o.Data.Message != "" {
		msg = string(o.Name) + ": " + string(o.Data.Message)
	}
	if msg == "" {
		msg = "opencode reported an error"
	}
	return msg
}

func (s *stream) Result() harness.RunResult {
	r := harness.RunResult{SessionID: s.sessionID, Usage: s.usage, Limited: s.limited, ResetsAt: s.resetsAt}
	if s.haveCost {
		c := s.cost
		r.CostUSD = &c
	}
	texts := make([]string, 0, len(s.parts))
	for _, p := range s.parts {
		if len(p.text) > 0 {
			texts = append(texts, strings.ToValidUTF8(string(p.text), ""))
		}
	}
	r.Reply = harness.ClipText(strings.Join(texts, "\n"), harness.MaxReplyBytes)
	switch {
	case s.errMsg != "":
		r.Error = s.errMsg
	case s.sessionID != "":
		r.Succeeded = true
	}
	return r
}
