package pi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// pi has no hook setting; an extension sees its events. leo's extension
// (turnend_extension.js) runs the hook command when pi starts and ends
// working on a prompt (agent_start, agent_end: pi's own events, never a
// timer). It is loaded with -e from a directory leo owns, the command in
// LEO_PI_HOOK, so nothing in the user's pi settings changes.
var (
	_ harness.TurnEndSignaler = Pi{}
	_ harness.SignalReader    = Pi{}
)

//go:embed turnend_extension.js
var turnEndExtension []byte

// ExtensionFile is the name of leo's extension in the hook directory.
const ExtensionFile = "pi-turn-end.js"

// HookEnv carries the hook command (a JSON array) to the extension.
const HookEnv = "LEO_PI_HOOK"

// TurnEndSignal writes the extension into hook.Dir (again only when its
// content changed) and adds `-e <it>` and the hook command to the launch.
func (Pi) TurnEndSignal(_ context.Context, spec harness.LaunchSpec, cmd harness.Command, hook harness.TurnEndHook) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return cmd, err
	}
	if len(hook.Command) == 0 || !filepath.IsAbs(hook.Dir) {
		return cmd, errors.New("pi: turn-end hook needs a command and an absolute directory")
	}
	path := filepath.Join(hook.Dir, ExtensionFile)
	if err := writeExtension(path); err != nil {
		return cmd, fmt.Errorf("pi: turn-end extension %s: %w", path, err)
	}
	data, err := json.Marshal(hook.Command)
	if err != nil {
		return cmd, err
	}
	if len(cmd.Argv) == 0 {
		return cmd, errors.New("pi: turn-end hook on an empty command")
	}
	argv := append([]string{cmd.Argv[0], "-e", path}, cmd.Argv[1:]...)
	env := maps.Clone(cmd.Env)
	if env == nil {
		env = map[string]string{}
	}
	env[HookEnv] = string(data)
	cmd.Argv, cmd.Env = argv, env
	return cmd, nil
}

func writeExtension(path string) error {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, turnEndExtension) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return statefile.Write(path, turnEndExtension, 0o600)
}

// hookPayload is what leo's extension writes on the hook's stdin.
type hookPayload struct {
	Source      string   `json:"source"`
	Event       string   `json:"event"`
	SessionFile string   `json:"session_file"`
	Retry       bool     `json:"retry"`
	Inputs      []string `json:"inputs"`
	Reply       string   `json:"reply"`
	StopReason  string   `json:"stop_reason"`
	Error       string   `json:"error"`
	Retrying    bool     `json:"retrying"`
}

func parsePayload(payload []byte) (hookPayload, error) {
	var p hookPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return p, fmt.Errorf("pi: hook payload: %w", err)
	}
	if p.Source != "leo-pi" {
		return p, errors.New("pi: hook payload is not from leo's pi extension")
	}
	return p, nil
}

// ParseTurnEnd reads a turn's end from an agent_end payload: its inputs,
// the reply, and a failure (stopReason "error") with pi's words. An
// interrupted turn ("aborted") ends without a failure. An error pi is
// about to retry, and agent_start, are no turn's end: they give one with
// no input, which completes nothing.
func (Pi) ParseTurnEnd(payload []byte) (harness.TurnEnd, error) {
	p, err := parsePayload(payload)
	if err != nil {
		return harness.TurnEnd{}, err
	}
	te := harness.TurnEnd{SessionID: fileID(p.SessionFile)}
	switch {
	case p.Event == "agent_start", p.Event == "agent_end" && p.Retrying:
		return te, nil
	case p.Event != "agent_end":
		return harness.TurnEnd{}, fmt.Errorf("pi: hook payload: event %q is not agent_start or agent_end", p.Event)
	}
	te.Inputs, te.Reply = p.Inputs, p.Reply
	if p.StopReason == "error" {
		te.Failed, te.Error, te.Reply = true, p.Error, ""
		if te.Error == "" {
			te.Error = "the model call failed"
		}
	}
	return te, nil
}

// ParseSignal reads one payload for attention: agent_start is a turn
// starting (a retry's: the turn goes on), agent_end its end — failed,
// limited (a rate or usage limit pi no longer retries), or done — and an
// error pi retries is the turn going on.
func (h Pi) ParseSignal(payload []byte) (harness.Signal, error) {
	p, err := parsePayload(payload)
	if err != nil {
		return harness.Signal{}, err
	}
	sid := fileID(p.SessionFile)
	switch p.Event {
	case "agent_start":
		if p.Retry {
			return harness.Signal{Kind: harness.SignalWorking, SessionID: sid}, nil
		}
		return harness.Signal{Kind: harness.SignalTurnStarted, SessionID: sid}, nil
	case "agent_end":
		if p.Retrying {
			return harness.Signal{Kind: harness.SignalWorking, SessionID: sid, Text: p.Error}, nil
		}
		te, err := h.ParseTurnEnd(payload)
		if err != nil {
			return harness.Signal{}, err
		}
		if te.Failed && limitPattern().MatchString(te.Error) {
			return harness.Signal{Kind: harness.SignalLimited, SessionID: sid, Text: te.Error}, nil
		}
		return harness.TurnEndSignal(te), nil
	}
	return harness.Signal{}, fmt.Errorf("pi: hook payload: event %q is not agent_start or agent_end", p.Event)
}
