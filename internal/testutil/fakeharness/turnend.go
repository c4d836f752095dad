package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// The fake TUIs end each turn the way the real ones do (see
// internal/harness/<name>/turnend.go and the captures in its testdata):
//
//   - claude runs the commands of the Stop hooks in <cwd>/.claude/
//     settings.local.json through sh, the payload on stdin;
//   - codex runs its notify program (-c notify=[…]) with the payload as one
//     more argument, and, for the first turn of a thread, once more for the
//     title it generates in a side thread (whose one input quotes the
//     message) — before the turn's own, the order that makes correlation
//     hardest;
//   - opencode cannot run leo's plugin module, so it does what that plugin
//     does: for each "plugin" entry of OPENCODE_CONFIG_CONTENT whose options
//     name a command, it runs the command with the plugin's payload on stdin
//     (internal/harness/opencode/testdata/signals): session.status busy as a
//     turn starts, permission.asked and .replied around its prompt
//     (opencode_permission.go), session.idle at the end — one after
//     another, in order.
//
// Hooks run in the background (the TUI keeps drawing) and are bounded.

const hookTimeout = 10 * time.Second

func runHook(harness string, argv []string, stdin []byte) {
	if len(argv) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	err := cmd.Run()
	ev := map[string]any{"event": "turn_end_hook", "harness": harness}
	if err != nil {
		ev["err"] = err.Error()
	}
	logEvent(ev)
}

// ---- claude -------------------------------------------------------------------

// claudeHookCommands are the commands of the hooks claude would run for
// event in the current directory.
func claudeHookCommands(event string) []string {
	data, err := os.ReadFile(filepath.Join(cwd(), ".claude", "settings.local.json"))
	if err != nil {
		return nil
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	var out []string
	for _, g := range s.Hooks[event] {
		for _, h := range g.Hooks {
			if h.Type == "command" && h.Command != "" {
				out = append(out, h.Command)
			}
		}
	}
	return out
}

// claudeHookKeys are the fields of claude 2.1.197's payload for each hook
// event beyond session_id, transcript_path, cwd, prompt_id and
// hook_event_name, as captured (internal/harness/claude/testdata/hooks;
// TestFakeClaudeHooksMatchReal): which carry permission_mode and effort.
var claudeHookKeys = map[string][]string{
	"UserPromptSubmit":  {"permission_mode"},
	"PreToolUse":        {"permission_mode", "effort"},
	"PermissionRequest": {"permission_mode", "effort"},
	"Notification":      nil,
	"PostToolUse":       {"permission_mode", "effort"},
	"Stop":              {"permission_mode", "effort"},
}

// claudeHooks runs hooks one after the other, in the order claude fired
// them, off the TUI's loop (the TUI keeps drawing).
var claudeHooks = sync.OnceValue(func() chan func() {
	ch := make(chan func(), 64)
	go func() {
		for f := range ch {
			f()
		}
	}()
	return ch
})

// claudeHook fires event with the fields of its payload beyond the common
// ones, as claude does: each command of the event's hooks, through sh, the
// payload on stdin.
func (s *claudeStore) hook(event string, fields map[string]any) {
	cmds := claudeHookCommands(event)
	if len(cmds) == 0 {
		return
	}
	payload := map[string]any{
		"session_id": s.id, "transcript_path": claudeTranscript(s.id), "cwd": claudeCwd(),
		"prompt_id": s.promptID, "hook_event_name": event,
	}
	for _, k := range claudeHookKeys[event] {
		switch k {
		case "permission_mode":
			payload[k] = s.mode
		case "effort":
			payload[k] = map[string]any{"level": "high"}
		}
	}
	for k, v := range fields {
		payload[k] = v
	}
	b, _ := json.Marshal(payload)
	claudeHooks() <- func() {
		for _, c := range cmds {
			runHook("claude", []string{"/bin/sh", "-c", c}, b)
		}
	}
}

// ---- codex ----------------------------------------------------------------------

// codexNotifyArgv is the notify program of the launch's -c overrides.
func codexNotifyArgv(p parsedArgs) []string {
	var argv []string
	for _, kv := range p.flags["config"] {
		if !strings.HasPrefix(strings.TrimSpace(kv), "notify") {
			continue
		}
		var v struct {
			Notify []string `toml:"notify"`
		}
		if toml.Unmarshal([]byte(kv), &v) == nil {
			argv = v.Notify
		}
	}
	return argv
}

// codexTitlePrompt is the start of codex 0.171.0's title-generation input.
const codexTitlePrompt = "Generate a concise, single-line task title of at most 36 characters and under five words where possible. Start with an imperative verb. Capitalize only the first word unless the user's language, proper nouns, acronyms, or code terms require otherwise. Preserve ticket references exactly. Write in the user's language. Do not use quotes, markdown, or trailing punctuation. Do not answer the request."

func codexNotify(notify []string, thread, turn string, inputs []string, reply string, first bool) {
	if len(notify) == 0 {
		return
	}
	payload := func(thread, turn string, inputs []string, reply string) string {
		b, _ := json.Marshal(map[string]any{
			"type": "agent-turn-complete", "thread-id": thread, "turn-id": turn, "cwd": cwd(),
			"client": "codex-tui", "input-messages": inputs, "last-assistant-message": reply,
		})
		return string(b)
	}
	var calls []string
	if first && len(inputs) > 0 {
		calls = append(calls, payload(newThreadID(), newThreadID(), []string{codexTitlePrompt + "\n\nUser prompt:\n" + inputs[0]}, "Side reply"))
	}
	calls = append(calls, payload(thread, turn, inputs, reply))
	go func() {
		for _, c := range calls {
			runHook("codex", append(append([]string(nil), notify...), c), nil)
		}
	}()
}

// ---- opencode ---------------------------------------------------------------------

// opencodeHookCommands are the commands of the plugin entries of the
// config overlay ([<module>, {"command": [...]}]).
func opencodeHookCommands() [][]string {
	var overlay struct {
		Plugin []json.RawMessage `json:"plugin"`
	}
	if json.Unmarshal([]byte(os.Getenv("OPENCODE_CONFIG_CONTENT")), &overlay) != nil {
		return nil
	}
	var out [][]string
	for _, raw := range overlay.Plugin {
		var entry []json.RawMessage
		if json.Unmarshal(raw, &entry) != nil || len(entry) != 2 {
			continue
		}
		var opts struct {
			Command []string `json:"command"`
		}
		if json.Unmarshal(entry[1], &opts) == nil && len(opts.Command) > 0 {
			out = append(out, opts.Command)
		}
	}
	return out
}

// opencodeSignals runs the plugin's commands one payload after another,
// in the events' order, as leo's plugin does (a later event's report never
// overtakes an earlier one's).
var (
	opencodeSignals     = make(chan []byte, 64)
	opencodeSignalsOnce sync.Once
)

// opencodeSignal sends one event the way leo's plugin does:
// {type, properties, messages, time} on the commands' stdin.
func opencodeSignal(typ string, props map[string]any, messages []any) {
	if len(opencodeHookCommands()) == 0 {
		return
	}
	if messages == nil {
		messages = []any{}
	}
	payload, _ := json.Marshal(map[string]any{"type": typ, "properties": props, "messages": messages, "time": time.Now().UnixMilli()})
	opencodeSignalsOnce.Do(func() {
		go func() {
			for p := range opencodeSignals {
				for _, c := range opencodeHookCommands() {
					runHook("opencode", c, p)
				}
			}
		}()
	})
	select {
	case opencodeSignals <- payload:
	default: // the plugin drops what it cannot queue too
	}
}

// opencodeBusy is session.status busy, sent once as a turn starts.
func opencodeBusy(session string) {
	opencodeSignal("session.status", map[string]any{"sessionID": session, "status": map[string]any{"type": "busy"}}, nil)
}

func opencodeIdle(session, input, reply string) {
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	opencodeSignal("session.idle", map[string]any{"sessionID": session}, []any{
		map[string]any{"info": map[string]any{"id": "msg_user", "sessionID": session, "role": "user"}, "parts": text(input + " ")},
		map[string]any{"info": map[string]any{"id": "msg_reply", "sessionID": session, "role": "assistant", "parentID": "msg_user"}, "parts": text(reply)},
	})
}
