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
}

func (s *claudeStore) submit(msg string) {
	s.promptID = uuid.NewString()
	rec := claudeRecord(s.id, "user", msg)
	rec["promptId"] = s.promptID
	_ = appendJSONL(claudeTranscript(s.id), rec)
}

func (s *claudeStore) reply(msg string) {
	_ = appendJSONL(claudeTranscript(s.id), claudeRecord(s.id, "assistant", msg))
	claudeStop(s.id, s.promptID, msg)
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
	t := newTUI(roleClaude, model, &claudeStore{id: id})
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
	emit(map[string]any{
		"type": "system", "subtype": "init", "session_id": id, "cwd": cwd(), "model": model,
		"tools": []string{"Bash", "Read"}, "mcp_servers": []any{}, "permissionMode": "default",
		"apiKeySource": "none", "claude_code_version": "0.0.0-fake", "uuid": uuid.NewString(),
	})
	if sc == "banner_noise" {
		emit(map[string]any{"type": "system", "subtype": "status_fake_unknown", "session_id": id})
	}
	if sc == "hang" {
		hangForever()
	}
	time.Sleep(turnDuration())
	result := func(subtype string, isErr bool, text string, extra map[string]any) map[string]any {
		r := map[string]any{
			"type": "result", "subtype": subtype, "is_error": isErr, "duration_ms": turnDuration().Milliseconds(),
			"duration_api_ms": turnDuration().Milliseconds(), "num_turns": 1, "result": text, "session_id": id,
			"total_cost_usd": 0.0012, "permission_denials": []any{}, "uuid": uuid.NewString(),
			"usage":      map[string]any{"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 3},
			"modelUsage": map[string]any{model: map[string]any{"inputTokens": 10, "outputTokens": 3, "contextWindow": 200000}},
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
				"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": nil,
				"usage": map[string]any{"input_tokens": 10, "output_tokens": 3},
			},
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
		return finish(result("success", true, "API Error: 500 Internal server error (fake)", map[string]any{"api_error_status": 500}), 0)
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
