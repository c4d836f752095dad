package harness

import (
	"context"
	"strings"
)

// TurnEndSignaler is implemented by adapters whose TUI can tell leo that a
// turn ended, through the harness's own mechanism (claude's Stop hook,
// codex's notify program, an opencode plugin). Persistent tasks learn
// their outcome this way: the harness runs leo's hook command, which posts
// the harness's payload to the daemon, which hands it back to the adapter
// (ParseTurnEnd).
type TurnEndSignaler interface {
	// TurnEndSignal makes the harness run hook.Command after every turn of
	// the interactive launch of spec. It sets up what the adapter owns
	// outside the launch (idempotent, atomic, keeping the user's own
	// settings) and returns cmd — what Interactive(spec) built — with what
	// the launch needs added (argv, env).
	TurnEndSignal(ctx context.Context, spec LaunchSpec, cmd Command, hook TurnEndHook) (Command, error)
	// ParseTurnEnd reads one payload the harness gave the hook. Unknown
	// fields are ignored; a payload that is not the harness's is an error.
	ParseTurnEnd(payload []byte) (TurnEnd, error)
}

// TurnEndHook is the program a harness runs at the end of a turn.
type TurnEndHook struct {
	// Command is the absolute leo binary and its arguments
	// (`<leo> hook turn-end --harness <name>`). The harness adds its
	// payload (on stdin, or as one more argument).
	Command []string
	// Dir is a directory leo owns (under its state dir) where an adapter
	// may keep files the signal needs (opencode's plugin module).
	Dir string
}

// TurnEnd is one turn's end as the harness reported it.
type TurnEnd struct {
	// SessionID is the conversation (claude session, codex thread,
	// opencode session) the turn belongs to.
	SessionID string
	// Inputs are the user messages of the turn, as the harness stored
	// them.
	Inputs []string
	// Reply is the final assistant text ("" when there was none).
	Reply string
	// Failed: the harness said the turn ended in an error; Error is that
	// error in its words.
	Failed bool
	Error  string
}

// ShellQuote quotes one word for a POSIX shell (claude runs a hook's
// command through one).
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes each word of argv and joins them with spaces.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
