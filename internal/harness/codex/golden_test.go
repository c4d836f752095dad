package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const threadID = "0199a213-81c0-7800-8aa1-bbab2a035a53"

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

// goldenScopes are the seed's codex task and the workspaces the writable
// roots depend on, each under root as layout builds it.
func goldenScopes(root string) []harnesstest.GoldenScope {
	ws := func(p string) string { return filepath.Join(root, p) }
	return []harnesstest.GoldenScope{
		{Name: "bare", Spec: harness.LaunchSpec{Name: "bare", Workspace: ws("plain"), Prompt: "hello"}},
		{Name: "seed-task-codex-refactor", Spec: harness.LaunchSpec{
			Name: "codex-refactor", Workspace: ws("repo"), Model: "gpt-5.3-codex", MaxTurns: 5,
			Env:    map[string]string{"CODEX_API_KEY": "sk-codex-secret"},
			Prompt: "Refactor the parser.",
		}, Raw: map[string]any{"sandbox": "workspace-write"}},
		{Name: "workspace-write-linked-worktree", Spec: harness.LaunchSpec{
			Name: "wt", Workspace: ws("wt"), Prompt: "commit the fix",
		}, Raw: map[string]any{"sandbox": "workspace-write"}},
		{Name: "workspace-write-subdir-of-checkout", Spec: harness.LaunchSpec{
			Name: "sub", Workspace: ws("repo/sub"), Prompt: "hi",
		}, Raw: map[string]any{"sandbox": "workspace-write"}},
		{Name: "workspace-write-not-git", Spec: harness.LaunchSpec{
			Name: "plain", Workspace: ws("plain"), Prompt: "hi",
		}, Raw: map[string]any{"sandbox": "workspace-write"}},
		// sandbox unset: codex may still run workspace-write (its own
		// config, a trusted project), so the git dirs are granted anyway.
		{Name: "sandbox-unset-in-checkout", Spec: harness.LaunchSpec{
			Name: "coder", Workspace: ws("repo"), Prompt: "commit the fix",
		}},
		{Name: "read-only-with-bridge", Spec: harness.LaunchSpec{
			Name: "reader", Workspace: ws("repo"), Model: "o3", Bridge: harnesstest.GoldenBridge(), Prompt: "summarise",
		}, Raw: map[string]any{"sandbox": "read-only"}},
		{Name: "resume-thread-with-bridge", Spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws("repo"), SessionID: threadID, Resume: true,
			Bridge: harnesstest.GoldenBridge(), Prompt: "-1 is the answer",
		}, Raw: map[string]any{"sandbox": "workspace-write"}},
		{Name: "pinned-id-is-an-error", Spec: harness.LaunchSpec{
			Name: "agent", Workspace: ws("plain"), SessionID: threadID, Prompt: "hi",
		}},
	}
}

func TestGoldenArgv(t *testing.T) {
	root := t.TempDir()
	layout(t, root)
	harnesstest.GoldenArgv(t, Codex{}, root, goldenScopes(root))
}
