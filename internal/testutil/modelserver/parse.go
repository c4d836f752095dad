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
	// A tool's result: Responses "function_call_output" items (call_id,
	// output), Chat "tool" messages (tool_call_id, content).
	CallID     string          `json:"call_id"`
	Output     json.RawMessage `json:"output"`
	ToolCallID string          `json:"tool_call_id"`
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Anthropic "tool_result" parts.
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// offeredTool is an offered tool as far as its name goes: Anthropic and
// Responses name it at the top, Chat under function; a Responses
// "namespace" tool (codex's form of an MCP server's tools) holds its tools.
type offeredTool struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
	Tools []offeredTool `json:"tools"`
}

// names are the tool names t offers: a namespace's tools as
// "<namespace>/<tool>".
func (t offeredTool) names() []string {
	if t.Type == "namespace" {
		var out []string
		for _, in := range t.Tools {
			for _, n := range in.names() {
				out = append(out, t.Name+"/"+n)
			}
		}
		return out
	}
	if t.Name == "" {
		t.Name = t.Function.Name
	}
	if t.Name == "" {
		return nil
	}
	return []string{t.Name}
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
	for _, raw := range b.Tools {
		var t offeredTool
		_ = json.Unmarshal(raw, &t) // a tool of another shape has no name here
		r.ToolNames = append(r.ToolNames, t.names()...)
	}
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
		// codex sends its developer instructions as developer-role input
		// messages, beside instructions: both are its system prompt.
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
	if r.API == Responses {
		for _, m := range msgs {
			if m.Role == "developer" && (m.Type == "" || m.Type == "message") {
				r.System += "\n" + text(m.Content)
			}
		}
	}
	// The last user message that is not a tool's result is the turn's
	// text; the tool results after it are what the model asked for.
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "user" && (m.Type == "" || m.Type == "message") && len(toolResults(m)) == 0 {
			r.UserText = text(m.Content)
			last = i
			break
		}
	}
	for _, m := range msgs[last+1:] {
		r.ToolResults = append(r.ToolResults, toolResults(m)...)
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

// toolResults are the tool results message m carries.
func toolResults(m message) []ToolResult {
	switch {
	case m.Type == "function_call_output":
		return []ToolResult{{ID: m.CallID, Text: text(m.Output)}}
	case m.Role == "tool":
		return []ToolResult{{ID: m.ToolCallID, Text: text(m.Content)}}
	case m.Role == "user":
		var parts []part
		if json.Unmarshal(m.Content, &parts) != nil {
			return nil
		}
		var out []ToolResult
		for _, p := range parts {
			if p.Type == "tool_result" {
				out = append(out, ToolResult{ID: p.ToolUseID, Text: text(p.Content)})
			}
		}
		return out
	}
	return nil
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
