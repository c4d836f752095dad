package opencode

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func bridge() *harness.MCPBridge {
	return &harness.MCPBridge{
		Command: "/usr/local/bin/leo",
		Args:    []string{"mcp-server"},
		Env:     map[string]string{"LEO_HOME": "/home/u/.leo"},
		URL:     "http://127.0.0.1:8370",
	}
}

func TestGoldenArgv(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "workspace")
	scopes := []struct {
		name string
		spec harness.LaunchSpec
		raw  map[string]any
	}{
		{name: "bare", spec: harness.LaunchSpec{Name: "bare", Workspace: ws, Prompt: "hello"}},
		{name: "seed-task-opencode-triage", spec: harness.LaunchSpec{
			Name: "opencode-triage", Workspace: ws, Model: "anthropic/claude-sonnet-4-5", MaxTurns: 3,
			Prompt: "Triage the new issues.",
		}, raw: map[string]any{"permission": map[string]any{"bash": "ask", "edit": "allow"}}},
		{name: "nested-permission-bridge-resume", spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws, SessionID: "ses_3f9a0c1d2e3fABCDEF", Resume: true,
			Env:    map[string]string{"OPENROUTER_API_KEY": "or-secret"},
			Bridge: bridge(), Prompt: "--dry-run first",
		}, raw: map[string]any{"permission": map[string]any{
			"bash": map[string]any{"git *": "allow", "*": "ask"},
			"edit": "allow",
		}}},
		{name: "bridge-only", spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws, Bridge: bridge(), Prompt: "hi",
		}},
		{name: "pinned-id-is-an-error", spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws, SessionID: "ses_x", Prompt: "hi",
		}},
	}
	for _, sc := range scopes {
		t.Run(sc.name, func(t *testing.T) {
			opts, err := Opencode{}.DecodeOptions(sc.raw)
			if err != nil {
				t.Fatal(err)
			}
			sc.spec.Options = opts
			replace := map[string]string{root: "$ROOT"}
			var out strings.Builder
			cmd, err := Opencode{}.Interactive(sc.spec)
			out.WriteString(harnesstest.RenderCommand("interactive", cmd, err, replace))
			cmd, err = Opencode{}.Headless(sc.spec)
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
