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

// ---- Anthropic Messages ----

func anthropicMessage(id, model, text string) map[string]any {
	return map[string]any{
		"id":            "msg_" + id,
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       []any{map[string]any{"type": "text", "text": text}},
		"stop_reason":   "end_turn",
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": 10, "output_tokens": tokens(text)},
	}
}

func streamAnthropic(ctx context.Context, w http.ResponseWriter, id, model string, rep Reply) {
	s := newSSE(w)
	msg := anthropicMessage(id, model, "")
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
	for _, c := range chunks(rep.Text) {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": c}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": tokens(rep.Text)}})
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

func responsesObject(id, model, status, text string) map[string]any {
	o := map[string]any{
		"id":         "resp_" + id,
		"object":     "response",
		"created_at": time.Now().Unix(),
		"status":     status,
		"model":      model,
		"output":     []any{},
	}
	if status == "completed" {
		o["output"] = []any{responsesItem(id, "completed", text)}
		o["usage"] = map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": tokens(text), "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 10 + tokens(text),
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
	ev("response.created", map[string]any{"response": responsesObject(id, model, "in_progress", "")})
	ev("response.in_progress", map[string]any{"response": responsesObject(id, model, "in_progress", "")})
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": responsesItem(id, "in_progress", "")})
	ev("response.content_part.added", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	wait(ctx, rep.Delay)
	if ctx.Err() != nil {
		return
	}
	cut(rep)
	for _, c := range chunks(rep.Text) {
		ev("response.output_text.delta", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0, "delta": c})
	}
	ev("response.output_text.done", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0, "text": rep.Text})
	ev("response.content_part.done", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}})
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": responsesItem(id, "completed", rep.Text)})
	ev("response.completed", map[string]any{"response": responsesObject(id, model, "completed", rep.Text)})
}

// ---- OpenAI Chat Completions ----

func chatCompletion(id, model, text string) map[string]any {
	return map[string]any{
		"id": "chatcmpl-" + id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": tokens(text), "total_tokens": 10 + tokens(text)},
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
	for _, c := range chunks(rep.Text) {
		s.event("", chunk(map[string]any{"content": c}, nil))
	}
	last := chunk(map[string]any{}, "stop")
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": tokens(rep.Text), "total_tokens": 10 + tokens(rep.Text)}
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
