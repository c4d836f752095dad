package real

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The worktree step (issue 21): an agent of the real CLI spawned with
// --worktree runs in its own git worktree, on its own branch, with no
// startup dialog for leo to answer there (its trust was written for the
// worktree's path before the launch), and answers a message. codex, in
// sandbox workspace-write, is asked by the model server to commit in its
// worktree: the commit lands on the agent's branch, because the
// worktree's git dir and the repository's common dir are writable roots
// of its sandbox.

// wtAgent names the template (and agent) of the worktree step.
func (r *run) wtAgent() string { return r.h + "-wt" }

// wtOptions are the harness options of the worktree template.
var wtOptions = map[string]string{"codex": "sandbox: workspace-write"}

func gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=leo test", "-c", "user.email=test@leo.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (r *run) worktreeAgent(s *step) {
	name := r.wtAgent()
	repo := r.workspace(name)
	if err := os.MkdirAll(repo, 0o700); err != nil {
		s.Fatalf("%v", err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("a repository for leo's worktree step\n"), 0o600); err != nil {
		s.Fatalf("%v", err)
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "-A"}, {"commit", "--quiet", "-m", "first"}} {
		if out, err := gitIn(repo, args...); err != nil {
			s.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if r.h == "codex" {
		// The test's home is under /tmp, which workspace-write grants by
		// default: taken out, so only leo's writable roots let git write
		// outside the worktree (the objects and refs of the common dir).
		r.codexExcludeTmp(s)
	}

	s.leo("agent", "spawn", name, "--worktree")
	a := s.waitRunning(name, 3*time.Minute)
	w := a.Worktree
	if w == nil || w.Branch != "leo/"+name {
		s.Fatalf("agent %s: worktree %+v", name, w)
	}
	if real, err := filepath.EvalSymlinks(w.Path); err != nil || a.Workspace != real {
		s.Fatalf("agent %s runs in %s, not its worktree %s (%v)", name, a.Workspace, w.Path, err)
	}
	if cur, err := gitIn(w.Path, "rev-parse", "--abbrev-ref", "HEAD"); err != nil || cur != w.Branch {
		s.Fatalf("worktree %s is on %q (%v), want %s", w.Path, cur, err, w.Branch)
	}
	if r.h != "codex" {
		s.exchange(name, "In a worktree.")
	} else {
		r.codexCommits(s, name, w.Path)
	}
	// No startup dialog was answered for this agent: none was shown.
	for _, line := range strings.Split(r.d.Stderr(), "\n") {
		if strings.Contains(line, "agent startup: answering") && strings.Contains(line, "agent="+name) {
			s.Fatalf("leo answered a startup dialog in the worktree (its trust was not pre-written): %s", line)
		}
	}
}

// codexExcludeTmp takes /tmp and $TMPDIR out of codex's workspace-write
// grants in the test home's config.toml (leo's -c writable_roots replaces
// only that key).
func (r *run) codexExcludeTmp(s *step) {
	path := filepath.Join(r.w.UserEnv["CODEX_HOME"], "config.toml")
	if r.w.UserEnv["CODEX_HOME"] == "" {
		path = filepath.Join(r.w.UserEnv["HOME"], ".codex", "config.toml")
	}
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		s.Fatalf("%v", err)
	}
	if strings.Contains(string(data), "[sandbox_workspace_write]") {
		s.Fatalf("%s has a [sandbox_workspace_write] table already:\n%s", path, data)
	}
	data = append(data, []byte("\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n")...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		s.Fatalf("%v", err)
	}
}

// codexCommits has the model ask codex to write a file and commit it in
// its worktree, and checks the commit is on the agent's branch.
func (r *run) codexCommits(s *step, name, wt string) {
	m := r.marker()
	outside := filepath.Join(r.w.UserEnv["HOME"], "outside-the-worktree")
	script := "touch " + outside + " 2>/dev/null && echo OUTSIDE-WRITTEN; echo " + m + " > from-codex.txt && git add from-codex.txt && git -c user.name=codex -c user.email=codex@leo.invalid -c commit.gpgsign=false commit -q -m 'commit from codex " + m + "' && echo COMMITTED-OK"
	in, _ := json.Marshal(map[string]string{"cmd": script})
	var mu sync.Mutex
	var results []string
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if q.Side || !slices.Contains(q.Markers, m) {
			return modelserver.DefaultResponder(q)
		}
		if len(q.ToolResults) == 0 {
			return modelserver.Reply{ToolCall: &modelserver.ToolCall{Name: "exec_command", Input: string(in)}}
		}
		mu.Lock()
		results = results[:0]
		for _, res := range q.ToolResults {
			results = append(results, res.Text)
		}
		mu.Unlock()
		return modelserver.Reply{Text: "ACK " + m}
	})
	defer r.ms.SetResponder(nil)
	res := s.send(name, "Commit a file, please "+m)
	s.delivered(name, res.ID, m, 3*time.Minute)
	s.pane(name, "ACK "+m, 3*time.Minute)
	mu.Lock()
	got := slices.Clone(results)
	mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "COMMITTED-OK") {
		s.Fatalf("git commit in the worktree's sandbox: results %q", got)
	}
	if strings.Contains(got[0], "OUTSIDE-WRITTEN") {
		s.Logf("codex's sandbox does not confine commands on this machine: the commit proves less")
	}
	subject, err := gitIn(wt, "log", "-1", "--format=%s", "leo/"+name)
	if err != nil || subject != "commit from codex "+m {
		s.Fatalf("branch leo/%s: last commit %q (%v)", name, subject, err)
	}
	s.poll(30*time.Second, "the agent's worktree one commit ahead", func() (bool, string) {
		a := s.get(name)
		if a.Worktree == nil {
			return false, describe(a)
		}
		return a.Worktree.Ahead == 1, fmt.Sprintf("%s, %d ahead", describe(a), a.Worktree.Ahead)
	})
	// Deleting it would lose the commit: refused, named.
	if _, err := s.r.w.Client.Stop(s.ctx, name); err != nil {
		s.Fatalf("stop: %v", err)
	}
	_, err = s.r.w.Client.DeleteAgent(s.ctx, name, api.DeleteRequest{})
	if !api.HasCode(err, api.CodeWorktreeUnmerged) || !strings.Contains(err.Error(), "commit from codex "+m) {
		s.Fatalf("delete of the agent with a commit: %v", err)
	}
}
