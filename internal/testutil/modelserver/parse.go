package modelserver

import (
	"encoding/json"
	"fmt"
	"strings"
)

// body is the union of the three request shapes, as far as the server reads
// them; everything else in a body is ignored.
type body struct {
	Model        string            `json:"model"`
	Stream       bool              `json:"stream"`
	System       json.RawMessage   `json:"system"`       // Anthropic: string or blocks
	Instructions string            `json:"instructions"` // Responses
	Messages     []message         `json:"messages"`     // Anthropic, Chat
	Input        json.RawMessage   `json:"input"`        // Responses: string or items
	Tools        []json.RawMessage `json:"tools"`
}

type message struct {
	Type    string          `json:"type"` // Responses items: "message", "function_call", …
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // string or parts
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// parse fills r's parsed fields from the body of a request to r.API.
func parse(r *Request, raw []byte) error {
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		return fmt.Errorf("%s request body: %w", r.API, err)
	}
	r.Model = b.Model
	r.Stream = b.Stream
	r.Tools = len(b.Tools)
	var msgs []message
	switch r.API {
	case Anthropic:
		r.System = text(b.System)
		msgs = b.Messages
	case Chat:
		msgs = b.Messages
		var sys []string
		for _, m := range msgs {
			if m.Role == "system" || m.Role == "developer" {
				sys = append(sys, text(m.Content))
			}
		}
		r.System = strings.Join(sys, "\n")
	case Responses:
		r.System = b.Instructions
		if len(b.Input) > 0 && b.Input[0] == '"' {
			var s string
			if err := json.Unmarshal(b.Input, &s); err != nil {
				return fmt.Errorf("%s request body: input: %w", r.API, err)
			}
			msgs = []message{{Role: "user", Content: b.Input}}
		} else if len(b.Input) > 0 {
			if err := json.Unmarshal(b.Input, &msgs); err != nil {
				return fmt.Errorf("%s request body: input: %w", r.API, err)
			}
		}
	}
	if len(msgs) == 0 {
		return fmt.Errorf("%s request body: no messages", r.API)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "user" && (m.Type == "" || m.Type == "message") {
			r.UserText = text(m.Content)
			break
		}
	}
	r.Markers = markers(r.UserText)
	if r.Tools == 0 {
		r.Side, r.SideWhy = true, "no tools offered"
	}
	return nil
}

// text is the text of a content value: a string, or the joined text of its
// text parts (text, input_text, output_text); other parts are skipped.
func text(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []part
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text":
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func markers(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range MarkerPattern.FindAllString(s, -1) {
		m = strings.TrimRight(m, "-")
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
