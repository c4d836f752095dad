package pi

import (
	"errors"
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Interactive builds the resident TUI launch, run in the workspace:
//
//	pi [--session ID] [--model M] [--thinking L]
//	   [--tools a,b] [--append-system-prompt TEXT]
//
// A fresh launch names no session: pi starts one, and leo discovers its id
// after the first turn.
func (Pi) Interactive(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	argv := append([]string{"pi"}, commonArgs(spec)...)
	return harness.Command{Argv: argv, Dir: spec.Workspace}, nil
}

// Headless builds a one-shot run:
//
//	pi --mode json [--session ID] [options] [--] MESSAGE
//
// --mode json prints pi's events on stdout, one JSON object a line
// (stream.go). max_turns is ignored (pi has no per-turn cap).
func (Pi) Headless(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	if spec.Prompt == "" {
		return harness.Command{}, errors.New("pi: a headless run needs a prompt")
	}
	argv := append([]string{"pi", "--mode", "json"}, commonArgs(spec)...)
	if strings.HasPrefix(spec.Prompt, "-") {
		argv = append(argv, "--")
	}
	argv = append(argv, spec.Prompt)
	return harness.Command{Argv: argv, Dir: spec.Workspace}, nil
}

// checkSpec: pi chooses its own session ids, so an id means resume.
func checkSpec(spec harness.LaunchSpec) error {
	if spec.Workspace == "" {
		return errors.New("pi: launch spec has no workspace")
	}
	if spec.SessionID != "" && !spec.Resume {
		return errors.New("pi: cannot start a new session with a chosen id (" + spec.SessionID + "); pi ids are discovered after the first turn")
	}
	// pi takes a --session that names a path as that file: an id never
	// may (nor start like a flag).
	if id := spec.SessionID; strings.ContainsAny(id, "/\\ \t\n") || strings.HasSuffix(id, ".jsonl") || strings.HasPrefix(id, "-") {
		return errors.New("pi: session id " + strconv.Quote(id) + " is not a pi session id")
	}
	return nil
}

func commonArgs(spec harness.LaunchSpec) []string {
	var argv []string
	if spec.SessionID != "" {
		argv = append(argv, "--session", spec.SessionID)
	}
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	if l := spec.Options.String(optThinking); l != "" {
		argv = append(argv, "--thinking", l)
	}
	if t := spec.Options.Strings(optTools); len(t) > 0 {
		argv = append(argv, "--tools", strings.Join(t, ","))
	}
	// pi appends each --append-system-prompt in order (text, or the
	// contents of a file it names): the user's first, then leo's note.
	if p := spec.Options.String(optAppendSystem); strings.TrimSpace(p) != "" {
		argv = append(argv, "--append-system-prompt", p)
	}
	if n := (Pi{}).Nudge(spec.Bridge); n != "" {
		argv = append(argv, "--append-system-prompt", n)
	}
	return argv
}

// Nudge (harness.Nudger) is what pi is told of leo: pi has no MCP, so instead of leo's MCP
// tools it names the leo CLI, which pi's bash tool runs (the agent's
// environment carries LEO_AGENT, which signs what it sends, and LEO_HOME).
// "" without a bridge: leo's messaging is off for the launch.
func (Pi) Nudge(b *harness.MCPBridge) string {
	if b == nil || b.Command == "" {
		return ""
	}
	leo := harness.ShellQuote(b.Command)
	return "You are running under leo, which keeps this agent alive and delivers messages to it. " +
		"A message from another agent starts with \"[message from <name>]\".\n" +
		"To work with other leo agents, run the leo CLI with your bash tool:\n" +
		"- " + leo + " agent list — the agents and their state;\n" +
		"- " + leo + " agent send <name> <message> — send a message (signed with your name); add --reply to wait for and print its answer;\n" +
		"- " + leo + " --help — everything else (tasks, templates)."
}
