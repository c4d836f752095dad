package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

// git runs git in dir for a test, failing it on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=leo test", "-c", "user.email=test@leo.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRepo makes a repository at dir with one commit holding each of
// files (relative paths).
func gitRepo(t testing.TB, dir string, files ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "--quiet")
	for _, f := range append([]string{"README"}, files...) {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "--quiet", "-m", "first")
}

// startCwds are the working directories of the fake TUIs' starts, by pid.
func (e *testEnv) startCwds() map[int]string {
	data, _ := os.ReadFile(e.harnLog)
	out := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Event string `json:"event"`
			PID   int    `json:"pid"`
			Cwd   string `json:"cwd"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "start" {
			out[ev.PID] = ev.Cwd
		}
	}
	return out
}

func realPath(t testing.TB, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two agents from one template each get a worktree on a branch of their
// own, and each TUI runs in its own: at the workspace's place in the
// repository (the templates' workspaces are subdirectories of it).
func TestWorktreeAgentsRunInTheirOwnCheckouts(t *testing.T) {
	for _, h := range []string{"claude", "codex"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			gitRepo(t, e.workspace, h+"/main.go")
			m := e.manager()
			ctx := context.Background()
			var agents []api.Agent
			for range 2 {
				a, err := m.Spawn(ctx, api.SpawnRequest{Template: h, Worktree: true})
				if err != nil {
					t.Fatal(err)
				}
				agents = append(agents, a)
			}
			root := filepath.Join(e.home.Root, "worktrees")
			for i, name := range []string{h, h + "-2"} {
				a := agents[i]
				w := a.Worktree
				if a.Name != name || w == nil {
					t.Fatalf("agent %d = %s, worktree %+v", i, a.Name, w)
				}
				if w.Path != filepath.Join(root, name) || w.Branch != "leo/"+name || w.Base != "main" || w.Repo != realPath(t, e.workspace) {
					t.Fatalf("agent %s worktree = %+v", name, w)
				}
				want := filepath.Join(realPath(t, w.Path), h)
				if a.Workspace != want {
					t.Fatalf("agent %s workspace = %s, want %s (the workspace's place in its worktree)", name, a.Workspace, want)
				}
				if _, err := os.Stat(filepath.Join(want, "main.go")); err != nil {
					t.Fatalf("the worktree has no checkout of the template's files: %v", err)
				}
				if got := git(t, w.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != "leo/"+name {
					t.Fatalf("worktree %s is on %s", w.Path, got)
				}
				if m, ok := worktree.ReadMarker(w.Path); !ok || m.Agent != name || m.Home != e.home.Root {
					t.Fatalf("marker of %s = %+v %v", w.Path, m, ok)
				}
				e.waitState(m, name, api.StateRunning)
			}
			var cwds map[int]string
			waitFor(t, "both TUIs started", 20*time.Second, func() bool {
				cwds = e.startCwds()
				return len(cwds) >= 2
			})
			seen := map[string]bool{}
			for _, c := range cwds {
				seen[c] = true
			}
			for _, a := range agents {
				if !seen[a.Workspace] {
					t.Fatalf("no TUI started in %s; starts: %v", a.Workspace, cwds)
				}
			}
			// Everything a workspace gets, the worktree gets: trust
			// written for its path (no dialog in a fresh directory), and
			// for codex the worktree's git dirs writable in its sandbox.
			for _, a := range agents {
				switch h {
				case "claude":
					data, _ := os.ReadFile(filepath.Join(e.userHome["HOME"], ".claude.json"))
					if !strings.Contains(string(data), strconv.Quote(a.Workspace)) {
						t.Fatalf("claude trust not written for %s:\n%s", a.Workspace, data)
					}
				case "codex":
					data, _ := os.ReadFile(filepath.Join(e.userHome["CODEX_HOME"], "config.toml"))
					if !strings.Contains(string(data), a.Workspace) {
						t.Fatalf("codex trust not written for %s:\n%s", a.Workspace, data)
					}
				}
			}
			if h == "codex" {
				common := filepath.Join(realPath(t, e.workspace), ".git")
				for _, a := range agents {
					gitDir := filepath.Join(common, "worktrees", filepath.Base(a.Worktree.Path))
					found := false
					for _, argv := range e.launches(h) {
						for _, arg := range argv {
							if strings.HasPrefix(arg, "sandbox_workspace_write.writable_roots=") && strings.Contains(arg, strconv.Quote(gitDir)) && strings.Contains(arg, strconv.Quote(common)) {
								found = true
							}
						}
					}
					if !found {
						t.Fatalf("no launch opens %s and %s to the sandbox: %q", gitDir, common, e.launches(h))
					}
				}
			}
			// The main checkout is untouched by either.
			if got := git(t, e.workspace, "status", "--porcelain"); got != "" {
				t.Fatalf("main checkout changed: %q", got)
			}

			// A reset is a new conversation in the same checkout.
			r, err := m.Reset(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			if r.Worktree == nil || r.Worktree.Path != agents[0].Worktree.Path || r.Workspace != agents[0].Workspace {
				t.Fatalf("after reset: workspace %s worktree %+v", r.Workspace, r.Worktree)
			}
		})
	}
}

// stopped spawns a worktree agent from h and stops it.
func stoppedWorktreeAgent(t *testing.T, e *testEnv, m *Manager, h string, req api.SpawnRequest) api.Agent {
	t.Helper()
	ctx := context.Background()
	req.Template, req.Worktree = h, true
	a, err := m.Spawn(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	e.waitState(m, a.Name, api.StateRunning)
	if _, err := m.Stop(ctx, a.Name); err != nil {
		t.Fatal(err)
	}
	return a
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func branchExists(t *testing.T, repo, branch string) bool {
	t.Helper()
	cmd := exec.Command("git", "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	cmd.Dir = repo
	return cmd.Run() == nil
}

// Delete refuses to lose work: uncommitted changes are worktree_dirty,
// commits on neither the base nor a remote worktree_unmerged, each named,
// and nothing changes. --force removes the worktree and says what it
// discarded, and keeps the branch holding commits; --keep-worktree keeps
// both; a clean, merged one goes with its branch.
func TestWorktreeDeleteLosesNothing(t *testing.T) {
	t.Parallel()
	const h = "claude"
	e := newEnv(t)
	gitRepo(t, e.workspace, h+"/main.go")
	m := e.manager()
	ctx := context.Background()

	a := stoppedWorktreeAgent(t, e, m, h, api.SpawnRequest{})
	w := a.Worktree
	if err := os.WriteFile(filepath.Join(w.Path, h, "notes.txt"), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := m.Delete(ctx, a.Name)
	if !api.HasCode(err, api.CodeWorktreeDirty) || !strings.Contains(err.Error(), h+"/notes.txt") {
		t.Fatalf("delete of a dirty worktree: %v", err)
	}
	if _, gerr := m.Get(a.Name); gerr != nil || !exists(filepath.Join(w.Path, h, "notes.txt")) {
		t.Fatalf("a refused delete changed something: %v", gerr)
	}
	got, _ := m.Get(a.Name)
	if got.Worktree == nil || !got.Worktree.Dirty || got.Worktree.Ahead != 0 {
		t.Fatalf("listing of a dirty worktree: %+v", got.Worktree)
	}

	git(t, w.Path, "add", "-A")
	git(t, w.Path, "commit", "--quiet", "-m", "agent notes")
	err = m.Delete(ctx, a.Name)
	if !api.HasCode(err, api.CodeWorktreeUnmerged) || !strings.Contains(err.Error(), "agent notes") {
		t.Fatalf("delete of an unmerged branch: %v", err)
	}
	if _, gerr := m.Get(a.Name); gerr != nil || !exists(w.Path) {
		t.Fatalf("a refused delete changed something: %v", gerr)
	}

	// Dirty again, then --force: the change is discarded and named, the
	// commit stays on the kept branch.
	if err := os.WriteFile(filepath.Join(w.Path, "scratch"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := m.DeleteAgent(ctx, a.Name, api.DeleteRequest{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Worktree
	if r == nil || !r.Removed || r.BranchDeleted || !strings.Contains(r.BranchKept, "agent notes") || strings.Join(r.DiscardedFiles, ",") != "scratch" {
		t.Fatalf("force delete = %+v", r)
	}
	if exists(w.Path) || !branchExists(t, e.workspace, w.Branch) {
		t.Fatalf("after --force: worktree there %v, branch there %v", exists(w.Path), branchExists(t, e.workspace, w.Branch))
	}
	if _, gerr := m.Get(a.Name); !api.HasCode(gerr, api.CodeNotFound) {
		t.Fatalf("agent still there: %v", gerr)
	}

	// --keep-worktree: the agent goes, the worktree and branch stay.
	b := stoppedWorktreeAgent(t, e, m, h, api.SpawnRequest{Name: "keeper"})
	res, err = m.DeleteAgent(ctx, b.Name, api.DeleteRequest{KeepWorktree: true})
	if err != nil || res.Worktree == nil || res.Worktree.Removed {
		t.Fatalf("keep-worktree delete = %+v, %v", res.Worktree, err)
	}
	if !exists(b.Worktree.Path) || !branchExists(t, e.workspace, b.Worktree.Branch) {
		t.Fatal("--keep-worktree removed the worktree or branch")
	}

	// Clean and merged: both go.
	c := stoppedWorktreeAgent(t, e, m, h, api.SpawnRequest{Name: "clean", Branch: "feature/clean"})
	if c.Worktree.Branch != "feature/clean" {
		t.Fatalf("branch = %s", c.Worktree.Branch)
	}
	res, err = m.DeleteAgent(ctx, c.Name, api.DeleteRequest{})
	if err != nil || res.Worktree == nil || !res.Worktree.Removed || !res.Worktree.BranchDeleted {
		t.Fatalf("clean delete = %+v, %v", res.Worktree, err)
	}
	if exists(c.Worktree.Path) || branchExists(t, e.workspace, "feature/clean") {
		t.Fatal("clean delete left the worktree or branch")
	}
}

// What a spawn is refused for, before anything is recorded or made.
func TestWorktreeSpawnValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gitRepo(t, filepath.Join(e.workspace, "claude"))
	if err := os.MkdirAll(filepath.Join(e.workspace, "codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := e.manager()
	ctx := context.Background()
	for _, c := range []struct {
		req  api.SpawnRequest
		code api.Code
		text string
	}{
		{api.SpawnRequest{Template: "claude", Worktree: true, Branch: "-x"}, api.CodeInvalidArgs, "starts with '-'"},
		{api.SpawnRequest{Template: "claude", Worktree: true, Branch: "a..b"}, api.CodeInvalidArgs, "'..'"},
		{api.SpawnRequest{Template: "claude", Worktree: true, Base: "no-such-ref"}, api.CodeInvalidArgs, `base "no-such-ref" is not a commit`},
		{api.SpawnRequest{Template: "claude", Worktree: true, Base: "--upload-pack=x"}, api.CodeInvalidArgs, "starts with '-'"},
		{api.SpawnRequest{Template: "claude", Branch: "b"}, api.CodeInvalidArgs, "need --worktree"},
		{api.SpawnRequest{Template: "codex", Worktree: true}, api.CodeConfigError, "templates.codex.workspace: "},
	} {
		_, err := m.Spawn(ctx, c.req)
		if !api.HasCode(err, c.code) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("spawn %+v: %v, want %s with %q", c.req, err, c.code, c.text)
		}
	}
	if n := len(m.List()); n != 0 {
		t.Fatalf("refused spawns left %d agents", n)
	}
	if exists(filepath.Join(e.home.Root, "worktrees", "claude")) {
		t.Fatal("a refused spawn made a worktree")
	}
}

// A daemon killed between `git worktree add` and the record saying so
// leaves the intent on the record; the next daemon adopts the worktree
// and launches the agent in it.
func TestWorktreeCrashAfterAddIsAdopted(t *testing.T) {
	t.Parallel()
	const h = "claude"
	e := newEnv(t)
	gitRepo(t, e.workspace, h+"/main.go")
	e.tuneOpts = func(o *Options) { o.crash = func(p string) bool { return p == "worktree-added" } }
	m1 := e.manager()
	_, err := m1.Spawn(context.Background(), api.SpawnRequest{Template: h, Worktree: true})
	if !isCrash(err) {
		t.Fatalf("spawn: %v, want the simulated crash", err)
	}
	m1.Close()
	path := filepath.Join(e.home.Root, "worktrees", h)
	recs, _, _, err := NewStore(e.home.AgentsPath()).Load()
	if err != nil || len(recs) != 1 || recs[0].Worktree == nil || recs[0].Worktree.Made || recs[0].Worktree.Path != path {
		t.Fatalf("record after the crash: %+v %v", recs, err)
	}
	if !exists(path) {
		t.Fatal("the worktree the crash left is gone")
	}

	e.tuneOpts = nil
	m2 := e.manager()
	a := e.waitState(m2, h, api.StateRunning)
	if a.Worktree == nil || a.Worktree.Path != path || a.Workspace != filepath.Join(realPath(t, path), h) {
		t.Fatalf("adopted agent: workspace %s worktree %+v", a.Workspace, a.Worktree)
	}
	recs, _, _, _ = NewStore(e.home.AgentsPath()).Load()
	if len(recs) != 1 || !recs[0].Worktree.Made {
		t.Fatalf("record not marked made: %+v", recs[0].Worktree)
	}
	if mk, ok := worktree.ReadMarker(path); !ok || mk.Agent != h {
		t.Fatalf("marker: %+v %v", mk, ok)
	}
}

// A daemon killed between the record's delete and `git worktree remove`
// leaves a marked worktree no record claims: Orphans names it, and
// nothing in it is lost.
func TestWorktreeCrashAfterRecordDeleteLeavesANamedOrphan(t *testing.T) {
	t.Parallel()
	const h = "claude"
	e := newEnv(t)
	gitRepo(t, e.workspace, h+"/main.go")
	e.tuneOpts = func(o *Options) { o.crash = func(p string) bool { return p == "record-deleted" } }
	m1 := e.manager()
	a := stoppedWorktreeAgent(t, e, m1, h, api.SpawnRequest{})
	if _, err := m1.DeleteAgent(context.Background(), a.Name, api.DeleteRequest{}); !isCrash(err) {
		t.Fatalf("delete: %v, want the simulated crash", err)
	}
	m1.Close()
	recs, _, _, _ := NewStore(e.home.AgentsPath()).Load()
	if len(recs) != 0 {
		t.Fatalf("records after the crash: %d", len(recs))
	}
	found := worktree.Scan(filepath.Join(e.home.Root, "worktrees"), e.home.Root)
	if len(found) != 1 || found[0].Path != a.Worktree.Path || found[0].Marker.Agent != a.Name {
		t.Fatalf("scan = %+v", found)
	}
	// The next daemon does not take it up (no record), nor remove it.
	e.tuneOpts = nil
	m2 := e.manager()
	if len(m2.List()) != 0 || !exists(a.Worktree.Path) {
		t.Fatal("the next daemon took up or removed the orphan")
	}
}
