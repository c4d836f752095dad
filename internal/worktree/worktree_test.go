package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
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

func write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "--quiet")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	write(t, filepath.Join(dir, "sub", "b.txt"), "b\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "--quiet", "-m", "first")
	return dir
}

func TestCheckBranch(t *testing.T) {
	for _, ok := range []string{"leo/agent", "feature/x-1", "a.b", "leo/task/20260102T030405.000Z"} {
		if why := CheckBranch(ok); why != "" {
			t.Errorf("CheckBranch(%q) = %q", ok, why)
		}
	}
	for _, bad := range []string{"", "-x", "--force", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "a/", "/a", "a//b", "a.", ".a", "a/.b", "a.lock", "a@{1}", "@", "HEAD", "a\x00b", "a\nb"} {
		if CheckBranch(bad) == "" {
			t.Errorf("CheckBranch(%q) accepted it", bad)
		}
	}
	// The rules agree with git's own for the names above.
	for _, n := range []string{"leo/agent", "a..b", "a.lock", "a b", ".a"} {
		err := exec.Command("git", "check-ref-format", "--branch", n).Run()
		if (err == nil) != (CheckBranch(n) == "") {
			t.Errorf("%q: git says ok=%v, CheckBranch %q", n, err == nil, CheckBranch(n))
		}
	}
}

func TestCheckRef(t *testing.T) {
	for _, bad := range []string{"", "-x", "--upload-pack=evil", "a b", "a\nb"} {
		if CheckRef(bad) == "" {
			t.Errorf("CheckRef(%q) accepted it", bad)
		}
	}
	if why := CheckRef("origin/main~2"); why != "" {
		t.Errorf("CheckRef: %s", why)
	}
}

// A worktree's life against real git: found from a subdirectory, added,
// marked, inspected (changes, renames, commits ahead of the base and of
// the remotes), scanned, removed.
func TestWorktreeLife(t *testing.T) {
	ctx := context.Background()
	g := Git{}
	dir := repo(t)
	if _, err := g.Find(ctx, t.TempDir()); err != ErrNotARepo {
		t.Fatalf("Find outside a repo: %v", err)
	}
	r, err := g.Find(ctx, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if r.Top != real || r.Sub != "sub" || r.CommonDir != filepath.Join(real, ".git") {
		t.Fatalf("Find = %+v", r)
	}
	base, commit, err := g.Base(ctx, r.Top, "")
	if err != nil || base != "main" || len(commit) != 40 {
		t.Fatalf("Base = %q %q %v", base, commit, err)
	}
	if _, _, err := g.Base(ctx, r.Top, "nope"); err == nil {
		t.Fatal("Base of a missing ref")
	}
	root := t.TempDir()
	path := filepath.Join(root, "w1")
	if err := g.Add(ctx, r.Top, path, "leo/w1", commit); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(ctx, r.Top, filepath.Join(root, "w2"), "-b", commit); err == nil {
		t.Fatal("Add took a branch starting with '-'")
	}
	if err := WriteMarker(path, Marker{Home: "/h", Agent: "w1", Branch: "leo/w1"}); err != nil {
		t.Fatal(err)
	}
	if st, err := g.Inspect(ctx, path, "leo/w1", base); err != nil || !st.Clean() {
		t.Fatalf("fresh worktree: %+v %v (the marker must not count)", st, err)
	}
	write(t, filepath.Join(path, "new file.txt"), "n\n")
	git(t, path, "mv", "a.txt", "renamed.txt")
	st, err := g.Inspect(ctx, path, "leo/w1", base)
	if err != nil || !slices.Equal(st.Changed, []string{"renamed.txt", "new file.txt"}) {
		t.Fatalf("changes = %q %v", st.Changed, err)
	}
	if st, _ := g.Inspect(ctx, path, "leo/w1", base, "new file.txt"); !slices.Equal(st.Changed, []string{"renamed.txt"}) {
		t.Fatalf("own files not left out: %q", st.Changed)
	}
	git(t, path, "add", "-A")
	git(t, path, "commit", "--quiet", "-m", "work")
	st, _ = g.Inspect(ctx, path, "leo/w1", base)
	if len(st.Changed) != 0 || len(st.Ahead) != 1 || !strings.HasSuffix(st.Ahead[0], " work") {
		t.Fatalf("after commit: %+v", st)
	}
	// Pushed to a remote: no longer ahead.
	remote := t.TempDir()
	git(t, remote, "init", "--quiet", "--bare")
	git(t, r.Top, "remote", "add", "origin", remote)
	git(t, r.Top, "push", "--quiet", "origin", "leo/w1")
	if st, _ := g.Inspect(ctx, path, "leo/w1", base); len(st.Ahead) != 0 {
		t.Fatalf("pushed commits still ahead: %q", st.Ahead)
	}
	found := Scan(root, "/h")
	if len(found) != 1 || found[0].Path != path || found[0].Marker.Agent != "w1" {
		t.Fatalf("Scan = %+v", found)
	}
	if len(Scan(root, "/other")) != 0 {
		t.Fatal("Scan took another home's worktree")
	}
	if err := g.Remove(ctx, r.Top, path, false); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteBranch(ctx, r.Top, "leo/w1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := g.BranchExists(ctx, r.Top, "leo/w1"); ok {
		t.Fatal("branch still there")
	}
}
