package opencode

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// opencode has no hook setting; a plugin sees its events. leo's plugin
// (turnend_plugin.js) runs the hook command on session.idle (after every
// turn) and session.error (a failed turn, followed by session.idle), with
// the event and the turn's messages on stdin, and on the events attention
// needs (signal.go). It is loaded through the
// OPENCODE_CONFIG_CONTENT overlay with the command as its options, so
// nothing in the user's opencode config changes.
var _ harness.TurnEndSignaler = Opencode{}

//go:embed turnend_plugin.js
var turnEndPlugin []byte

// PluginFile is the name of leo's plugin module in the hook directory.
const PluginFile = "opencode-turn-end.js"

// TurnEndSignal writes the plugin module into hook.Dir (once; again only
// when its content changed) and adds it, with the hook command as its
// options, to the "plugin" list of the launch's config overlay.
func (Opencode) TurnEndSignal(_ context.Context, spec harness.LaunchSpec, cmd harness.Command, hook harness.TurnEndHook) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return cmd, err
	}
	if len(hook.Command) == 0 || !filepath.IsAbs(hook.Dir) {
		return cmd, errors.New("opencode: turn-end hook needs a command and an absolute directory")
	}
	path := filepath.Join(hook.Dir, PluginFile)
	if err := writePlugin(path); err != nil {
		return cmd, fmt.Errorf("opencode: turn-end plugin %s: %w", path, err)
	}
	overlay := map[string]any{}
	if s := cmd.Env[ConfigContentEnv]; s != "" {
		if err := json.Unmarshal([]byte(s), &overlay); err != nil {
			return cmd, fmt.Errorf("opencode: config overlay: %w", err)
		}
	}
	plugins, _ := overlay["plugin"].([]any)
	entry := []any{"file://" + path, map[string]any{"command": hook.Command}}
	overlay["plugin"] = append(plugins, entry)
	data, err := json.Marshal(overlay)
	if err != nil {
		return cmd, fmt.Errorf("opencode: config overlay: %w", err)
	}
	env := make(map[string]string, len(cmd.Env)+1)
	for k, v := range cmd.Env {
		env[k] = v
	}
	env[ConfigContentEnv] = string(data)
	cmd.Env = env
	return cmd, nil
}

func writePlugin(path string) error {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, turnEndPlugin) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return statefile.Write(path, turnEndPlugin, 0o600)
}

// pluginPayload is what leo's plugin writes on the hook's stdin: the event
// as opencode gave it, and the turn's messages in the shape of opencode's
// session messages API ({info, parts}).
type pluginPayload struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string          `json:"sessionID"`
		Error     json.RawMessage `json:"error"`
	} `json:"properties"`
	Messages []struct {
		Info struct {
			Role  string          `json:"role"`
			Error json.RawMessage `json:"error"`
		} `json:"info"`
		Parts []pluginPart `json:"parts"`
	} `json:"messages"`
}

type pluginPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
}

// ParseTurnEnd reads a turn's end from one payload of leo's plugin. The
// turn's input is the last user message (its text parts joined by
// newlines, as the witness reads them), the reply the text of the last
// assistant message after it that has any. session.error, or an assistant
// message that carries an error, fails the turn. The plugin's other
// payloads (a turn starting, a prompt: ParseSignal) are no turn's end:
// they give one with no input, which completes nothing.
func (Opencode) ParseTurnEnd(payload []byte) (harness.TurnEnd, error) {
	te, _, err := parseEnd(payload)
	return te, err
}

// midTurn are the plugin's payloads that are no turn's end.
var midTurn = map[string]bool{
	"session.status": true, "permission.asked": true, "permission.replied": true,
	"question.asked": true, "question.replied": true, "question.rejected": true,
}

// parseEnd is ParseTurnEnd, with the error that failed the turn as
// opencode gave it (session.error's, else the failed assistant message's).
func parseEnd(payload []byte) (harness.TurnEnd, json.RawMessage, error) {
	var p pluginPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return harness.TurnEnd{}, nil, fmt.Errorf("opencode: turn-end payload: %w", err)
	}
	te := harness.TurnEnd{SessionID: p.Properties.SessionID}
	var errRaw json.RawMessage
	switch {
	case p.Type == "session.idle":
	case p.Type == "session.error":
		te.Failed = true
		te.Error = turnError(p.Properties.Error)
		errRaw = p.Properties.Error
	case midTurn[p.Type]:
		return te, nil, nil
	default:
		return harness.TurnEnd{}, nil, fmt.Errorf("opencode: turn-end payload: type %q is not session.idle or session.error", p.Type)
	}
	user := -1
	for i := len(p.Messages) - 1; i >= 0; i-- {
		if p.Messages[i].Info.Role == "user" {
			user = i
			break
		}
	}
	if user < 0 {
		return te, errRaw, nil
	}
	if text, ok := textOf(p.Messages[user].Parts); ok {
		te.Inputs = []string{text}
	}
	for _, m := range p.Messages[user+1:] {
		if m.Info.Role != "assistant" {
			continue
		}
		if text, ok := textOf(m.Parts); ok {
			te.Reply = text
		}
		if e := turnError(m.Info.Error); e != "" {
			te.Failed = true
			if te.Error == "" {
				te.Error = e
			}
			if len(errRaw) == 0 {
				errRaw = m.Info.Error
			}
		}
	}
	return te, errRaw, nil
}

func textOf(parts []pluginPart) (string, bool) {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && !p.Synthetic {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

// turnError is a session.error's error in words (errorText, shared with
// the headless stream), "" when the event carries none.
func turnError(raw json.RawMessage) string {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return ""
	}
	return errorText(raw)
}
