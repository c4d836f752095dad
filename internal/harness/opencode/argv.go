package opencode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// ConfigContentEnv is the variable opencode deep-merges over its own config.
const ConfigContentEnv = "OPENCODE_CONFIG_CONTENT"

// Interactive builds the resident TUI launch, run in the workspace:
//
//	opencode [--model M] [-s ID]
//
// with permission and the MCP bridge in OPENCODE_CONFIG_CONTENT.
func (Opencode) Interactive(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	argv := append([]string{"opencode"}, commonArgs(spec)...)
	return command(spec, argv)
}

// Headless builds a one-shot run:
//
//	opencode run --format json --dir WS [--model M] [-s ID] MESSAGE
//
// max_turns is ignored (opencode has no per-turn cap). A message starting
// with "-" is preceded by "--" so it is never parsed as a flag.
func (Opencode) Headless(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	if spec.Prompt == "" {
		return harness.Command{}, errors.New("opencode: a headless run needs a prompt")
	}
	argv := []string{"opencode", "run", "--format", "json", "--dir", spec.Workspace}
	argv = append(argv, commonArgs(spec)...)
	if strings.HasPrefix(spec.Prompt, "-") {
		argv = append(argv, "--")
	}
	argv = append(argv, spec.Prompt)
	return command(spec, argv)
}

// checkSpec: opencode chooses its own session ids, so an id means resume.
func checkSpec(spec harness.LaunchSpec) error {
	if spec.Workspace == "" {
		return errors.New("opencode: launch spec has no workspace")
	}
	if spec.SessionID != "" && !spec.Resume {
		return fmt.Errorf("opencode: cannot start a new session with a chosen id (%s); opencode ids are discovered after the first turn", spec.SessionID)
	}
	return nil
}

func commonArgs(spec harness.LaunchSpec) []string {
	var argv []string
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	if spec.SessionID != "" {
		argv = append(argv, "-s", spec.SessionID)
	}
	return argv
}

func command(spec harness.LaunchSpec, argv []string) (harness.Command, error) {
	cmd := harness.Command{Argv: argv, Dir: spec.Workspace}
	overlay, err := ConfigOverlay(spec)
	if err != nil {
		return harness.Command{}, err
	}
	if overlay != "" {
		cmd.Env = map[string]string{ConfigContentEnv: overlay}
	}
	return cmd, nil
}

// ConfigOverlay is the JSON leo puts in OPENCODE_CONFIG_CONTENT: the
// permission option as is, and leo's MCP server as mcp.leo when the bridge is
// on. "" when there is nothing to overlay. The bridge env carries no secret
// (the MCP server reads its token from a file).
func ConfigOverlay(spec harness.LaunchSpec) (string, error) {
	overlay := map[string]any{}
	if p := spec.Options.Map(optPermission); len(p) > 0 {
		overlay["permission"] = p
	}
	if b := spec.Bridge; b != nil {
		overlay["mcp"] = map[string]any{
			"leo": map[string]any{
				"type":        "local",
				"command":     append([]string{b.Command}, b.Args...),
				"environment": b.ServerEnv(),
				"enabled":     true,
			},
		}
	}
	if len(overlay) == 0 {
		return "", nil
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		return "", fmt.Errorf("opencode: permission option cannot be encoded as JSON: %w", err)
	}
	return string(data), nil
}
