package claude

import (
	"slices"
	"strings"
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

// With the bridge wired, leo's own MCP tools are allowed without asking
// (a permission prompt in an unattended TUI hangs the turn), after the
// user's allowed_tools and never twice; without it nothing is added.
func TestBridgeAllowsLeosMCPTools(t *testing.T) {
	bridge := &harness.MCPBridge{Command: "/leo", Args: []string{"mcp-server"}}
	for _, k := range []struct {
		name   string
		user   []any
		bridge *harness.MCPBridge
		want   []string // the --allowedTools values
	}{
		{"bridge only", nil, bridge, []string{"mcp__leo"}},
		{"user tools, bridge", []any{"Read", "Bash"}, bridge, []string{"Read,Bash,mcp__leo"}},
		{"user already allows leo", []any{"mcp__leo", "Read"}, bridge, []string{"mcp__leo,Read"}},
		{"user tools, no bridge", []any{"Read"}, nil, []string{"Read"}},
		{"neither", nil, nil, nil},
	} {
		raw := map[string]any{}
		if k.user != nil {
			raw[optAllowedTools] = k.user
		}
		opts, err := Claude{}.DecodeOptions(raw)
		if err != nil {
			t.Fatal(err)
		}
		spec := harness.LaunchSpec{Workspace: "/w", Options: opts, Bridge: k.bridge, Prompt: "p"}
		for form, build := range map[string]func(harness.LaunchSpec) (harness.Command, error){"interactive": Claude{}.Interactive, "headless": Claude{}.Headless} {
			cmd, err := build(spec)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, a := range cmd.Argv {
				if a == "--allowedTools" && i+1 < len(cmd.Argv) {
					got = append(got, cmd.Argv[i+1])
				}
			}
			if !slices.Equal(got, k.want) {
				t.Errorf("%s, %s: --allowedTools values %q, want %q", k.name, form, got, k.want)
			}
			if k.bridge != nil {
				cfg := cmd.Argv[slices.Index(cmd.Argv, "--mcp-config")+1]
				if !strings.Contains(cfg, `"alwaysLoad":true`) {
					t.Errorf("%s, %s: leo's server is not alwaysLoad: %s", k.name, form, cfg)
				}
			}
		}
	}
}
