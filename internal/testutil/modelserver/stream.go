package modelserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// sse writes server-sent events, flushing after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name "" writes a data-only event.
func (s *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{}`)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.flush()
}

func (s *sse) raw(line string) {
	fmt.Fprintf(s.w, "%s\n\n", line)
	s.flush()
}

// cut ends the response by dropping the connection when rep.Cut asks:
// http.ErrAbortHandler makes the server close it without a clean end of the
// chunked body, and without logging.
func cut(rep Reply) {
	if rep.Cut {
		panic(http.ErrAbortHandler)
	}
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// paced calls send for each of a reply's deltas, spread over
// rep.StreamFor: a pause before every delta but the first. It stops when
// ctx ends.
func paced(ctx context.Context, rep Reply, send func(string)) {
	cs := chunks(rep.Text)
	var gap time.Duration
	if len(cs) > 1 {
		gap = rep.StreamFor / time.Duration(len(cs)-1)
	}
	for i, c := range cs {
		if i > 0 {
			wait(ctx, gap)
			if ctx.Err() != nil {
				return
			}
		}
		send(c)
	}
}

// chunks splits a reply into a few deltas, as a model streams it.
func chunks(text string) []string {
	words := strings.SplitAfter(text, " ")
	var out []string
	for len(words) > 0 {
		n := min(3, len(words))
		out = append(out, strings.Join(words[:n], ""))
		words = words[n:]
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

func tokens(s string) int { return len(strings.Fields(s)) + 1 }

// args is a tool call's arguments, {} when none are given.
func (c *ToolCall) args() string {
	if c.Input == "" {
		return "{}"
	}
	return c.Input
}

// outTokens is a reply's output token count.
func outTokens(rep Reply) int {
	n := tokens(rep.Text)
	if rep.ToolCall != nil {
		n += tokens(rep.ToolCall.args())
	}
	return n
}

// ---- Anthropic Messages ----

func anthropicMessage(id, model string, rep Reply) map[string]any {
	content := []any{}
	if rep.Text != "" || rep.ToolCall == nil {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	stop := "end_turn"
	if c := rep.ToolCall; c != nil {
		var input any = map[string]any{}
		_ = json.Unmarshal([]byte(c.args()), &input)
		content = append(content, map[string]any{"type": "tool_use", "id": callID(id), "name": c.Name, "input": input})
		stop = "tool_use"
	}
	return map[string]any{
		"id":            "msg_" + id,
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": 10, "output_tokens": outTokens(rep)},
	}
}

// callID is the id of the tool call in the answer to the request whose
// Seq is id.
func callID(id string) string { return "call_leo_" + id }

func streamAnthropic(ctx context.Context, w http.ResponseWriter, id, model string, rep Reply) {
	s := newSSE(w)
	msg := anthropicMessage(id, model, Reply{})
	msg["content"] = []any{}
	msg["stop_reason"] = nil
	msg["usage"] = map[string]any{"input_tokens": 10, "output_tokens": 1}
	s.event("message_start", map[string]any{"type": "message_start", "message": msg})
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""}})
	s.event("ping", map[string]any{"type": "ping"})
	wait(ctx, rep.Delay)
	if ctx.Err() != nil {
		return
	}
	cut(rep)
	if rep.Text != "" || rep.ToolCall == nil {
		paced(ctx, rep, func(c string) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": c}})
		})
		if ctx.Err() != nil {
			return
		}
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	stop := "end_turn"
	if c := rep.ToolCall; c != nil {
		stop = "tool_use"
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 1,
			"content_block": map[string]any{"type": "tool_use", "id": callID(id), "name": c.Name, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": c.args()}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outTokens(rep)}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// ---- OpenAI Responses ----

func responsesItem(id, status, text string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}
	}
	return map[string]any{"id": "msg_" + id, "type": "message", "status": status, "role": "assistant", "content": content}
}

func responsesCall(id, status string, c *ToolCall) map[string]any {
	args := ""
	if status == "completed" {
		args = c.args()
	}
	item := map[string]any{"id": "fc_" + id, "type": "function_call", "status": status, "call_id": callID(id),
		"name": c.Name, "arguments": args}
	if ns, name, ok := strings.Cut(c.Name, "/"); ok {
		item["namespace"], item["name"] = ns, name
	}
	return item
}

func responsesObject(id, model, status string, rep Reply) map[string]any {
	o := map[string]any{
		"id":         "resp_" + id,
		"object":     "response",
		"created_at": time.Now().Unix(),
		"status":     status,
		"model":      model,
		"output":     []any{},
	}
	if status == "completed" {
		out := []any{}
		if rep.Text != "" || rep.ToolCall == nil {
			out = append(out, responsesItem(id, "completed", rep.Text))
		}
		if rep.ToolCall != nil {
			out = append(out, responsesCall(id, "completed", rep.ToolCall))
		}
		o["output"] = out
		o["usage"] = map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": outTokens(rep), "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 10 + outTokens(rep),
		}
	}
	return o
}

func streamResponses(ctx context.Context, w http.ResponseWriter, id, model string, rep Reply) {
	s := newSSE(w)
	seq := 0
	ev := func(name string, fields map[string]any) {
		fields["type"] = name
		fields["sequence_number"] = seq
		seq++
		s.event(name, fields)
	}
	text := rep.Text != "" || rep.ToolCall == nil
	ev("response.created", map[string]any{"response": responsesObject(id, model, "in_progress", rep)})
	ev("response.in_progress", map[string]any{"response": responsesObject(id, model, "in_progress", rep)})
	if text {
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": responsesItem(id, "in_progress", "")})
		ev("response.content_part.added", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	}
	wait(ctx, rep.Delay)
	if ctx.Err() != nil {
		return
	}
	cut(rep)
	next := 0
	if text {
		paced(ctx, rep, func(c string) {
			ev("response.output_text.delta", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0, "delta": c})
		})
		if ctx.Err() != nil {
			return
		}
		ev("response.output_text.done", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0, "text": rep.Text})
		ev("response.content_part.done", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}})
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": responsesItem(id, "completed", rep.Text)})
		next = 1
	}
	if c := rep.ToolCall; c != nil {
		ev("response.output_item.added", map[string]any{"output_index": next, "item": responsesCall(id, "in_progress", c)})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + id, "output_index": next, "delta": c.args()})
		ev("response.function_call_arguments.done", map[string]any{"item_id": "fc_" + id, "output_index": next, "arguments": c.args()})
		ev("response.output_item.done", map[string]any{"output_index": next, "item": responsesCall(id, "completed", c)})
	}
	ev("response.completed", map[string]any{"response": responsesObject(id, model, "completed", rep)})
}

// ---- OpenAI Chat Completions ----

func chatCompletion(id, model string, rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	finish := "stop"
	if c := rep.ToolCall; c != nil {
		msg["tool_calls"] = []any{map[string]any{"id": callID(id), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.args()}}}
		finish = "tool_calls"
	}
	return map[string]any{
		"id": "chatcmpl-" + id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": outTokens(rep), "total_tokens": 10 + outTokens(rep)},
	}
}

func streamChat(ctx context.Context, w http.ResponseWriter, id, model string, rep Reply, raw []byte) {
	var opts struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(raw, &opts)
	s := newSSE(w)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	wait(ctx, rep.Delay)
	if ctx.Err() != nil {
		return
	}
	cut(rep)
	if rep.Text != "" || rep.ToolCall == nil {
		paced(ctx, rep, func(c string) {
			s.event("", chunk(map[string]any{"content": c}, nil))
		})
		if ctx.Err() != nil {
			return
		}
	}
	finish := "stop"
	if c := rep.ToolCall; c != nil {
		finish = "tool_calls"
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID(id), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": c.args()}}}}, nil))
	}
	last := chunk(map[string]any{}, finish)
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": outTokens(rep), "total_tokens": 10 + outTokens(rep)}
	if opts.StreamOptions.IncludeUsage {
		s.event("", last)
		s.event("", map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created,
			"model": model, "choices": []any{}, "usage": usage})
	} else {
		last["usage"] = usage
		s.event("", last)
	}
	s.raw("data: [DONE]")
}
