package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// claude runs the commands of its Stop hooks after every turn of the TUI,
// and those of its StopFailure hooks instead when the turn ended in an API
// error, with a JSON payload on stdin (session_id, transcript_path,
// prompt_id, hook_event_name, last_assistant_message; StopFailure adds
// error). leo's hook goes into the workspace's .claude/settings.local.json,
// which claude reads for every session started there. The same hook is
// registered for the events that tell attention what the TUI is doing
// (SignalEvents, read by ParseSignal; docs/harness-behaviour/claude.md,
// "Hooks leo registers").
var _ harness.TurnEndSignaler = Claude{}

// SignalEvents are the hook events leo registers, in the order claude
// fires them in a turn that asks permission (captured on 2.1.197 and
// 2.1.332, testdata/hooks/permission-approved_*): the prompt taken, a
// permission prompt shown (at once; the Notification about it comes 6 s
// later, and only if nobody answered), the tool run after an answer (or
// failed), the turn's end. All exist in 2.1.197.
var SignalEvents = []string{
	"UserPromptSubmit", "PermissionRequest", "Notification",
	"PostToolUse", "PostToolUseFailure", "Stop", "StopFailure",
}

// hookTimeout is how long claude lets leo's hook run (seconds; the hook
// itself gives up much sooner).
const hookTimeout = 10

// SettingsLocalPath is the workspace's own, uncommitted claude settings.
func SettingsLocalPath(workspace string) string {
	return filepath.Join(workspace, ".claude", "settings.local.json")
}

// TurnEndSignal merges leo's hook for each of SignalEvents into the
// workspace's .claude/settings.local.json; the launch itself is unchanged.
func (Claude) TurnEndSignal(_ context.Context, spec harness.LaunchSpec, cmd harness.Command, hook harness.TurnEndHook) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return cmd, err
	}
	if len(hook.Command) < 2 {
		return cmd, errors.New("claude: turn-end hook needs a program and its arguments")
	}
	return cmd, MergeHooks(SettingsLocalPath(spec.Workspace), hook.Command)
}

// MergeHooks makes the settings file at path run command (argv, quoted for
// the shell claude runs it with) on each of SignalEvents. Every other key,
// hook and matcher group is kept; a leo entry of an earlier leo binary
// (same arguments, another program path) is replaced, not duplicated.
// Nothing is written when the file already says so; the write is atomic
// and keeps the file's mode. A file that is not a JSON object (or whose
// hooks are not shaped as claude reads them) is left alone and reported.
func MergeHooks(path string, command []string) error {
	top, err := readJSONFile(path)
	if err != nil {
		return err
	}
	hooks, err := objectAt(top, "hooks")
	if err != nil {
		return fmt.Errorf("%s: hooks is not an object, leaving it alone: %w", path, err)
	}
	want := harness.ShellJoin(command)
	// Any leo's entry ends with the same arguments, whatever the path of
	// the binary that wrote it.
	leoSuffix := " " + harness.ShellJoin(command[1:])
	changed := false
	for _, event := range SignalEvents {
		groups, ok, err := mergeEvent(hooks[event], want, leoSuffix)
		if err != nil {
			return fmt.Errorf("%s: hooks.%s: %v, leaving it alone", path, event, err)
		}
		if ok {
			continue
		}
		if hooks[event], err = json.Marshal(groups); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	if top["hooks"], err = json.Marshal(hooks); err != nil {
		return err
	}
	return writeJSONFile(path, top, 0o755)
}

// mergeEvent returns the matcher groups of one hook event with leo's entry
// in it, and ok when raw already had exactly that (nothing to write).
func mergeEvent(raw json.RawMessage, want, leoSuffix string) (groups []map[string]json.RawMessage, ok bool, err error) {
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, false, errors.New("not a list of matcher groups")
		}
	}
	found, stale := false, false
	kept := groups[:0]
	for _, g := range groups {
		var entries []map[string]json.RawMessage
		if r, has := g["hooks"]; has && string(r) != "null" {
			if err := json.Unmarshal(r, &entries); err != nil {
				return nil, false, errors.New("a matcher group's hooks is not a list")
			}
		}
		var keep []map[string]json.RawMessage
		for _, e := range entries {
			var c string
			_ = json.Unmarshal(e["command"], &c)
			switch {
			case c == want && !found:
				found = true
			case c == want || strings.HasSuffix(c, leoSuffix):
				stale = true // a duplicate, or an older leo binary's
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) == 0 && len(entries) > 0 {
			continue // the group held only leo's stale entries
		}
		if len(keep) != len(entries) {
			if g["hooks"], err = json.Marshal(keep); err != nil {
				return nil, false, err
			}
		}
		kept = append(kept, g)
	}
	if found && !stale {
		return nil, true, nil
	}
	groups = kept
	if !found {
		entry := map[string]any{"type": "command", "command": want, "timeout": hookTimeout}
		hooks, _ := json.Marshal([]any{entry})
		groups = append(groups, map[string]json.RawMessage{"hooks": hooks})
	}
	return groups, false, nil
}

// stopPayload is what claude gives a Stop or StopFailure hook on stdin.
type stopPayload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	PromptID       string          `json:"prompt_id"`
	Event          string          `json:"hook_event_name"`
	LastAssistant  *string         `json:"last_assistant_message"`
	Error          json.RawMessage `json:"error"`
	ErrorDetails   json.RawMessage `json:"error_details"`
}

// ParseTurnEnd reads a Stop or StopFailure payload. The payload does not
// carry the user's message: it is read from the transcript the payload
// names — the user entries of the turn's prompt_id, which claude may write
// only after the hook started (see promptInputs), so this can take
// seconds: call it off the hook's request.
func (Claude) ParseTurnEnd(payload []byte) (harness.TurnEnd, error) {
	var p stopPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return harness.TurnEnd{}, fmt.Errorf("claude: turn-end payload: %w", err)
	}
	te := harness.TurnEnd{SessionID: p.SessionID}
	if p.LastAssistant != nil {
		te.Reply = *p.LastAssistant
	}
	switch p.Event {
	case "Stop":
	case "StopFailure":
		te.Failed = true
		te.Error = failureText(p.Error, p.ErrorDetails, p.LastAssistant)
	default:
		return harness.TurnEnd{}, fmt.Errorf("claude: turn-end payload: hook_event_name %q is not Stop or StopFailure", p.Event)
	}
	inputs, err := promptInputs(p.TranscriptPath, p.PromptID)
	if err != nil {
		return te, fmt.Errorf("claude: turn-end transcript: %w", err)
	}
	te.Inputs = inputs
	return te, nil
}

// rawText is a JSON string's value, or the compact JSON of anything else.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// promptEntry is the part of a transcript line promptInputs reads.
type promptEntry struct {
	transcriptEntry
	PromptID string `json:"promptId"`
}

// claude 2.1.197 runs the Stop hook before it has written the turn to the
// transcript (the file may not even exist yet after a new session's first
// turn), so the turn's entries are waited for, this long at most.
var (
	transcriptWait = 10 * time.Second
	transcriptPoll = 50 * time.Millisecond
	// afterMiss is called after each read that did not find the prompt
	// (tests append the entry then).
	afterMiss = func() {}
)

// promptInputs reads the user messages of promptID from the last
// transcriptTail bytes of the transcript at path (an absolute .jsonl),
// waiting up to transcriptWait for them to be written. Without a promptID,
// or when it never shows, it is the last user message.
func promptInputs(path, promptID string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	if !filepath.IsAbs(path) || filepath.Ext(path) != ".jsonl" {
		return nil, fmt.Errorf("transcript_path %q is not an absolute .jsonl path", path)
	}
	deadline := time.Now().Add(transcriptWait)
	for {
		byPrompt, last, err := readPrompt(path, promptID)
		switch {
		case len(byPrompt) > 0:
			return byPrompt, nil
		case promptID == "" || !time.Now().Before(deadline):
			if err != nil {
				return nil, err
			}
			return last, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		afterMiss()
		time.Sleep(transcriptPoll)
	}
}

// readPrompt reads the transcript's tail once: the user messages of
// promptID, and the last user message.
func readPrompt(path, promptID string) (byPrompt, last []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("transcript %s is not a regular file", path)
	}
	start := max(0, info.Size()-transcriptTail)
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, nil, err
	}
	r := bufio.NewReader(io.LimitReader(f, transcriptTail))
	first := start > 0 // a line cut by the tail is skipped
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && !first {
			var e promptEntry
			if json.Unmarshal(line, &e) == nil && e.Type == "user" && e.Message.Role == "user" &&
				!e.IsMeta && !e.IsSidechain && !e.IsCompactSummary {
				if text, ok := userText(e.Message.Content); ok {
					if promptID != "" && e.PromptID == promptID {
						byPrompt = append(byPrompt, text)
					}
					last = []string{text}
				}
			}
		}
		first = false
		if err != nil {
			break
		}
	}
	return byPrompt, last, nil
}

var _ harness.WorkspaceFiler = Claude{}

// WorkspaceFiles is the settings file TurnEndSignal writes leo's hooks to.
func (Claude) WorkspaceFiles(workspace string) []string {
	return []string{SettingsLocalPath(workspace)}
}
