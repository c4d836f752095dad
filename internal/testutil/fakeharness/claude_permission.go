package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The fake claude's permission prompt, imitating the real 2.1.197's
// (testdata/screens/claude/permission-bash_*, the hooks it fires in
// internal/harness/claude/testdata/hooks/permission-*; kept in step by
// TestFakeClaudePermissionMatchesReal and TestFakeClaudeHooksMatchReal).
//
// A message holding "fake-ask" makes its turn call Bash: with the command
// after "fake-ask:" up to the end of its line, else `touch x`. In
// permission mode default (claude's own default) the fake asks first:
//
//	● Bash(touch x)
//	  ⎿  Waiting…
//
//	──────────────────────────────
//	 Bash command
//
//	   touch x
//	   Run touch x
//
//	 Do you want to proceed?
//	 ❯ 1. Yes
//	   2. Yes, and always allow access to <workspace's name>/ from this project
//	   3. No
//
//	 Esc to cancel · Tab to amend · ctrl+e to explain
//	                                  and a blank row
//
// firing PreToolUse and PermissionRequest, and Notification
// (permission_prompt) once the prompt has waited FAKE_PERMISSION_NOTIFY_MS
// (default 6000, the real one's 6 s) unanswered. 1, or Enter on "Yes",
// runs the command (PostToolUse; the turn goes on and ends with Stop); 2
// does too and does not ask about that command again; 3, Escape or Ctrl+C
// drop the call and end the turn with no hook at all, as the real one
// does. Other keys are ignored while the prompt shows. In other modes the
// command runs without a prompt.

// claudeAskMarker in a message makes its turn ask.
const claudeAskMarker = "fake-ask"

// claudeAsk is the command msg's turn calls, if any.
func claudeAsk(msg string) (string, bool) {
	i := strings.Index(msg, claudeAskMarker)
	if i < 0 {
		return "", false
	}
	rest, ok := strings.CutPrefix(msg[i+len(claudeAskMarker):], ":")
	if !ok {
		return "touch x", true
	}
	cmd, _, _ := strings.Cut(rest, "\n")
	if cmd = strings.TrimSpace(cmd); cmd == "" {
		cmd = "touch x"
	}
	return cmd, true
}

// claudePermission is a prompt on screen.
type claudePermission struct {
	cmd   string
	useID string
	sel   int
	shown time.Time
}

func (p *claudePermission) choices() []string {
	return []string{"Yes", "Yes, and always allow access to " + filepath.Base(claudeCwd()) + "/ from this project", "No"}
}

// toolInput is the Bash call's input, as the model gives it.
func (p *claudePermission) toolInput() map[string]any {
	return map[string]any{"command": p.cmd, "description": "Run " + p.cmd}
}

// claudeNotifyDelay is how long a prompt waits before its notification.
func claudeNotifyDelay() time.Duration { return envMS("FAKE_PERMISSION_NOTIFY_MS", 6000) }

// claudeCallTool starts the Bash call of the turn in progress: asked
// about first, unless the mode or an earlier "don't ask again" says not.
func (t *tui) claudeCallTool(cmd string) {
	st, _ := t.store.(*claudeStore)
	if st == nil {
		return
	}
	p := &claudePermission{cmd: cmd, useID: "toolu_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24], shown: time.Now()}
	st.toolCall(p.useID, "Bash", p.toolInput()) // the model's answer, recorded before any question
	st.hook("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": p.toolInput(), "tool_use_id": p.useID})
	if st.skip || st.mode != "default" || t.allowed[cmd] {
		t.claudeRunTool(p)
		return
	}
	t.perm = p
	logEvent(map[string]any{"event": "permission_asked", "command": cmd})
	st.hook("PermissionRequest", map[string]any{"tool_name": "Bash", "tool_input": p.toolInput(),
		"permission_suggestions": []any{
			map[string]any{"type": "addDirectories", "directories": []string{claudeCwd()}, "destination": "session"},
			map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"},
		}})
	t.after(claudeNotifyDelay(), func() {
		if t.perm == p {
			st.hook("Notification", map[string]any{"message": "Claude needs your permission", "notification_type": "permission_prompt"})
		}
	})
}

// claudePermissionKey takes a key while the prompt shows.
func (t *tui) claudePermissionKey(ev event) {
	p := t.perm
	choose := -1
	switch ev.kind {
	case evText:
		switch ev.text {
		case "1", "2", "3":
			choose = int(ev.text[0] - '1')
		}
	case evUp:
		p.sel = max(0, p.sel-1)
	case evDown:
		p.sel = min(len(p.choices())-1, p.sel+1)
	case evEnter:
		choose = p.sel
	case evEscape, evCtrlC:
		choose = 2
	}
	switch choose {
	case 0, 1:
		if choose == 1 {
			t.allowed[p.cmd] = true
		}
		logEvent(map[string]any{"event": "permission_answered", "choice": p.choices()[choose]})
		t.perm = nil
		t.claudeRunTool(p)
	case 2:
		logEvent(map[string]any{"event": "permission_answered", "choice": "No"})
		t.perm = nil
		t.history = append(t.history, "● Bash("+p.cmd+")", "  ⎿  Interrupted · What should Claude do instead?", "")
		t.busy = false
		t.nextQueued()
	}
}

// claudeRunTool runs the call (the fake only says so) and lets the turn go
// on to its reply.
func (t *tui) claudeRunTool(p *claudePermission) {
	st := t.store.(*claudeStore)
	t.history = append(t.history, "● Bash("+p.cmd+")", "  ⎿  Done", "")
	st.toolResult(p.useID, "")
	st.hook("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": p.toolInput(), "tool_use_id": p.useID,
		"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": true},
		"duration_ms":   time.Since(p.shown).Milliseconds()})
	t.turnTimer = time.AfterFunc(turnDuration(), func() {
		select {
		case t.turnDoneCh <- struct{}{}:
		default:
		}
	})
}

// claudePermissionLines draws the prompt under the transcript, in place of
// the spinner, the box and the footer.
func (t *tui) claudePermissionLines(width int) []string {
	p := t.perm
	lines := []string{"● Bash(" + p.cmd + ")", "  ⎿  Waiting…", "", strings.Repeat("─", width), " Bash command", ""}
	lines = append(lines, indent("   ", "   ", p.cmd)...)
	lines = append(lines, "   Run "+p.cmd, "", " Do you want to proceed?")
	for i, c := range p.choices() {
		mark := "   "
		if i == p.sel {
			mark = " ❯ "
		}
		lines = append(lines, fmt.Sprintf("%s%d. %s", mark, i+1, c))
	}
	// The real one keeps a blank row under its footer (at 80x24 the
	// transcript scrolls one row further for it).
	return append(lines, "", " Esc to cancel · Tab to amend · ctrl+e to explain", "")
}
