package modelserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// toolCallSeen is the tool call a response carries, read the way each
// API's client reads it.
type toolCallSeen struct {
	ID, Namespace, Name, Args, Stop, Text string
}

// readToolCall reads the tool call (and any text) out of a response body
// of api, streamed or not.
func readToolCall(t *testing.T, api API, stream bool, out string) toolCallSeen {
	t.Helper()
	var c toolCallSeen
	if !stream {
		switch api {
		case Anthropic:
			var m struct {
				StopReason string `json:"stop_reason"`
				Content    []struct {
					Type, ID, Name, Text string
					Input                json.RawMessage
				}
			}
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatal(err)
			}
			c.Stop = m.StopReason
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					c.ID, c.Name, c.Args = b.ID, b.Name, string(b.Input)
				}
				c.Text += b.Text
			}
		case Responses:
			var o struct {
				Output []struct {
					Type, Namespace, Name, Arguments string
					CallID                           string `json:"call_id"`
					Content                          []struct{ Text string }
				}
			}
			if err := json.Unmarshal([]byte(out), &o); err != nil {
				t.Fatal(err)
			}
			for _, it := range o.Output {
				if it.Type == "function_call" {
					c.ID, c.Namespace, c.Name, c.Args = it.CallID, it.Namespace, it.Name, it.Arguments
				}
				for _, p := range it.Content {
					c.Text += p.Text
				}
			}
		case Chat:
			var r struct {
				Choices []struct {
					FinishReason string `json:"finish_reason"`
					Message      struct {
						Content   string
						ToolCalls []struct {
							ID       string
							Function struct{ Name, Arguments string }
						} `json:"tool_calls"`
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			ch := r.Choices[0]
			c.Stop, c.Text = ch.FinishReason, ch.Message.Content
			for _, tc := range ch.Message.ToolCalls {
				c.ID, c.Name, c.Args = tc.ID, tc.Function.Name, tc.Function.Arguments
			}
		}
		return c
	}
	_, datas := sseData(t, out)
	for _, d := range datas {
		if d == "[DONE]" {
			continue
		}
		var ev struct {
			Type         string
			ContentBlock struct{ Type, ID, Name string } `json:"content_block"`
			Delta        json.RawMessage
			Item         struct {
				Type, Namespace, Name, Arguments string
				CallID                           string `json:"call_id"`
			}
			Choices []struct {
				FinishReason *string `json:"finish_reason"`
				Delta        struct {
					Content   string
					ToolCalls []struct {
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("event %s: %v", d, err)
		}
		switch {
		case ev.Type == "content_block_start" && ev.ContentBlock.Type == "tool_use":
			c.ID, c.Name = ev.ContentBlock.ID, ev.ContentBlock.Name
		case ev.Type == "content_block_delta":
			var dl struct {
				Type, Text  string
				PartialJSON string `json:"partial_json"`
			}
			_ = json.Unmarshal(ev.Delta, &dl)
			c.Args += dl.PartialJSON
			c.Text += dl.Text
		case ev.Type == "message_delta":
			var dl struct {
				StopReason string `json:"stop_reason"`
			}
			_ = json.Unmarshal(ev.Delta, &dl)
			c.Stop = dl.StopReason
		case ev.Type == "response.output_text.delta":
			var s string
			_ = json.Unmarshal(ev.Delta, &s)
			c.Text += s
		case ev.Type == "response.output_item.done" && ev.Item.Type == "function_call":
			c.ID, c.Namespace, c.Name, c.Args = ev.Item.CallID, ev.Item.Namespace, ev.Item.Name, ev.Item.Arguments
		case len(ev.Choices) > 0:
			ch := ev.Choices[0]
			c.Text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" {
					c.ID = tc.ID
				}
				c.Name += tc.Function.Name
				c.Args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				c.Stop = *ch.FinishReason
			}
		}
	}
	return c
}

// A reply with a ToolCall is a tool call in each API's shape, streamed and
// not; the CLI's next request carries the result, which the server records
// (with the turn's text and markers still the user's message) so the
// responder can answer from it.
func TestToolCallAndItsResultInEveryAPI(t *testing.T) {
	type api struct {
		path, tools string
		tool        string // the name to call, as ToolNames has it
		first       string // the messages/input of the first request
		followUp    func(callID string) string
		wantStop    string
	}
	apis := map[API]api{
		Anthropic: {"/v1/messages", `[{"name":"Bash"},{"name":"mcp__leo__leo_list_agents","input_schema":{"type":"object"}}]`,
			"mcp__leo__leo_list_agents",
			`"messages":[{"role":"user","content":"list LEO-tc1"}]`,
			func(id string) string {
				return `"messages":[{"role":"user","content":"list LEO-tc1"},{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"mcp__leo__leo_list_agents","input":{}}]},` +
					`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":[{"type":"text","text":"[{\"name\":\"a\"}]"}]}]}]`
			}, "tool_use"},
		Responses: {"/v1/responses", `[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__leo","tools":[{"type":"function","name":"leo_list_agents"}]}]`,
			"mcp__leo/leo_list_agents",
			`"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"leo nudge"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"list LEO-tc1"}]}]`,
			func(id string) string {
				return `"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"list LEO-tc1"}]},` +
					`{"type":"function_call","name":"leo_list_agents","namespace":"mcp__leo","arguments":"{}","call_id":"` + id + `"},` +
					`{"type":"function_call_output","call_id":"` + id + `","output":[{"type":"input_text","text":"Wall time: 0.01 seconds\nOutput:"},{"type":"input_text","text":"[{\"name\":\"a\"}]"}]}]`
			}, ""},
		Chat: {"/v1/chat/completions", `[{"type":"function","function":{"name":"bash"}},{"type":"function","function":{"name":"leo_leo_list_agents"}}]`,
			"leo_leo_list_agents",
			`"messages":[{"role":"user","content":"list LEO-tc1"}]`,
			func(id string) string {
				return `"messages":[{"role":"user","content":"list LEO-tc1"},{"role":"assistant","content":"","tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"leo_leo_list_agents","arguments":"{}"}}]},` +
					`{"role":"tool","tool_call_id":"` + id + `","content":"[{\"name\":\"a\"}]"}]`
			}, "tool_calls"},
	}
	for name, a := range apis {
		for _, stream := range []bool{true, false} {
			s := Start(t)
			s.SetResponder(func(r Request) Reply {
				if len(r.ToolResults) == 0 {
					return Reply{ToolCall: &ToolCall{Name: a.tool}}
				}
				return Reply{Text: "GOT " + strings.Join(r.Markers, " ") + " " + r.ToolResults[0].Text}
			})
			head := `{"model":"m","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"tools":` + a.tools + `,`
			status, out := post(t, s, a.path, head+a.first+`}`)
			if status != 200 {
				t.Fatalf("%s stream=%v: status %d: %s", name, stream, status, out)
			}
			got := readToolCall(t, name, stream, out)
			wantNS, wantName := "", a.tool
			if ns, n, ok := strings.Cut(a.tool, "/"); ok {
				wantNS, wantName = ns, n
			}
			if got.ID != ToolCallID(1) || got.Name != wantName || got.Namespace != wantNS || got.Args != "{}" || got.Stop != a.wantStop || got.Text != "" {
				t.Fatalf("%s stream=%v: tool call %+v, want id %s name %s namespace %q stop %q and no text:\n%s",
					name, stream, got, ToolCallID(1), wantName, wantNS, a.wantStop, out)
			}
			first := s.Requests()[0]
			if !slices.Contains(first.ToolNames, a.tool) || len(first.ToolNames) != 2 || len(first.ToolResults) != 0 {
				t.Fatalf("%s: first request recorded tools %v, results %v", name, first.ToolNames, first.ToolResults)
			}
			if name == Responses && !strings.Contains(first.System, "leo nudge") {
				t.Fatalf("responses: developer message not in System: %q", first.System)
			}

			status, out = post(t, s, a.path, head+a.followUp(got.ID)+`}`)
			if status != 200 {
				t.Fatalf("%s follow-up: status %d: %s", name, status, out)
			}
			fu := s.Requests()[1]
			if len(fu.ToolResults) != 1 || fu.ToolResults[0].ID != got.ID || !strings.HasSuffix(fu.ToolResults[0].Text, `[{"name":"a"}]`) ||
				fu.UserText != "list LEO-tc1" || !slices.Equal(fu.Markers, []string{"LEO-tc1"}) {
				t.Fatalf("%s follow-up recorded results %+v, user text %q, markers %v", name, fu.ToolResults, fu.UserText, fu.Markers)
			}
			if reply := readToolCall(t, name, stream, out); reply.Name != "" || !strings.HasPrefix(reply.Text, "GOT LEO-tc1 ") {
				t.Fatalf("%s follow-up answered %+v", name, reply)
			}
		}
	}
}

// Tool results before the last user message are an earlier turn's: only
// the ones after it are recorded.
func TestOnlyTheLastTurnsToolResultsAreRecorded(t *testing.T) {
	s := Start(t)
	post(t, s, "/v1/chat/completions", `{"model":"m","tools":[{}],"messages":[{"role":"user","content":"old"},
	  {"role":"tool","tool_call_id":"c1","content":"old result"},{"role":"user","content":"new LEO-n"}]}`)
	if r := s.Requests()[0]; len(r.ToolResults) != 0 || r.UserText != "new LEO-n" {
		t.Fatalf("recorded results %+v, user text %q", r.ToolResults, r.UserText)
	}
}
