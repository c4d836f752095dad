package codex

import (
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// codex carries leo's nudge as developer_instructions, only with the bridge.
func TestNudgeRidesDeveloperInstructionsOnlyWithTheBridge(t *testing.T) {
	want := "developer_instructions=" + tomlString(harness.BridgeNudge)
	for _, bridged := range []bool{true, false} {
		spec := harness.LaunchSpec{Workspace: t.TempDir(), Prompt: "p"}
		if bridged {
			spec.Bridge = &harness.MCPBridge{Command: "/leo", Args: []string{"mcp-server"}}
		}
		for form, build := range map[string]func(harness.LaunchSpec) (harness.Command, error){"interactive": Codex{}.Interactive, "headless": Codex{}.Headless} {
			cmd, err := build(spec)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.Index(cmd.Argv, want)
			if got := i > 0 && cmd.Argv[i-1] == "-c"; got != bridged {
				t.Errorf("%s, bridged %v: nudge present %v in %q", form, bridged, got, cmd.Argv)
			}
		}
	}
}
