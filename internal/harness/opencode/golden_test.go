package opencode

import (
	"path/filepath"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestGoldenArgv(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "workspace")
	harnesstest.GoldenArgv(t, Opencode{}, root, []harnesstest.GoldenScope{
		{Name: "bare", Spec: harness.LaunchSpec{Name: "bare", Workspace: ws, Prompt: "hello"}},
		{Name: "seed-task-opencode-triage", Spec: harness.LaunchSpec{
			Name: "opencode-triage", Workspace: ws, Model: "anthropic/claude-sonnet-4-5", MaxTurns: 3,
			Prompt: "Triage the new issues.",
		}, Raw: map[string]any{"permission": map[string]any{"bash": "ask", "edit": "allow"}}},
		{Name: "nested-permission-bridge-resume", Spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws, SessionID: "ses_3f9a0c1d2e3fABCDEF", Resume: true,
			Env:    map[string]string{"OPENROUTER_API_KEY": "or-secret"},
			Bridge: harnesstest.GoldenBridge(), Prompt: "--dry-run first",
		}, Raw: map[string]any{"permission": map[string]any{
			"bash": map[string]any{"git *": "allow", "*": "ask"},
			"edit": "allow",
		}}},
		{Name: "bridge-only", Spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws, Bridge: harnesstest.GoldenBridge(), Prompt: "hi",
		}},
		{Name: "pinned-id-is-an-error", Spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws, SessionID: "ses_x", Prompt: "hi",
		}},
	})
}
