package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

type codexStore struct {
	id, path, originator string
}

func (s *codexStore) submit(msg string) {
	if s.path == "" {
		s.id = newThreadID()
		path, err := newCodexRollout(s.id, s.originator)
		if err != nil {
			return
		}
		s.path = path
		logEvent(map[string]any{"event": "session", "session_id": s.id, "path": path})
	}
	_ = appendJSONL(s.path, codexItem("response_item", "user", msg))
}

func (s *codexStore) reply(msg string) {
	if s.path != "" {
		_ = appendJSONL(s.path, codexItem("response_item", "assistant", msg))
	}
}

func newThreadID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// newestCodexRollout is `--last`: the newest rollout whose cwd is ours.
func newestCodexRollout() (id, path string) {
	var bestMod time.Time
	_ = filepath.WalkDir(filepath.Join(codexHome(), "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		first, _, _ := strings.Cut(string(b), "\n")
		var meta struct {
			Payload struct{ ID, Cwd string } `json:"payload"`
		}
		if json.Unmarshal([]byte(first), &meta) != nil || meta.Payload.Cwd != cwd() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(bestMod) {
			bestMod, id, path = info.ModTime(), meta.Payload.ID, p
		}
		return nil
	})
	return id, path
}

// codexResume resolves `resume <id>` / `resume --last`.
func codexResume(p parsedArgs, rest []string) (id, path string, code int, failed bool) {
	if code, ok := exitOnResume(); ok {
		return "", "", code, true
	}
	if len(rest) == 0 || rest[0] == "" {
		if p.has("last") {
			id, path = newestCodexRollout()
			if id == "" {
				return "", "", fail(1, "Error: no rollout found for the last session"), true
			}
			return id, path, 0, false
		}
		return "", "", fail(1, "Error: the fake codex has no session picker; pass resume <id>"), true
	}
	id = rest[0]
	path = findCodexRollout(id)
	if path == "" {
		return "", "", fail(1, "Error: no rollout found for thread id %s", id), true
	}
	return id, path, 0, false
}

func runCodex(args []string) int {
	p := parseArgs(args, codexFlags)
	pos := p.pos
	if len(pos) > 0 && pos[0] == "exec" {
		return codexExec(p, pos[1:])
	}
	st := &codexStore{originator: "codex-tui"}
	resumed := false
	if len(pos) > 0 && pos[0] == "resume" {
		id, path, code, failed := codexResume(p, pos[1:])
		if failed {
			return code
		}
		st.id, st.path, resumed = id, path, true
	}
	model := p.getOr("model", "gpt-fake")
	logEvent(map[string]any{"event": "start", "session_id": st.id, "resumed": resumed, "cwd": cwd()})
	t := newTUI(roleCodex, model, st)
	t.trust = os.Getenv("FAKE_TRUST_DIALOG") != "0" && !codexTrusted()
	t.onTrust = codexRecordTrust
	return t.run()
}

// codexExec is `codex exec [--json] [flags] [resume <id>] PROMPT`.
func codexExec(p parsedArgs, pos []string) int {
	st := &codexStore{originator: "codex_exec"}
	if len(pos) > 0 && pos[0] == "resume" {
		rest := pos[1:]
		if p.has("last") {
			rest = append([]string{""}, rest...)
		}
		id, path, code, failed := codexResume(p, rest[:min(1, len(rest))])
		if failed {
			return code
		}
		st.id, st.path = id, path
		pos = rest[min(1, len(rest)):]
	}
	prompt := strings.Join(pos, " ")
	if prompt == "" || prompt == "-" {
		fmt.Fprintln(os.Stderr, "Reading prompt from stdin...")
		b, _ := io.ReadAll(os.Stdin)
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		return fail(1, "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.")
	}
	jsonOut := p.has("json")
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	emit := func(v any) {
		if jsonOut {
			_ = out.Encode(v)
		}
	}
	sc := scenario()
	if st.id == "" {
		st.id = newThreadID()
		if !p.has("ephemeral") {
			if path, err := newCodexRollout(st.id, "codex_exec"); err == nil {
				st.path = path
			}
		}
	}
	if sc == "banner_noise" {
		fmt.Println("codex (fake) banner: not json")
	}
	emit(map[string]any{"type": "thread.started", "thread_id": st.id})
	if sc == "banner_noise" {
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_w", "type": "error", "message": "model metadata not found (fake warning)"}})
		emit(map[string]any{"type": "fake.unknown_event", "x": 1})
	}
	emit(map[string]any{"type": "turn.started"})
	if sc == "hang" {
		hangForever()
	}
	st.submit(prompt)
	time.Sleep(turnDuration())
	end := func(code int) int {
		logEvent(map[string]any{"event": "exit", "code": code, "scenario": sc})
		return code
	}
	switch sc {
	case "turn_failed", "not_logged_in":
		msg := "stream disconnected before completion (fake)"
		if sc == "not_logged_in" {
			msg = "unexpected status 401 Unauthorized: not logged in (fake)"
		}
		emit(map[string]any{"type": "error", "message": msg})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
		if !jsonOut {
			fmt.Fprintln(os.Stderr, "ERROR: "+msg)
		}
		return end(1)
	case "stream_error_exit0":
		emit(map[string]any{"type": "error", "message": "stream disconnected (fake)"})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": "stream disconnected (fake)"}})
		return end(0)
	case "error_as_success":
		reply := "I hit an error (fake): upstream returned 500"
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "error", "message": "upstream returned 500 (fake)"}})
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": reply}})
		emit(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}})
		return end(0)
	}
	reply := "echo: " + prompt
	logLine(map[string]any{"message": prompt, "pid": os.Getpid()})
	st.reply(reply)
	emit(map[string]any{"type": "item.started", "item": map[string]any{"id": "item_0", "type": "command_execution", "command": "bash -lc true", "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
	emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "command_execution", "command": "bash -lc true", "aggregated_output": "", "exit_code": 0, "status": "completed"}})
	emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": reply}})
	emit(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 2400, "cached_input_tokens": 2000, "output_tokens": 40}})
	if !jsonOut {
		fmt.Println(reply)
	}
	if f := p.get("output-last-message"); f != "" {
		_ = os.WriteFile(f, []byte(reply), 0o644)
	}
	return end(0)
}
