package task

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
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

// A one-shot task with worktree: true runs each firing in a fresh
// worktree on leo/<task>/<run-id>, at the workspace's place in it: a run
// that leaves nothing has its worktree and branch removed; one that
// leaves changes keeps both, named in its record.
func TestTaskWorktreeRunsInAFreshCheckoutEachFiring(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	ws := filepath.Join(repo, "jobs")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("do it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "--quiet")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "--quiet", "-m", "first")
	home := filepath.Join(dir, "leo")
	cfg := writeConfig(t, dir, "tasks:\n  nightly:\n    harness: claude\n    schedule: \"0 7 * * *\"\n    prompt_file: p.md\n    worktree: true\n    workspace: "+ws+"\n")
	hist, err := OpenHistory(filepath.Join(dir, "history"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var workdirs []string
	leave := true // the first run leaves a file behind
	clk := newTestClock(time.Date(2026, 5, 1, 7, 0, 0, 0, time.UTC))
	opts := ServiceOptions{
		Clock:   clk,
		Config:  func() *config.Config { return cfg },
		History: hist,
		Home:    home,
		Oneshot: func(_ context.Context, j Job) Record {
			workdirs = append(workdirs, j.Scope.Workspace)
			if j.SessionID != "" {
				t.Errorf("a worktree run resumed %s", j.SessionID)
			}
			if leave {
				_ = os.WriteFile(filepath.Join(j.Scope.Workspace, "out.txt"), []byte("result\n"), 0o644)
			}
			return Record{Outcome: OutcomeSucceeded, Attempt: 1, SessionID: "s1"}
		},
	}
	first, err := RunOnce(context.Background(), opts, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	clk.jump(time.Minute) // the next run's id
	leave = false
	second, err := RunOnce(context.Background(), opts, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(home, "worktrees", "nightly")
	for i, rec := range []Record{first, second} {
		w := rec.Worktree
		if w == nil || w.Path != filepath.Join(root, rec.ID) || w.Branch != "leo/nightly/"+rec.ID || w.Base != "main" {
			t.Fatalf("run %d worktree = %+v", i, w)
		}
		real, _ := filepath.EvalSymlinks(filepath.Dir(w.Path))
		if want := filepath.Join(w.Path, "jobs"); workdirs[i] != want && workdirs[i] != filepath.Join(real, rec.ID, "jobs") {
			t.Fatalf("run %d ran in %s, want %s", i, workdirs[i], want)
		}
	}
	if workdirs[0] == workdirs[1] {
		t.Fatal("both runs in one worktree")
	}
	k := first.Worktree
	if !k.Kept || !k.Dirty {
		t.Fatalf("the run that left a file: %+v", k)
	}
	if _, err := os.Stat(filepath.Join(k.Path, "jobs", "out.txt")); err != nil {
		t.Fatalf("kept worktree lost the run's output: %v", err)
	}
	c := second.Worktree
	if c.Kept || c.Dirty || c.Ahead != 0 {
		t.Fatalf("the clean run: %+v", c)
	}
	if _, err := os.Stat(c.Path); !os.IsNotExist(err) {
		t.Fatalf("clean worktree not removed: %v", err)
	}
	branches := git(t, repo, "branch", "--list", "leo/*")
	if !strings.Contains(branches, first.Worktree.Branch) || strings.Contains(branches, c.Branch) {
		t.Fatalf("branches: %q", branches)
	}
	// The history holds the kept one's name.
	h, _, err := hist.Read("nightly", 10)
	if err != nil || len(h) != 2 {
		t.Fatalf("history: %v %v", h, err)
	}
	for _, r := range h {
		if r.ID == first.ID && (r.Worktree == nil || !r.Worktree.Kept || r.Worktree.Path != k.Path) {
			t.Fatalf("history of the kept run: %+v", r.Worktree)
		}
	}
}

// worktree: true on a task whose workspace is in no repository fails the
// run with the scope named, and runs nothing.
func TestTaskWorktreeOutsideARepoFails(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, "tasks:\n  t1:\n    harness: claude\n    prompt_file: p.md\n    worktree: true\n    workspace: "+ws+"\n")
	hist, _ := OpenHistory(filepath.Join(dir, "history"), 0)
	ran := false
	rec, err := RunOnce(context.Background(), ServiceOptions{Config: func() *config.Config { return cfg }, History: hist, Home: dir,
		Oneshot: func(context.Context, Job) Record { ran = true; return Record{Outcome: OutcomeSucceeded} }}, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if ran || rec.Outcome != OutcomeFailed || !strings.Contains(rec.Message, "tasks.t1.workspace: ") || !strings.Contains(rec.Message, "not inside a git repository") {
		t.Fatalf("record = %+v (ran %v)", rec, ran)
	}
}

// A daemon killed during a worktree run: the runs-in-progress file names
// the worktree from before git made it, and the next daemon's interrupted
// record keeps naming it (kept), so nothing is lost and nothing is left
// unnamed.
func TestTaskWorktreeNamedWhenTheDaemonDiesMidRun(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, ws, "init", "--quiet")
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "--quiet", "-m", "first")
	cfg := writeConfig(t, dir, "tasks:\n  j:\n    harness: claude\n    prompt_file: p.md\n    worktree: true\n    workspace: "+ws+"\n")
	hist, _ := OpenHistory(filepath.Join(dir, "history"), 0)
	running := filepath.Join(dir, "task-running.json")
	started, release := make(chan string, 1), make(chan struct{})
	opts := ServiceOptions{Config: func() *config.Config { return cfg }, History: hist, Home: dir, RunningPath: running,
		Oneshot: func(_ context.Context, j Job) Record {
			started <- j.Scope.Workspace
			<-release
			return Record{Outcome: OutcomeSucceeded}
		}}
	svc := NewService(opts)
	_, done, err := svc.Start(context.Background(), "j")
	if err != nil {
		t.Fatal(err)
	}
	workdir := <-started
	// The file as a SIGKILL now would leave it.
	left, err := os.ReadFile(running)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done

	killed := filepath.Join(dir, "killed-running.json")
	if err := os.WriteFile(killed, left, 0o600); err != nil {
		t.Fatal(err)
	}
	hist2, _ := OpenHistory(filepath.Join(dir, "history2"), 0)
	next := NewService(ServiceOptions{Config: opts.Config, History: hist2, Home: dir, RunningPath: killed})
	next.recoverInflight()
	recs, _, err := hist2.Read("j", 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("recovered records: %+v %v", recs, err)
	}
	w := recs[0].Worktree
	if recs[0].Reason != ReasonInterrupted || w == nil || !w.Kept || filepath.Base(workdir) != filepath.Base(w.Path) {
		t.Fatalf("interrupted record: %+v worktree %+v (the run ran in %s)", recs[0], w, workdir)
	}
}
