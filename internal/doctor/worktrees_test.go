package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@leo.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// Worktrees leo made whose agent is gone are listed with what they hold;
// --fix removes only the clean, merged one, and one still claimed is
// neither listed nor touched.
func TestWorktreesOrphansListedAndOnlyCleanOnesFixed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "--quiet")
	if err := os.WriteFile(filepath.Join(repo, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "--quiet", "-m", "first")
	h := home.Home{Root: filepath.Join(dir, "leo")}
	root := filepath.Join(h.Root, "worktrees")
	g := worktree.Git{}
	_, commit, err := g.Base(ctx, repo, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"clean", "dirty", "claimed"} {
		p := filepath.Join(root, name)
		if err := g.Add(ctx, repo, p, "leo/"+name, commit); err != nil {
			t.Fatal(err)
		}
		if err := worktree.WriteMarker(p, worktree.Marker{Home: h.Root, Agent: name, Repo: repo, Branch: "leo/" + name, Base: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "dirty", "work.txt"), []byte("w"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Env{Home: h, Worktrees: &Worktrees{Roots: []string{root}, Claimed: func(path string, m worktree.Marker) bool { return m.Agent == "claimed" }}}
	c, ok := checkWorktrees(ctx, e)
	if !ok || c.Status != Warn || !strings.Contains(c.Message, "2 worktree(s)") ||
		!strings.Contains(c.Message, filepath.Join(root, "clean")+" (agent clean, branch leo/clean; clean, merged)") ||
		!strings.Contains(c.Message, filepath.Join(root, "dirty")+" (agent dirty, branch leo/dirty; 1 uncommitted change(s))") ||
		strings.Contains(c.Message, "claimed") {
		t.Fatalf("check = %+v", c)
	}
	fixed := fixWorktrees(ctx, e)
	if len(fixed) != 1 || !fixed[0].OK || !strings.Contains(fixed[0].Message, filepath.Join(root, "clean")) {
		t.Fatalf("fix = %+v", fixed)
	}
	for name, want := range map[string]bool{"clean": false, "dirty": true, "claimed": true} {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != want {
			t.Errorf("%s there = %v, want %v", name, err == nil, want)
		}
	}
	c, _ = checkWorktrees(ctx, e)
	if !strings.Contains(c.Message, "1 worktree(s)") {
		t.Fatalf("after fix: %+v", c)
	}
}
