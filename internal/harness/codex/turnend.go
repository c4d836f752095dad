package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// codex runs its `notify` program after every turn of the TUI with one
// more argument, a JSON object: type "agent-turn-complete", thread-id,
// turn-id, cwd, client, input-messages, last-assistant-message. It also
// runs it for its own side threads — the title it generates for a new
// thread is a turn of another thread whose one input quotes the user's
// message — so a payload is correlated by its inputs, never counted. A
// turn that failed (the model answered an error) runs no notify at all.
var _ harness.TurnEndSignaler = Codex{}

// notifyType is the one kind of notification codex 0.171.0 sends its
// notify program (its binary serializes no other variant; the TUI's own
// desktop notifications, "approval-requested" among them, are not sent
// there). docs/harness-behaviour/codex.md, "Turn end: notify".
const notifyType = "agent-turn-complete"

// TurnEndSignal adds `-c notify=[<hook>…]` to the launch, ahead of a
// `resume ID`. It replaces a notify of the user's config.toml for this
// agent (codex runs one notify program).
func (Codex) TurnEndSignal(_ context.Context, spec harness.LaunchSpec, cmd harness.Command, hook harness.TurnEndHook) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return cmd, err
	}
	if len(hook.Command) == 0 {
		return cmd, errors.New("codex: turn-end hook has no command")
	}
	add := []string{"-c", "notify=" + tomlArray(hook.Command)}
	at := len(cmd.Argv)
	if spec.SessionID != "" && at >= 2 && cmd.Argv[at-2] == "resume" {
		at -= 2 // flags go before the subcommand
	}
	cmd.Argv = slices.Insert(slices.Clone(cmd.Argv), at, add...)
	return cmd, nil
}

// notifyPayload is the JSON argument codex gives its notify program.
type notifyPayload struct {
	Type          string   `json:"type"`
	ThreadID      string   `json:"thread-id"`
	InputMessages []string `json:"input-messages"`
	LastAssistant *string  `json:"last-assistant-message"`
}

// ParseTurnEnd reads one notify payload.
func (Codex) ParseTurnEnd(payload []byte) (harness.TurnEnd, error) {
	var p notifyPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return harness.TurnEnd{}, fmt.Errorf("codex: notify payload: %w", err)
	}
	if p.Type != notifyType {
		return harness.TurnEnd{}, fmt.Errorf("codex: notify payload: type %q is not %s", p.Type, notifyType)
	}
	te := harness.TurnEnd{SessionID: p.ThreadID, Inputs: p.InputMessages}
	if p.LastAssistant != nil {
		te.Reply = *p.LastAssistant
	}
	return te, nil
}

var _ harness.SignalReader = Codex{}

// ParseSignal reads one notify payload as a signal: a turn of the agent's
// thread ended, with its last assistant message. The title side thread's
// turn ends too, often while the user's turn still runs (the title comes
// back first on a slow turn): it says nothing of the user's turn and is
// SignalNone, known by its one input, codex's title prompt quoting the
// message (titleTurn). A turn that failed runs no notify: its end is in
// the rollout (TurnActivity.Failed).
func (c Codex) ParseSignal(payload []byte) (harness.Signal, error) {
	te, err := c.ParseTurnEnd(payload)
	if err != nil {
		return harness.Signal{}, err
	}
	if titleTurn(te.Inputs) {
		return harness.Signal{SessionID: te.SessionID}, nil
	}
	return harness.TurnEndSignal(te), nil
}

// titlePrompt is how codex 0.171.0's title prompt begins and where the
// user's message starts in it ("Generate a concise, single-line task title
// of at most N characters … Do not answer the request.\n\nUser
// prompt:\n<message>"; testdata/turnend/codex-notify-title.json).
const (
	titlePrompt     = "Generate a concise, single-line task title of at most "
	titleUserPrompt = "Do not answer the request.\n\nUser prompt:\n"
)

// titleTurn reports whether a turn's inputs are the title side thread's:
// one input, codex's title prompt. A person's own message worded exactly
// like it reads as one too: its end is then seen in the rollout instead
// (the attention watcher), a second later.
func titleTurn(inputs []string) bool {
	return len(inputs) == 1 && strings.HasPrefix(inputs[0], titlePrompt) && strings.Contains(inputs[0], titleUserPrompt)
}
