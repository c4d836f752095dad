package codex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// TestWritableRootsListAgentsThatDoesNotExistYet: a workspace without
// .agents still gets it in writable_roots (issue 15 item 9: it was left
// out, so the first project skill stayed refused even after .agents
// appeared), on both launches; leo creates nothing in the workspace.
func TestWritableRootsListAgentsThatDoesNotExistYet(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "plain")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(ws, ".agents")
	if got := WritableRoots(ws); !slices.Equal(got, []string{agents}) {
		t.Fatalf("WritableRoots(%s) = %q, want just %s", ws, got, agents)
	}
	want := "sandbox_workspace_write.writable_roots=" + tomlArray([]string{agents})
	spec := harness.LaunchSpec{Workspace: ws, Prompt: "hi", Options: harness.Options{optSandbox: "workspace-write"}}
	for name, build := range map[string]func(harness.LaunchSpec) (harness.Command, error){
		"interactive": Codex{}.Interactive, "headless": Codex{}.Headless,
	} {
		cmd, err := build(spec)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cmd.Argv, want) {
			t.Errorf("%s argv lacks %s: %q", name, want, strings.Join(cmd.Argv, " "))
		}
	}
	if _, err := os.Lstat(agents); !os.IsNotExist(err) {
		t.Fatalf("building the launch touched %s: %v", agents, err)
	}
	// A missing git dir is still left out: only what FindGitDirs finds.
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: ../gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := WritableRoots(ws); !slices.Equal(got, []string{agents}) {
		t.Fatalf("with a .git pointing nowhere: %q, want just %s", got, agents)
	}
}

// The directories a launch names besides the workspace (a worktree's own
// git dir and its repository's common dir) are writable roots of both
// launches, once each.
func TestWritableRootsTakeTheLaunchsWritableDirs(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "plain")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	extra := []string{"/repo/.git/worktrees/a", "/repo/.git", "/repo/.git"}
	want := "sandbox_workspace_write.writable_roots=" + tomlArray([]string{filepath.Join(ws, ".agents"), "/repo/.git/worktrees/a", "/repo/.git"})
	spec := harness.LaunchSpec{Workspace: ws, Prompt: "hi", WritableDirs: extra, Options: harness.Options{optSandbox: "workspace-write"}}
	for name, build := range map[string]func(harness.LaunchSpec) (harness.Command, error){
		"interactive": Codex{}.Interactive, "headless": Codex{}.Headless,
	} {
		cmd, err := build(spec)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cmd.Argv, want) {
			t.Errorf("%s argv lacks %s: %q", name, want, strings.Join(cmd.Argv, " "))
		}
	}
}
