package claude

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Interactive builds the resident TUI launch:
//
//	claude [--session-id ID | --resume ID] [--model M] [--permission-mode X]
//	       [--dangerously-skip-permissions] [--remote-control[=NAME]]
//	       [--agent A] [--allowedTools a,b] [--disallowedTools c,d]
//	       [--append-system-prompt TEXT] [--channels C]...
//	       [--dangerously-load-development-channels D]... [--mcp-config JSON]
//
// --remote-control takes the agent name as the session's display name.
// Channel flags repeat once per value so no variadic flag can swallow a
// following argument.
func (Claude) Interactive(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	argv := []string{"claude"}
	argv = append(argv, sessionArgs(spec)...)
	argv = append(argv, commonArgs(spec, true)...)
	for _, c := range spec.Channels {
		argv = append(argv, "--channels", c)
	}
	for _, c := range spec.DevChannels {
		argv = append(argv, "--dangerously-load-development-channels", c)
	}
	argv = append(argv, mcpArgs(spec.Bridge)...)
	return harness.Command{Argv: argv, Dir: spec.Workspace}, nil
}

// Headless builds a one-shot run:
//
//	claude -p PROMPT --output-format stream-json --verbose [--max-turns N]
//	       [--session-id ID | --resume ID] [--model M] [permission, agent, tool
//	       and system-prompt flags] [--mcp-config JSON]
//
// stream-json with -p requires --verbose. remote_control and channels are
// left out: both only mean something for a live interactive session. A
// prompt that starts with "-" goes last, after "--", so it is never parsed
// as a flag.
func (Claude) Headless(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	if spec.Prompt == "" {
		return harness.Command{}, errors.New("claude: a headless run needs a prompt")
	}
	dashPrompt := strings.HasPrefix(spec.Prompt, "-")
	argv := []string{"claude", "-p"}
	if !dashPrompt {
		argv = append(argv, spec.Prompt)
	}
	argv = append(argv, "--output-format", "stream-json", "--verbose")
	if spec.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(spec.MaxTurns))
	}
	argv = append(argv, sessionArgs(spec)...)
	argv = append(argv, commonArgs(spec, false)...)
	argv = append(argv, mcpArgs(spec.Bridge)...)
	if dashPrompt {
		argv = append(argv, "--", spec.Prompt)
	}
	return harness.Command{Argv: argv, Dir: spec.Workspace}, nil
}

func checkSpec(spec harness.LaunchSpec) error {
	if spec.Workspace == "" {
		return errors.New("claude: launch spec has no workspace")
	}
	return nil
}

func sessionArgs(spec harness.LaunchSpec) []string {
	switch {
	case spec.SessionID == "":
		return nil
	case spec.Resume:
		return []string{"--resume", spec.SessionID}
	default:
		return []string{"--session-id", spec.SessionID}
	}
}

// commonArgs are the model and harness_options flags shared by both launch
// forms; remote control only applies to the interactive one.
func commonArgs(spec harness.LaunchSpec, interactive bool) []string {
	var argv []string
	o := spec.Options
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	if m := o.String(optPermissionMode); m != "" {
		argv = append(argv, "--permission-mode", m)
	}
	if bypass, _ := o.Bool(optBypassPermissions); bypass {
		argv = append(argv, "--dangerously-skip-permissions")
	}
	if rc, _ := o.Bool(optRemoteControl); rc && interactive {
		// --remote-control=NAME, not "--remote-control NAME": the name is an
		// optional value, and the = form can never be read as a positional.
		if spec.Name != "" {
			argv = append(argv, "--remote-control="+spec.Name)
		} else {
			argv = append(argv, "--remote-control")
		}
	}
	if a := o.String(optAgent); a != "" {
		argv = append(argv, "--agent", a)
	}
	if t := allowedTools(spec); len(t) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(t, ","))
	}
	if t := o.Strings(optDisallowedTools); len(t) > 0 {
		argv = append(argv, "--disallowedTools", strings.Join(t, ","))
	}
	if p := appendSystemPrompt(spec); p != "" {
		argv = append(argv, "--append-system-prompt", p)
	}
	return argv
}

// bridgeTools is claude's permission rule for every tool of leo's MCP
// server (named "leo" in --mcp-config): claude names them mcp__leo__<tool>.
const bridgeTools = "mcp__leo"

// allowedTools is the user's allowed_tools option, plus leo's own MCP tools
// when the bridge is wired: otherwise claude asks before each call, and a
// permission prompt in an unattended TUI hangs the turn (a headless run
// denies the call). A user's disallowed_tools still wins (claude's deny
// rules come first).
func allowedTools(spec harness.LaunchSpec) []string {
	t := spec.Options.Strings(optAllowedTools)
	if spec.Bridge == nil || slices.Contains(t, bridgeTools) {
		return t
	}
	return append(slices.Clip(t), bridgeTools)
}

// appendSystemPrompt is the user's append_system_prompt option, followed by
// leo's nudge toward leo_skill when the bridge is wired (claude takes the
// flag once, so the two share it; the user's text comes first, untouched).
func appendSystemPrompt(spec harness.LaunchSpec) string {
	p := spec.Options.String(optAppendSystemPrompt)
	if spec.Bridge == nil {
		return p
	}
	if p == "" {
		return harness.BridgeNudge
	}
	return p + "\n\n" + harness.BridgeNudge
}

// mcpArgs wires leo's MCP server in as an inline --mcp-config JSON. Only the
// bridge's own env (LEO_HOME, LEO_URL) rides along; the server reads its
// token from a file, so no secret reaches argv.
//
// alwaysLoad (claude 2.1.197): its tools are always in the tool list, never
// deferred behind tool search, and a headless run connects the server
// before its one turn instead of in the background (read in claude's code;
// the real suite's "MCP in a task run" step proves the tools are there).
// The TUI still connects it in the background: a message delivered in the
// first seconds can go out before leo's tools are listed.
func mcpArgs(b *harness.MCPBridge) []string {
	if b == nil {
		return nil
	}
	server := map[string]any{
		"type":       "stdio",
		"command":    b.Command,
		"args":       nonNil(b.Args),
		"alwaysLoad": true,
	}
	if env := b.ServerEnv(); len(env) > 0 {
		server["env"] = env
	}
	cfg := map[string]any{"mcpServers": map[string]any{"leo": server}}
	data, _ := json.Marshal(cfg) // maps of strings always marshal
	return []string{"--mcp-config", string(data)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
