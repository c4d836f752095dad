package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@leo.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Worktree agents through the real leo binary and daemon: templates with
// worktree: true in one repository, spawn with and without --branch, the
// BRANCH column, a delete refused with worktree_dirty naming the file
// (exit 1), --force saying what it discarded, flags that exclude each
// other or would reach git as options refused before anything happens.
func TestWorktreeAgentsThroughTheCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfigExtra("    worktree: true\n", nil)
	repo := w.Workspaces
	if err := os.MkdirAll(filepath.Join(repo, "claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "claude", "README"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "--quiet")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "--quiet", "-m", "first")
	w.startDaemon()
	ctx := context.Background()
	leo := func(args ...string) (string, error) {
		out, err := w.Leo(ctx, args...)
		return string(out), err
	}

	out, err := leo("agent", "spawn", "claude", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var a api.Agent
	if err := json.Unmarshal([]byte(out), &a); err != nil || a.Worktree == nil || a.Worktree.Branch != "leo/claude" ||
		a.Worktree.Path != filepath.Join(w.Home.Root, "worktrees", "claude") {
		t.Fatalf("spawn --json: %v %s", err, out)
	}
	out, err = leo("agent", "spawn", "claude", "--name", "second", "--branch", "feature/x")
	if err != nil || !strings.Contains(out, "on branch feature/x (from main)") {
		t.Fatalf("spawn --branch: %v %s", err, out)
	}
	if _, err := leo("agent", "spawn", "claude", "--branch=-x"); err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "starts with '-'") {
		t.Fatalf("spawn --branch=-x: %v", err)
	}
	for _, n := range []string{"claude", "second"} {
		testutil.WaitFor(t, 30*time.Second, func() bool { return w.get(n).State == api.StateRunning }, n+" running")
	}
	out, err = leo("agent", "list")
	if err != nil || !strings.Contains(out, "BRANCH") || !strings.Contains(out, "leo/claude") || !strings.Contains(out, "feature/x") {
		t.Fatalf("list: %v\n%s", err, out)
	}

	if _, err := leo("agent", "stop", "claude"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.Worktree.Path, "claude", "notes.txt"), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = leo("agent", "delete", "claude", "--yes")
	if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), "uncommitted changes: claude/notes.txt") {
		t.Fatalf("delete of a dirty worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.Worktree.Path, "claude", "notes.txt")); err != nil {
		t.Fatalf("the refused delete lost the change: %v", err)
	}
	out, err = leo("agent", "delete", "claude", "--yes", "--json")
	if err == nil {
		t.Fatalf("delete --json of a dirty worktree succeeded: %s", out)
	}
	var fail struct{ Error, Message string }
	if jerr := json.Unmarshal([]byte(out), &fail); jerr != nil || fail.Error != "worktree_dirty" {
		t.Fatalf("delete --json failure object: %v %q", jerr, out)
	}
	if _, err := leo("agent", "delete", "claude", "--yes", "--force", "--keep-worktree"); err == nil || !strings.Contains(err.Error(), "exit status 2") {
		t.Fatalf("--force with --keep-worktree: %v", err)
	}
	out, err = leo("agent", "delete", "claude", "--yes", "--force")
	if err != nil || !strings.Contains(out, "removed worktree "+a.Worktree.Path) ||
		!strings.Contains(out, "discarded 1 uncommitted change(s): claude/notes.txt") || !strings.Contains(out, "deleted branch leo/claude") {
		t.Fatalf("delete --force: %v\n%s", err, out)
	}
	if got := gitIn(t, repo, "branch", "--list", "leo/claude"); got != "" {
		t.Fatalf("branch leo/claude still there: %q", got)
	}
}
