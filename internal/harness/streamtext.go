package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on what an EventStream keeps of a run: a stream may be any size,
// and what it says goes into history records and logs.
const (
	MaxReplyBytes   = 64 << 10
	MaxErrorBytes   = 4 << 10
	MaxWarnings     = 16
	MaxWarningBytes = 1 << 10
)

// ClipText returns s cut to at most max bytes, at a rune boundary, ending in
// "…" when it was cut.
func ClipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	n := max - len(ellipsis)
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}

// AppendClipped appends add to s, keeping the result within max bytes
// (cut as ClipText cuts). It never holds more than max bytes of a stream's
// text, however many pieces arrive.
func AppendClipped(s, add string, max int) string {
	if len(s) >= max {
		return s
	}
	if len(s)+len(add) <= max {
		return s + add
	}
	return ClipText(s+add[:min(len(add), max-len(s)+utf8.UTFMax)], max)
}

// Warnings collects the errors a harness reported and recovered from, at
// most MaxWarnings of them (each clipped to MaxWarningBytes); the rest are
// counted.
type Warnings struct {
	list    []string
	dropped int
}

// Add records one warning; an empty one is ignored.
func (w *Warnings) Add(msg string) {
	if msg == "" {
		return
	}
	if len(w.list) >= MaxWarnings-1 {
		w.dropped++
		return
	}
	w.list = append(w.list, ClipText(msg, MaxWarningBytes))
}

// List is the warnings in order, with a last line counting those left out;
// nil when there were none.
func (w *Warnings) List() []string {
	if w.dropped == 0 {
		return w.list
	}
	out := append([]string(nil), w.list...)
	return append(out, fmt.Sprintf("(%d more warnings)", w.dropped))
}

// JSONObjectLine reports whether line may be a JSON object (its first
// non-space byte is '{'): anything else (a banner, a cut line, noise) is
// skipped without decoding.
func JSONObjectLine(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r")
	return len(line) > 0 && line[0] == '{'
}

// Count is a token count read leniently from an event: a JSON number
// (fractions truncated), a numeric string, or anything else as 0 — a
// drifting field never makes the whole event unreadable.
type Count int64

func (c *Count) UnmarshalJSON(b []byte) error {
	*c = 0
	b = bytes.Trim(b, `"`)
	if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= 0 && f < 1<<62 {
		*c = Count(f)
	}
	return nil
}

// Number is a float read leniently (as Count is); Set says one was there.
type Number struct {
	Value float64
	Set   bool
}

func (n *Number) UnmarshalJSON(b []byte) error {
	*n = Number{}
	b = bytes.Trim(b, `"`)
	if f, err := strconv.ParseFloat(string(b), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		*n = Number{Value: f, Set: true}
	}
	return nil
}

// Text is a string read leniently: a JSON string as is, null as "", any
// other value as its JSON text.
type Text string

func (t *Text) UnmarshalJSON(b []byte) error {
	// Most strings have no escapes: take them as they are.
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && plainJSONString(b[1:n-1]) {
		*t = Text(b[1 : n-1])
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	*t = Text(strings.ToValidUTF8(string(b), "\uFFFD"))
	return nil
}

// plainJSONString: s needs no decoding (no escape, no control byte,
// valid UTF-8).
func plainJSONString(s []byte) bool {
	ascii := true
	for _, c := range s {
		switch {
		case c == '\\' || c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.Valid(s)
}

// Flag is a bool read leniently: only JSON true is true.
type Flag bool

func (f *Flag) UnmarshalJSON(b []byte) error {
	*f = Flag(string(b) == "true")
	return nil
}

// MessageText reads a value that states an error leniently: a string, an
// object with a message (or data.message, or a name/type), or a list of
// those joined by "; ". Anything else is "".
func MessageText(raw json.RawMessage) string { return messageText(raw, true) }

func messageText(raw json.RawMessage, list bool) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '{':
		var o struct {
			Message Text `json:"message"`
			Data    struct {
				Message Text `json:"message"`
			} `json:"data"`
			Name Text `json:"name"`
			Type Text `json:"type"`
		}
		if json.Unmarshal(raw, &o) != nil {
			return ""
		}
		for _, s := range []Text{o.Message, o.Data.Message, o.Name, o.Type} {
			if s != "" {
				return string(s)
			}
		}
	case '[':
		var elems []json.RawMessage
		if !list || json.Unmarshal(raw, &elems) != nil {
			return "" // one level of list only: no re-parsing a deep nest
		}
		var parts []string
		for _, e := range elems {
			if s := messageText(e, false); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}
