package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const threadID = "0199a213-81c0-7800-8aa1-bbab2a035a53"

func bridge() *harness.MCPBridge {
	return &harness.MCPBridge{
		Command: "/usr/local/bin/leo",
		Args:    []string{"mcp-server"},
		Env:     map[string]string{"LEO_HOME": "/home/u/.leo"},
		URL:     "http://127.0.0.1:8370",
	}
}

// layout builds the workspaces the scopes run in under root:
//
//	plain/                 not a git repo
//	repo/ (.git dir, .agents)     a checkout with project skills
//	main/.git/worktrees/wt        the git dir of a linked worktree
//	wt/ (.git file)               that worktree, outside main
//	repo/sub/                     a subdirectory of the checkout
func layout(t *testing.T, root string) {
	t.Helper()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain")
	mk("repo/.git")
	mk("repo/.agents")
	mk("repo/sub")
	mk("main/.git/worktrees/wt")
	write("main/.git/worktrees/wt/commondir", "../..\n")
	mk("wt")
	write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n")
}

func goldenScopes(root string) []struct {
	name string
	spec harness.LaunchSpec
	raw  map[string]any
} {
	ws := func(p string) string { return filepath.Join(root, p) }
	return []struct {
		name string
		spec harness.LaunchSpec
		raw  map[string]any
	}{
		{name: "bare", spec: harness.LaunchSpec{Name: "bare", Workspace: ws("plain"), Prompt: "hello"}},
		{name: "seed-task-codex-refactor", spec: harness.LaunchSpec{
			Name: "codex-refactor", Workspace: ws("repo"), Model: "gpt-5.3-codex", MaxTurns: 5,
			Env:    map[string]string{"CODEX_API_KEY": "sk-codex-secret"},
			Prompt: "Refactor the parser.",
		}, raw: map[string]any{"sandbox": "workspace-write"}},
		{name: "workspace-write-linked-worktree", spec: harness.LaunchSpec{
			Name: "wt", Workspace: ws("wt"), Prompt: "commit the fix",
		}, raw: map[string]any{"sandbox": "workspace-write"}},
		{name: "workspace-write-subdir-of-checkout", spec: harness.LaunchSpec{
			Name: "sub", Workspace: ws("repo/sub"), Prompt: "hi",
		}, raw: map[string]any{"sandbox": "workspace-write"}},
		{name: "workspace-write-not-git", spec: harness.LaunchSpec{
			Name: "plain", Workspace: ws("plain"), Prompt: "hi",
		}, raw: map[string]any{"sandbox": "workspace-write"}},
		{name: "read-only-with-bridge", spec: harness.LaunchSpec{
			Name: "reader", Workspace: ws("repo"), Model: "o3", Bridge: bridge(), Prompt: "summarise",
		}, raw: map[string]any{"sandbox": "read-only"}},
		{name: "resume-thread-with-bridge", spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws("repo"), SessionID: threadID, Resume: true,
			Bridge: bridge(), Prompt: "-1 is the answer",
		}, raw: map[string]any{"sandbox": "workspace-write"}},
		{name: "pinned-id-is-an-error", spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws("plain"), SessionID: threadID, Prompt: "hi",
		}},
	}
}

func TestGoldenArgv(t *testing.T) {
	root := t.TempDir()
	layout(t, root)
	for _, sc := range goldenScopes(root) {
		t.Run(sc.name, func(t *testing.T) {
			opts, err := Codex{}.DecodeOptions(sc.raw)
			if err != nil {
				t.Fatal(err)
			}
			sc.spec.Options = opts
			replace := map[string]string{root: "$ROOT"}
			var out strings.Builder
			cmd, err := Codex{}.Interactive(sc.spec)
			out.WriteString(harnesstest.RenderCommand("interactive", cmd, err, replace))
			cmd, err = Codex{}.Headless(sc.spec)
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
