package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The permission scenario (claude only, -scenario permission-bash): a turn
// the model server answers with a Bash call of `touch x`, which claude
// (permission_mode default) asks a person about. Its screens go to
// testdata/screens/claude/, and the payloads of every hook event of
// hookEvents that claude fired meanwhile, in order, one a line, to
// internal/harness/claude/testdata/hooks/<turn>_v<version>.jsonl:
//
//	permission-approved  the prompt (captured), answered "1" (Yes), the turn ends
//	permission-denied    the prompt again, answered Escape (No)
//	idle-prompt          no input for a while after a turn: claude's idle notification
//	rate-limited         a turn answered HTTP 429 (no retries): StopFailure
//	refused              a turn answered HTTP 400: StopFailure
const permissionScenario = "permission-bash"

// hookEvents are the events the capture listens to: more than leo
// registers (claude.SignalEvents), so that the capture shows what else
// fires around a permission prompt.
var hookEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PermissionDenied",
	"Notification", "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure",
}

// permissionTools are the calls claude asks permission for, by the
// marker of the message that asks for them.
var permissionTools = map[string]modelserver.ToolCall{
	"LEO-perm-001": {Name: "Bash", Input: `{"command":"touch x","description":"Create the file x"}`},
	"LEO-perm-002": {Name: "Bash", Input: `{"command":"touch y","description":"Create the file y"}`},
}

func runPermission(bin, size, out string) error {
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	var status atomic.Int32
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if q.Side {
			return modelserver.DefaultResponder(q)
		}
		if s := status.Load(); s != 0 {
			return modelserver.Reply{Status: int(s)}
		}
		last := ""
		if len(q.Markers) > 0 {
			last = q.Markers[len(q.Markers)-1]
		}
		if tool, ok := permissionTools[last]; ok && len(q.ToolResults) == 0 {
			return modelserver.Reply{ToolCall: &tool}
		}
		return modelserver.DefaultResponder(q)
	})
	c, err := realcli.NewCapture("claude", bin, ms.URL, "capperm")
	if err != nil {
		return err
	}
	defer c.Close()
	hooksFile := filepath.Join(c.Home, "hooks.jsonl")
	if err := writeCaptureHooks(c.Workspace, hooksFile); err != nil {
		return err
	}
	// claude's idle notification comes after a minute without input by
	// default; the capture waits less.
	if err := setClaudeJSON(c.Home, "messageIdleNotifThresholdMs", 5000); err != nil {
		return err
	}
	// No retries: a 429 or a 400 ends the turn at once (StopFailure).
	// The permission mode is named, as leo names a configured one: 2.1.332
	// defaults to "auto", which asks nobody.
	sc, err := newScene(c, "claude", bin, size, out, claude.Claude{}.Screen(),
		"env", "CLAUDE_CODE_MAX_RETRIES=0", filepath.Join(bin, "claude"), "--permission-mode", "default")
	if err != nil {
		return err
	}
	stable, idle, save, keys, send, version := sc.stable, sc.idle, sc.save, sc.keys, sc.send, sc.version
	if _, err := stable("ready", 3*time.Minute, idle); err != nil {
		return err
	}
	// waitHooks waits until the hooks wrote want, in order (each hook
	// appends its payload when claude runs it).
	waitHooks := func(what string, want ...string) error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			data, _ := os.ReadFile(hooksFile)
			if hasEvents(data, want) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: hooks fired %s, want %v in that order", what, eventNames(data), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// hooks moves what the hooks wrote so far into the adapter's testdata
	// as turn's capture, once they wrote want.
	hooks := func(turn string, want ...string) error {
		werr := waitHooks(turn, want...)
		data, err := os.ReadFile(hooksFile)
		if err != nil {
			return err
		}
		if err := os.Truncate(hooksFile, 0); err != nil {
			return err
		}
		p := filepath.Join("internal", "harness", "claude", "testdata", "hooks", fmt.Sprintf("%s_v%s.jsonl", turn, version))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		log.Printf("%s: %s", p, eventNames(data))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		return werr
	}
	prompt := func(s string) bool { return strings.Contains(s, "Do you want to proceed?") }
	_ = os.Truncate(hooksFile, 0) // SessionStart

	// Approved: the prompt, then "1".
	if err := send("please create the file x LEO-perm-001"); err != nil {
		return err
	}
	s, err := stable("permission prompt", 2*time.Minute, prompt)
	if err != nil {
		return err
	}
	if err := save(permissionScenario, s); err != nil {
		return err
	}
	// claude notifies about the prompt once it has waited 6 s unanswered.
	if err := waitHooks("permission prompt", "UserPromptSubmit", "PermissionRequest", "Notification"); err != nil {
		return err
	}
	if err := keys("1"); err != nil {
		return err
	}
	s, err = stable("answered after approval", 2*time.Minute, func(s string) bool {
		return strings.Contains(s, "ACK LEO-perm-001") && idle(s)
	})
	if err != nil {
		return err
	}
	if err := save("ready-after-permission", s); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(c.Workspace, "x")); err != nil {
		return fmt.Errorf("approved, yet the command did not run: %v", err)
	}
	if err := hooks("permission-approved", "UserPromptSubmit", "PermissionRequest", "Notification", "PostToolUse", "Stop"); err != nil {
		return err
	}
	// The idle notification, a few seconds after that turn.
	if err := hooks("idle-prompt", "Notification"); err != nil {
		return err
	}

	// Denied: the prompt again (another file), then Escape.
	if err := send("please create the file y LEO-perm-002"); err != nil {
		return err
	}
	if _, err := stable("second permission prompt", 2*time.Minute, func(s string) bool { return prompt(s) && strings.Contains(s, "touch y") }); err != nil {
		return err
	}
	if err := waitHooks("second permission prompt", "UserPromptSubmit", "PermissionRequest", "Notification"); err != nil {
		return err
	}
	if err := keys("Escape"); err != nil {
		return err
	}
	s, err = stable("idle after denial", time.Minute, idle)
	if err != nil {
		return err
	}
	if err := save("ready-after-permission-denied", s); err != nil {
		return err
	}
	if err := hooks("permission-denied", "UserPromptSubmit", "PermissionRequest", "Notification"); err != nil {
		return err
	}

	// Limited: HTTP 429, no retries.
	status.Store(http.StatusTooManyRequests)
	if err := send("this turn is rate limited LEO-lim-001"); err != nil {
		return err
	}
	if _, err := stable("429 shown", 2*time.Minute, func(s string) bool {
		return strings.Contains(strings.ReplaceAll(s, "LEO-lim-001", ""), "429") && idle(s)
	}); err != nil {
		return err
	}
	if err := hooks("rate-limited", "UserPromptSubmit", "StopFailure"); err != nil {
		return err
	}
	// Refused: HTTP 400.
	status.Store(http.StatusBadRequest)
	if err := send("this turn is refused LEO-ref-001"); err != nil {
		return err
	}
	if _, err := stable("400 shown", 2*time.Minute, func(s string) bool {
		return strings.Contains(strings.ReplaceAll(s, "LEO-ref-001", ""), "400") && idle(s)
	}); err != nil {
		return err
	}
	status.Store(0)
	if err := hooks("refused", "UserPromptSubmit", "StopFailure"); err != nil {
		return err
	}
	log.Printf("requests: %s", modelserver.Summary(ms.Requests()))
	return nil
}

// writeCaptureHooks makes claude append each hook payload of hookEvents to
// file, one a line.
func writeCaptureHooks(workspace, file string) error {
	cmd := fmt.Sprintf("cat >> %s; echo >> %s", harness.ShellJoin([]string{file}), harness.ShellJoin([]string{file}))
	hooks := map[string]any{}
	for _, e := range hookEvents {
		hooks[e] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": 10}}}}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		return err
	}
	p := claude.SettingsLocalPath(workspace)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// setClaudeJSON sets one key of ~/.claude.json.
func setClaudeJSON(home, key string, v any) error {
	p := filepath.Join(home, ".claude.json")
	m := map[string]any{}
	if b, err := os.ReadFile(p); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
	}
	m[key] = v
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o600)
}

// eventNames are the hook_event_name of each line of data, in order.
func eventNames(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		var p struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal([]byte(l), &p) == nil && p.Event != "" {
			out = append(out, p.Event)
		}
	}
	return out
}

// hasEvents reports whether data holds each of want, in that order.
func hasEvents(data []byte, want []string) bool {
	got := eventNames(data)
	i := 0
	for _, e := range got {
		if i < len(want) && e == want[i] {
			i++
		}
	}
	return i == len(want)
}
