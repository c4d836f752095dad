package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
)

type claudeStore struct {
	id       string
	promptID string // the open turn's, as claude stamps its user entries
	// mode is the permission mode (--permission-mode; "default" when not
	// given, as 2.1.197's), which the hooks' payloads carry.
	mode string
	// skip: --dangerously-skip-permissions.
	skip bool
}

// submit records msg as the turn's user entry and runs the
// UserPromptSubmit hooks, as claude does for each turn it takes.
func (s *claudeStore) submit(msg string) {
	s.promptID = uuid.NewString()
	rec := claudeRecord(s.id, "user", msg)
	rec["promptId"] = s.promptID
	_ = appendJSONL(claudeTranscript(s.id), rec)
	s.hook("UserPromptSubmit", map[string]any{"prompt": msg})
}

// compact writes what claude 2.1.197 records of /compact: with no turn in
// the conversation yet it declines ("Not enough messages to compact."): the
// command entry and a system local_command entry, its parent, holding the
// words; otherwise a system compact_boundary entry, then the command entry.
func (s *claudeStore) compact() string {
	path := claudeTranscript(s.id)
	cmd := claudeRecord(s.id, "user", "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args></command-args>")
	if !claudeHasTurn(path) {
		const refused = "Not enough messages to compact."
		_ = appendJSONL(path, cmd)
		out := claudeRecord(s.id, "system", "")
		delete(out, "message")
		out["subtype"], out["parentUuid"], out["level"] = "local_command", cmd["uuid"], "info"
		out["content"] = "<local-command-stdout>" + refused + "</local-command-stdout>"
		_ = appendJSONL(path, out)
		return refused
	}
	b := claudeRecord(s.id, "system", "")
	delete(b, "message")
	b["subtype"], b["content"] = "compact_boundary", "Conversation compacted"
	b["compactMetadata"] = map[string]any{"trigger": "manual", "preTokens": 13}
	_ = appendJSONL(path, b)
	_ = appendJSONL(path, cmd)
	return ""
}

// claudeHasTurn reports whether the transcript holds a user message.
func claudeHasTurn(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Content any `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Type != "user" {
			continue
		}
		if text, ok := e.Message.Content.(string); ok && !strings.HasPrefix(text, "<command-name>") {
			return true
		}
	}
	return false
}

// reply ends the open turn as claude 2.1.197 records it: the assistant
// entry (stop_reason end_turn, the model's message id and usage), then a
// system entry of subtype turn_duration — the turn's end leo's adapter
// reads (internal/harness/claude/testdata/records_v2.1.197.jsonl).
func (s *claudeStore) reply(msg string) {
	path := claudeTranscript(s.id)
	a := claudeAssistant(s.id, claudeMessageID(), "end_turn", 3, map[string]any{"type": "text", "text": msg})
	_ = appendJSONL(path, a)
	end := claudeRecord(s.id, "system", "")
	delete(end, "message")
	end["subtype"], end["parentUuid"], end["durationMs"], end["isMeta"] = "turn_duration", a["uuid"], 1, false
	_ = appendJSONL(path, end)
	s.hook("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": msg,
		"background_tasks": []any{}, "session_crons": []any{}})
}

// claudeMessageID is a model message id, as the Messages API names them.
func claudeMessageID() string {
	return "msg_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
}

// claudeAssistant is one content block of a model message as claude
// 2.1.197 records it: an assistant entry per block, each with the
// message's id and usage (the test model server's 10 tokens in; out, 3
// for a reply, 5 for a tool call).
func claudeAssistant(id, msgID, stop string, out int, block map[string]any) map[string]any {
	a := claudeRecord(id, "assistant", "")
	a["message"] = map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": "claude-fake",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out, "service_tier": "standard"}}
	return a
}

// toolCall records the model's tool call as 2.1.197 does: its message as
// two lines, an empty text block and the tool_use block.
func (s *claudeStore) toolCall(useID, name string, input map[string]any) {
	path, msgID := claudeTranscript(s.id), claudeMessageID()
	_ = appendJSONL(path, claudeAssistant(s.id, msgID, "tool_use", 5, map[string]any{"type": "text", "text": ""}))
	_ = appendJSONL(path, claudeAssistant(s.id, msgID, "tool_use", 5, map[string]any{"type": "tool_use", "id": useID, "name": name, "input": input}))
}

// toolResult records a tool's output: a user entry of tool_result parts
// (not a message), with the output again in toolUseResult.
func (s *claudeStore) toolResult(useID, stdout string) {
	r := claudeRecord(s.id, "user", "")
	r["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": useID, "type": "tool_result", "content": stdout, "is_error": false}}}
	r["toolUseResult"] = map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": stdout == ""}
	_ = appendJSONL(claudeTranscript(s.id), r)
}

// claudeSession resolves --session-id / --resume / --continue the way the
// real CLI does, returning the session id or an exit code.
func claudeSession(p parsedArgs) (id string, resumed bool, code int, failed bool) {
	sid := p.get("session-id")
	if sid != "" {
		if _, err := uuid.Parse(sid); err != nil {
			return "", false, fail(1, "Error: Invalid session ID. Must be a valid UUID."), true
		}
		if (p.has("resume") || p.has("continue")) && !p.has("fork-session") {
			return "", false, fail(1, "Error: --session-id can only be used with --continue or --resume if --fork-session is also specified."), true
		}
	}
	switch {
	case p.has("resume"):
		id := p.get("resume")
		if id == "" {
			return "", false, fail(1, "Error: the fake claude has no session picker; pass --resume <session-id>"), true
		}
		if _, err := os.Stat(claudeTranscript(id)); err != nil {
			return "", false, fail(1, "No conversation found with session ID: %s", id), true
		}
		if sid != "" { // --fork-session
			return sid, true, 0, false
		}
		return id, true, 0, false
	case p.has("continue"):
		id := newestClaudeTranscript()
		if id == "" {
			return "", false, fail(1, "No conversation found to continue"), true
		}
		return id, true, 0, false
	case sid != "":
		path := claudeTranscript(sid)
		if _, err := os.Stat(path); err == nil {
			return "", false, fail(1, "Error: Session ID %s is already in use.", sid), true
		}
		rec := claudeRecord(sid, "system", "session created")
		if err := appendJSONL(path, rec); err != nil {
			return "", false, fail(1, "Error: %v", err), true
		}
		return sid, false, 0, false
	}
	return uuid.NewString(), false, 0, false
}

func newestClaudeTranscript() string {
	dir := filepath.Dir(claudeTranscript("x"))
	entries, _ := os.ReadDir(dir)
	type f struct {
		id  string
		mod time.Time
	}
	var fs []f
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			if info, err := e.Info(); err == nil {
				fs = append(fs, f{strings.TrimSuffix(e.Name(), ".jsonl"), info.ModTime()})
			}
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod.After(fs[j].mod) })
	if len(fs) == 0 {
		return ""
	}
	return fs[0].id
}

// claudeOpen is how every claude launch begins: a resume exits when
// FAKE_EXIT_ON_RESUME asks; otherwise the session is found or made.
func claudeOpen(p parsedArgs) (id string, resumed bool, code int, failed bool) {
	if p.has("resume") || p.has("continue") {
		if code, ok := exitOnResume(); ok {
			return "", false, code, true
		}
	}
	return claudeSession(p)
}

func runClaude(args []string) int {
	p := parseArgs(args, claudeFlags)
	if p.has("print") {
		return claudeHeadless(p)
	}
	id, resumed, code, failed := claudeOpen(p)
	if failed {
		return code
	}
	model := p.getOr("model", "sonnet")
	logEvent(map[string]any{"event": "start", "session_id": id, "resumed": resumed, "cwd": cwd()})
	st := &claudeStore{id: id, mode: p.getOr("permission-mode", "default"), skip: p.has("dangerously-skip-permissions")}
	t := newTUI(roleClaude, model, st)
	t.trust = os.Getenv("FAKE_TRUST_DIALOG") == "1" && !claudeTrusted()
	t.onTrust = claudeRecordTrust
	return t.run()
}

// claudeHeadless is `claude -p … --output-format stream-json --verbose`.
func claudeHeadless(p parsedArgs) int {
	format := p.getOr("output-format", "text")
	if format == "stream-json" && !p.has("verbose") {
		return fail(1, "Error: When using --print, --output-format=stream-json requires --verbose")
	}
	prompt := strings.Join(p.pos, " ")
	if prompt == "" {
		b, _ := io.ReadAll(os.Stdin)
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		return fail(1, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
	}
	id, _, code, failed := claudeOpen(p)
	if failed {
		return code
	}
	model := p.getOr("model", "claude-fake")
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	emit := func(v any) {
		if format == "stream-json" {
			_ = out.Encode(v)
		}
	}
	sc := scenario()
	if sc == "banner_noise" {
		fmt.Println("Claude Code (fake) starting up…")
		emit(map[string]any{"type": "rate_limit_event", "session_id": id, "rate_limit_info": map[string]any{"status": "allowed"}, "new_field": 1})
	}
	// The events below have the fields, and the nesting, of claude 2.1.197's
	// (internal/harness/claude/testdata/streams; TestFakeHeadlessStreamsMatchReal).
	emit(map[string]any{
		"type": "system", "subtype": "init", "cwd": cwd(), "session_id": id,
		"tools": []string{"Task", "Bash", "Edit", "Read", "Write"}, "mcp_servers": []any{}, "model": model,
		"permissionMode": p.getOr("permission-mode", "default"), "slash_commands": []string{"compact", "review"},
		"apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "0.0.0-fake", "output_style": "default",
		"agents": []string{"general-purpose"}, "skills": []string{}, "plugins": []any{},
		"analytics_disabled": true, "product_feedback_disabled": true, "uuid": uuid.NewString(),
		"memory_paths": map[string]any{"auto": filepath.Join(claudeConfigDir(), "projects", "memory")}, "fast_mode_state": "off",
	})
	if sc == "banner_noise" {
		emit(map[string]any{"type": "system", "subtype": "status_fake_unknown", "session_id": id})
	}
	if sc == "hang" {
		hangForever()
	}
	time.Sleep(turnDuration())
	fullUsage := func(in, out int) map[string]any {
		return map[string]any{
			"input_tokens": in, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out,
			"server_tool_use": map[string]any{"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard",
			"cache_creation": map[string]any{"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
			"inference_geo":  "", "iterations": []any{}, "speed": "standard",
		}
	}
	result := func(subtype string, isErr bool, text string, extra map[string]any) map[string]any {
		ms := turnDuration().Milliseconds()
		r := map[string]any{
			"type": "result", "subtype": subtype, "is_error": isErr, "api_error_status": nil,
			"duration_ms": ms, "duration_api_ms": ms, "num_turns": 1, "result": text, "stop_reason": "end_turn",
			"session_id": id, "total_cost_usd": 0.0012, "usage": fullUsage(10, 3),
			"modelUsage":         map[string]any{model: map[string]any{"inputTokens": 10, "outputTokens": 3, "contextWindow": 200000}},
			"permission_denials": []any{}, "terminal_reason": "completed", "fast_mode_state": "off", "uuid": uuid.NewString(),
		}
		if !isErr {
			r["ttft_ms"], r["ttft_stream_ms"], r["time_to_request_ms"] = ms, ms, 0
		}
		for k, v := range extra {
			r[k] = v
		}
		return r
	}
	assistant := func(text string) map[string]any {
		return map[string]any{
			"type": "assistant", "parent_tool_use_id": nil, "session_id": id, "uuid": uuid.NewString(),
			"message": map[string]any{
				"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
				"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": nil, "stop_sequence": nil,
				"usage": map[string]any{"input_tokens": 10, "output_tokens": 3}, "context_management": nil,
			},
		}
	}
	// synthetic is the message claude makes up for an API error it gave
	// up on; the error kind rides at the top level.
	synthetic := func(kind, text string) map[string]any {
		return map[string]any{
			"type": "assistant", "error": kind, "parent_tool_use_id": nil, "session_id": id, "uuid": uuid.NewString(),
			"message": map[string]any{
				"id": uuid.NewString(), "container": nil, "model": "<synthetic>", "role": "assistant", "stop_details": nil,
				"stop_reason": "stop_sequence", "stop_sequence": "", "type": "message", "usage": fullUsage(0, 0),
				"content": []any{map[string]any{"type": "text", "text": text}}, "context_management": nil,
			},
		}
	}
	retries := func(status int, kind string) {
		n := envInt("FAKE_RETRIES", 2)
		for i := 1; i <= n; i++ {
			emit(map[string]any{"type": "system", "subtype": "api_retry", "attempt": i, "max_retries": n,
				"retry_delay_ms": 500 * i, "error_status": status, "error": kind, "session_id": id, "uuid": uuid.NewString()})
		}
	}
	finish := func(r map[string]any, code int) int {
		if format == "json" {
			_ = out.Encode(r)
		} else if format == "text" {
			fmt.Println(r["result"])
		}
		emit(r)
		logEvent(map[string]any{"event": "exit", "code": code, "scenario": sc})
		return code
	}
	switch sc {
	case "error_as_success":
		// Retries exhausted on a 500 (real: exit 1; exit 0 here, so that
		// is_error is what tells the failure).
		text := "API Error: 500 Internal server error (fake). This is a server-side issue, usually temporary — try again in a moment."
		retries(500, "server_error")
		emit(synthetic("server_error", text))
		return finish(result("success", true, text, map[string]any{"api_error_status": 500, "stop_reason": "stop_sequence", "total_cost_usd": 0, "usage": fullUsage(0, 0), "modelUsage": map[string]any{}}), 0)
	case "limited":
		// An API key's 429 that claude gave up on
		// (testdata/streams/limited_*): no time; with a reset, a
		// subscription's words, which name one.
		text := "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later."
		status := any(429)
		if in, ok := limitResetsIn(); ok {
			text = fmt.Sprintf("You've hit your session limit · resets in %dm %ds", int(in.Minutes()), int(in.Seconds())%60)
			status = nil
		}
		// No api_retry: claude gives up at once on a long retry-after.
		emit(synthetic("rate_limit", text))
		return finish(result("success", true, text, map[string]any{"api_error_status": status, "stop_reason": "stop_sequence", "total_cost_usd": 0, "usage": fullUsage(0, 0), "modelUsage": map[string]any{}}), 1)
	case "not_logged_in":
		text := "Not logged in · Please run /login"
		emit(assistant(text))
		return finish(result("success", true, text, map[string]any{"api_error_status": nil}), 1)
	case "turn_failed":
		return finish(result("error_during_execution", true, "turn failed (fake)", map[string]any{"errors": []string{"turn failed (fake)"}}), 1)
	case "max_turns":
		return finish(result("error_max_turns", true, "", map[string]any{"errors": []string{"Reached max turns"}}), 1)
	case "stream_error_exit0":
		return finish(result("error_during_execution", true, "stream error (fake)", map[string]any{"errors": []string{"stream error (fake)"}}), 0)
	case "truncated":
		// The stream stops before its result event, and the process
		// exits 0 all the same.
		emit(assistant("echo: " + prompt))
		logEvent(map[string]any{"event": "exit", "code": 0, "scenario": sc})
		return 0
	case "reconnecting":
		retries(529, "overloaded_error")
	case "huge_line":
		emit(map[string]any{"type": "user", "parent_tool_use_id": nil, "session_id": id, "uuid": uuid.NewString(),
			"message": map[string]any{"role": "user", "content": []any{map[string]any{
				"tool_use_id": "toolu_fake", "type": "tool_result", "content": hugeText(), "is_error": false}}}})
	}
	reply := "echo: " + prompt
	_ = appendJSONL(claudeTranscript(id), claudeRecord(id, "user", prompt))
	_ = appendJSONL(claudeTranscript(id), claudeRecord(id, "assistant", reply))
	logLine(map[string]any{"message": prompt, "pid": os.Getpid()})
	emit(assistant(reply))
	if sc == "banner_noise" {
		fmt.Println("not json: trailing noise")
	}
	return finish(result("success", false, reply, nil), 0)
}
