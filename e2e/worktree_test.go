package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	repo := worktreeRepo(t, w)
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

// gitThatStops puts a git on the world's PATH that runs the real git but,
// for `worktree <sub>`, stops where a SIGKILL of the daemon would cut it:
// after the real command when after is true (its work done, the daemon
// not told), before it otherwise (the command never runs). It touches
// dir/stopped, then waits for dir/release (or a minute: the test stops by
// itself) and exits as the cut command would have. Once released it is
// the real git.
func gitThatStops(t *testing.T, w world, sub string, after bool) (stopped, release string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.TmpDir(), "gitstop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stopped, release = filepath.Join(dir, "stopped"), filepath.Join(dir, "release")
	run := `rc=1`
	if after {
		run = `"$real" "$@"; rc=$?`
	}
	script := `#!/bin/sh
real='` + real + `'
case " $* " in
*" worktree ` + sub + ` "*)
	[ -e '` + release + `' ] && exec "$real" "$@"
	` + run + `
	: > '` + stopped + `'
	i=0
	while [ ! -e '` + release + `' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
	exit $rc ;;
esac
exec "$real" "$@"
`
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	w.PathPrefix = dir
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	return stopped, release
}

// worktreeRepo makes the world's workspace a git repository with one
// commit, and every template worktree: true.
func worktreeRepo(t *testing.T, w world) string {
	t.Helper()
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
	return repo
}

// doctorWorktrees is what `leo doctor --json` says in its worktrees check.
func doctorWorktrees(t *testing.T, w world, args ...string) (string, []string) {
	t.Helper()
	out, _ := w.Leo(context.Background(), append([]string{"doctor", "--json"}, args...)...)
	var res struct {
		Checks []struct{ Name, Status, Message string }
		Fixed  []struct{ Message string }
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	var fixed []string
	for _, f := range res.Fixed {
		fixed = append(fixed, f.Message)
	}
	for _, c := range res.Checks {
		if c.Name == "worktrees" {
			return c.Status + ": " + c.Message, fixed
		}
	}
	t.Fatalf("doctor --json has no worktrees check:\n%s", out)
	return "", nil
}

// The daemon SIGKILLed between `git worktree add` and the record that
// says the worktree is made: the next daemon adopts the worktree (the
// agent runs in it), and doctor finds nothing unclaimed.
func TestWorktreeSIGKILLAfterTheAddIsAdopted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	worktreeRepo(t, w)
	stopped, release := gitThatStops(t, w, "add", true)
	d := w.startDaemon()
	spawned := make(chan error, 1)
	go func() {
		_, err := w.Leo(context.Background(), "agent", "spawn", "claude")
		spawned <- err
	}()
	testutil.WaitFor(t, 30*time.Second, func() bool { _, err := os.Stat(stopped); return err == nil }, "git worktree add done")
	d.Kill(syscall.SIGKILL)
	if err := <-spawned; err == nil {
		t.Fatal("the spawn the daemon died in says it succeeded")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(w.Home.Root, "worktrees", "claude")
	recs, err := w.ReadAgentsFile()
	if err != nil || len(recs) != 1 {
		t.Fatalf("records after the kill: %+v %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(path, "claude", "README")); err != nil {
		t.Fatalf("the worktree git made is not there: %v", err)
	}

	w.startDaemon()
	testutil.WaitFor(t, 30*time.Second, func() bool { return w.get("claude").State == api.StateRunning }, "claude running")
	a := w.get("claude")
	if a.Worktree == nil || a.Worktree.Path != path || a.Worktree.Branch != "leo/claude" {
		t.Fatalf("adopted agent's worktree: %+v", a.Worktree)
	}
	if got := realDir(t, a.Workspace); got != realDir(t, filepath.Join(path, "claude")) {
		t.Fatalf("agent runs in %s, want the worktree's claude/", a.Workspace)
	}
	if msg, _ := doctorWorktrees(t, w); !strings.HasPrefix(msg, "ok:") {
		t.Fatalf("doctor after the adoption: %s", msg)
	}
}

// The daemon SIGKILLed between the record's delete and `git worktree
// remove`: the worktree and everything in it stay, doctor names it, the
// next daemon neither takes it up nor removes it, and doctor --fix
// removes it only because it is clean and merged.
func TestWorktreeSIGKILLBeforeTheRemoveLeavesANamedOrphan(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	repo := worktreeRepo(t, w)
	stopped, release := gitThatStops(t, w, "remove", false)
	d := w.startDaemon()
	ctx := context.Background()
	if _, err := w.Leo(ctx, "agent", "spawn", "claude"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, func() bool { return w.get("claude").State == api.StateRunning }, "claude running")
	path := w.get("claude").Worktree.Path
	if _, err := w.Leo(ctx, "agent", "stop", "claude"); err != nil {
		t.Fatal(err)
	}
	deleted := make(chan error, 1)
	go func() {
		_, err := w.Leo(ctx, "agent", "delete", "claude", "--yes")
		deleted <- err
	}()
	testutil.WaitFor(t, 30*time.Second, func() bool { _, err := os.Stat(stopped); return err == nil }, "git worktree remove reached")
	d.Kill(syscall.SIGKILL)
	<-deleted
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if recs, err := w.ReadAgentsFile(); err != nil || len(recs) != 0 {
		t.Fatalf("records after the kill: %+v %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(path, "claude", "README")); err != nil {
		t.Fatalf("the worktree lost its files: %v", err)
	}
	msg, _ := doctorWorktrees(t, w)
	if !strings.HasPrefix(msg, "warn:") || !strings.Contains(msg, path+" (agent claude, branch leo/claude; clean, merged)") {
		t.Fatalf("doctor does not name the orphan: %s\n%s", msg, gitIn(t, path, "status", "--porcelain", "--ignored"))
	}

	w.startDaemon()
	if list, err := w.Client.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("the next daemon took the orphan up: %+v %v", list, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the next daemon removed the orphan: %v", err)
	}
	_, fixed := doctorWorktrees(t, w, "--fix")
	if len(fixed) != 1 || !strings.Contains(fixed[0], "removed the orphaned worktree "+path) {
		t.Fatalf("doctor --fix: %v", fixed)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("doctor --fix left the clean, merged orphan: %v", err)
	}
	if got := gitIn(t, repo, "branch", "--list", "leo/claude"); got != "" {
		t.Fatalf("branch leo/claude still there after --fix: %q", got)
	}
}

func realDir(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
