package claude

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// goldenScope is one resolved scope: the seed's examples (spec/harnesses.md)
// and the edges of the argv builders.
type goldenScope struct {
	name string
	spec harness.LaunchSpec
	raw  map[string]any // harness_options as YAML decodes them
}

const (
	pinnedID  = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	resumedID = "9a8b7c6d-5e4f-4321-8fed-cba987654321"
)

func bridge() *harness.MCPBridge {
	return &harness.MCPBridge{
		Command: "/usr/local/bin/leo",
		Args:    []string{"mcp-server"},
		Env:     map[string]string{"LEO_HOME": "/home/u/.leo"},
		URL:     "http://127.0.0.1:8370",
	}
}

func goldenScopes(ws string) []goldenScope {
	return []goldenScope{
		{name: "bare", spec: harness.LaunchSpec{Name: "bare", Workspace: ws, Prompt: "hello"}},
		{name: "seed-defaults", spec: harness.LaunchSpec{Name: "defaults", Workspace: ws, Model: "sonnet", Prompt: "hello"},
			raw: map[string]any{"permission_mode": "default", "allowed_tools": []any{"Read", "Grep"}}},
		{name: "seed-template-assistant", spec: harness.LaunchSpec{
			Name: "assistant", Workspace: ws, Model: "sonnet", SessionID: pinnedID,
			Channels: []string{"plugin:telegram@claude-plugins-official"},
			Bridge:   bridge(), Prompt: "hello",
		}, raw: map[string]any{
			"permission_mode": "acceptEdits", "remote_control": true, "agent": "leo",
			"allowed_tools": []any{"Read", "Edit", "Bash"}, "disallowed_tools": []any{"WebFetch"},
		}},
		{name: "seed-template-coding-resumed", spec: harness.LaunchSpec{
			Name: "coding", Workspace: ws, SessionID: resumedID, Resume: true, Prompt: "continue",
		}, raw: map[string]any{"permission_mode": "auto", "remote_control": true}},
		{name: "seed-task-daily-briefing", spec: harness.LaunchSpec{
			Name: "daily-briefing", Workspace: ws, Model: "opus", MaxTurns: 12,
			Prompt: "Write today's briefing.\nKeep it short.",
		}, raw: map[string]any{"permission_mode": "bypassPermissions"}},
		{name: "seed-scout-custom-endpoint", spec: harness.LaunchSpec{
			Name: "scout", Workspace: ws, Prompt: "scout",
			Env: map[string]string{"ANTHROPIC_BASE_URL": "https://api.z.ai/api/coding/paas/v4", "ANTHROPIC_AUTH_TOKEN": "glm-secret"},
		}},
		{name: "bypass-dev-channels-system-prompt", spec: harness.LaunchSpec{
			Name: "lab", Workspace: ws, Model: "opus[1m]", SessionID: pinnedID,
			Channels:    []string{"plugin:telegram@claude-plugins-official", "plugin:slack@claude-plugins-official"},
			DevChannels: []string{"server:local-dev"},
			Prompt:      "--help me",
		}, raw: map[string]any{
			"bypass_permissions": true, "remote_control": false,
			"append_system_prompt": "Use the leo_skill MCP tool.\nBe brief.",
		}},
	}
}

func TestGoldenArgv(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "workspace")
	for _, sc := range goldenScopes(ws) {
		t.Run(sc.name, func(t *testing.T) {
			opts, err := Claude{}.DecodeOptions(sc.raw)
			if err != nil {
				t.Fatal(err)
			}
			sc.spec.Options = opts
			replace := map[string]string{root: "$ROOT"}
			var out strings.Builder
			cmd, err := Claude{}.Interactive(sc.spec)
			out.WriteString(harnesstest.RenderCommand("interactive", cmd, err, replace))
			cmd, err = Claude{}.Headless(sc.spec)
			out.WriteString(harnesstest.RenderCommand("headless", cmd, err, replace))
			harnesstest.Golden(t, filepath.Join("testdata", sc.name+".golden"), []byte(out.String()))
			for k, v := range sc.spec.Env {
				if strings.Contains(out.String(), v) {
					t.Errorf("env %s value reached the command", k)
				}
			}
		})
	}
}
