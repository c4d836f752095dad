package claude

import (
	"path/filepath"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const (
	pinnedID  = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	resumedID = "9a8b7c6d-5e4f-4321-8fed-cba987654321"
)

// goldenScopes are the seed's examples (docs/configuration/harnesses.md) and the edges of
// the argv builders.
func goldenScopes(ws string) []harnesstest.GoldenScope {
	return []harnesstest.GoldenScope{
		{Name: "bare", Spec: harness.LaunchSpec{Name: "bare", Workspace: ws, Prompt: "hello"}},
		{Name: "seed-defaults", Spec: harness.LaunchSpec{Name: "defaults", Workspace: ws, Model: "sonnet", Prompt: "hello"},
			Raw: map[string]any{"permission_mode": "default", "allowed_tools": []any{"Read", "Grep"}}},
		{Name: "seed-template-assistant", Spec: harness.LaunchSpec{
			Name: "assistant", Workspace: ws, Model: "sonnet", SessionID: pinnedID,
			Channels: []string{"plugin:telegram@claude-plugins-official"},
			Bridge:   harnesstest.GoldenBridge(), Prompt: "hello",
		}, Raw: map[string]any{
			"permission_mode": "acceptEdits", "remote_control": true, "agent": "leo",
			"allowed_tools": []any{"Read", "Edit", "Bash"}, "disallowed_tools": []any{"WebFetch"},
		}},
		{Name: "seed-template-coding-resumed", Spec: harness.LaunchSpec{
			Name: "coding", Workspace: ws, SessionID: resumedID, Resume: true, Prompt: "continue",
		}, Raw: map[string]any{"permission_mode": "auto", "remote_control": true}},
		{Name: "seed-task-daily-briefing", Spec: harness.LaunchSpec{
			Name: "daily-briefing", Workspace: ws, Model: "opus", MaxTurns: 12,
			Prompt: "Write today's briefing.\nKeep it short.",
		}, Raw: map[string]any{"permission_mode": "bypassPermissions"}},
		{Name: "seed-scout-custom-endpoint", Spec: harness.LaunchSpec{
			Name: "scout", Workspace: ws, Prompt: "scout",
			Env: map[string]string{"ANTHROPIC_BASE_URL": "https://api.z.ai/api/coding/paas/v4", "ANTHROPIC_AUTH_TOKEN": "glm-secret"},
		}},
		{Name: "bypass-dev-channels-system-prompt", Spec: harness.LaunchSpec{
			Name: "lab", Workspace: ws, Model: "opus[1m]", SessionID: pinnedID,
			Channels:    []string{"plugin:telegram@claude-plugins-official", "plugin:slack@claude-plugins-official"},
			DevChannels: []string{"server:local-dev"},
			Prompt:      "--help me",
		}, Raw: map[string]any{
			"bypass_permissions": true, "remote_control": false,
			"append_system_prompt": "Use the leo_skill MCP tool.\nBe brief.",
		}},
	}
}

func TestGoldenArgv(t *testing.T) {
	root := t.TempDir()
	harnesstest.GoldenArgv(t, Claude{}, root, goldenScopes(filepath.Join(root, "workspace")))
}
