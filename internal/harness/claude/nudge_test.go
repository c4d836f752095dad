package claude

import (
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// leo's nudge rides claude's one --append-system-prompt flag after the
// user's own text, and only when the bridge (so leo_skill) is there.
func TestNudgeSharesAppendSystemPromptWithTheUsersText(t *testing.T) {
	bridge := &harness.MCPBridge{Command: "/leo", Args: []string{"mcp-server"}}
	for _, k := range []struct {
		name   string
		opt    string
		bridge *harness.MCPBridge
		want   string // "" = no flag
	}{
		{"user text, bridge", "Be terse.", bridge, "Be terse.\n\n" + harness.BridgeNudge},
		{"bridge only", "", bridge, harness.BridgeNudge},
		{"user text, no bridge", "Be terse.", nil, "Be terse."},
		{"neither", "", nil, ""},
	} {
		opts := harness.Options{}
		if k.opt != "" {
			opts[optAppendSystemPrompt] = k.opt
		}
		spec := harness.LaunchSpec{Workspace: "/w", Options: opts, Bridge: k.bridge, Prompt: "p"}
		for form, build := range map[string]func(harness.LaunchSpec) (harness.Command, error){"interactive": Claude{}.Interactive, "headless": Claude{}.Headless} {
			cmd, err := build(spec)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, a := range cmd.Argv {
				if a == "--append-system-prompt" && i+1 < len(cmd.Argv) {
					got = append(got, cmd.Argv[i+1])
				}
			}
			want := []string{k.want}
			if k.want == "" {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: --append-system-prompt values %q, want %q", k.name, form, got, want)
			}
		}
	}
}
