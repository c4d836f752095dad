package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

// WorktreeRec is an agent's own git worktree as its record keeps it.
type WorktreeRec struct {
	// Repo is the top of the checkout the worktree was made from; Sub is
	// the template workspace's place in it, kept in the worktree.
	Repo string `json:"repo"`
	Sub  string `json:"sub,omitempty"`
	Path string `json:"path"`
	// CommonDir is the repository's common git dir (objects, refs).
	CommonDir  string `json:"common_dir,omitempty"`
	Branch     string `json:"branch"`
	Base       string `json:"base,omitempty"`
	BaseCommit string `json:"base_commit,omitempty"`
	// Made: git worktree add is known to have run. false is the intent,
	// written before it: a daemon killed between the add and the next
	// write leaves a record naming the worktree, which the next launch
	// adopts (or makes, if the add never ran).
	Made bool `json:"made"`
}

// Workdir is where the agent runs: the workspace's place in the worktree.
func (w *WorktreeRec) Workdir() string { return filepath.Join(w.Path, w.Sub) }

func (w *WorktreeRec) clone() *WorktreeRec {
	if w == nil {
		return nil
	}
	c := *w
	return &c
}

func (w *WorktreeRec) listing() *api.Worktree {
	if w == nil {
		return nil
	}
	return &api.Worktree{Repo: w.Repo, Path: w.Path, Branch: w.Branch, Base: w.Base}
}

// wtPlan is a spawn's worktree, decided before a name is taken.
type wtPlan struct {
	repo       worktree.Repo
	root       string
	branch     string // "" is leo/<agent>
	base       string
	baseCommit string
}

// crashError stops a spawn or delete at a seam the way a SIGKILL would:
// nothing after it runs, nothing is undone. Only tests make one.
type crashError struct{ point string }

func (e *crashError) Error() string { return "simulated crash at " + e.point }

// crashAt is the test seam between two steps that a kill may separate.
func (m *Manager) crashAt(point string) error {
	if m.opts.crash != nil && m.opts.crash(point) {
		return &crashError{point}
	}
	return nil
}

func isCrash(err error) bool {
	var c *crashError
	return errors.As(err, &c)
}

// planWorktree checks a worktree spawn before anything is recorded: the
// branch and base, and that the template's workspace is in a git checkout.
func (m *Manager) planWorktree(ctx context.Context, cfg *config.Config, res *config.Resolved, req api.SpawnRequest) (*wtPlan, error) {
	if !req.Worktree && !res.Worktree {
		if req.Branch != "" || req.Base != "" {
			return nil, api.Errorf(api.CodeInvalidArgs, "spawn: --branch and --base need --worktree (or worktree: true on %s)", res.Scope)
		}
		return nil, nil
	}
	if req.Branch != "" {
		if why := worktree.CheckBranch(req.Branch); why != "" {
			return nil, api.Errorf(api.CodeInvalidArgs, "spawn: --branch: %s", why)
		}
	}
	if req.Base != "" {
		if why := worktree.CheckRef(req.Base); why != "" {
			return nil, api.Errorf(api.CodeInvalidArgs, "spawn: --base: %s", why)
		}
	}
	ws := res.Workspace
	if _, err := os.Stat(ws); err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%s.workspace: %s does not exist; a worktree agent needs a workspace inside a git repository", res.Scope, ws)
	}
	repo, err := m.opts.Git.Find(ctx, ws)
	if errors.Is(err, worktree.ErrNotARepo) {
		return nil, api.Errorf(api.CodeConfigError, "%s.workspace: %s is not inside a git repository (a worktree agent needs one)", res.Scope, ws)
	}
	if err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%s.workspace: %s: %v", res.Scope, ws, err)
	}
	base, commit, err := m.opts.Git.Base(ctx, repo.Top, req.Base)
	if err != nil {
		if req.Base != "" {
			return nil, api.Errorf(api.CodeInvalidArgs, "spawn: --base: %v", err)
		}
		return nil, api.Errorf(api.CodeConfigError, "%s.workspace: %s has no commit to branch from: %v", res.Scope, repo.Top, err)
	}
	return &wtPlan{repo: repo, root: cfg.WorktreesRoot(m.opts.Home.Root), branch: req.Branch, base: base, baseCommit: commit}, nil
}

// makeWorktree writes the worktree's intent to a's record, makes it, marks
// it as leo's and records it made. a.op is held; a is not yet launched.
func (a *agent) makeWorktree(ctx context.Context, p *wtPlan) error {
	m, name := a.m, a.name()
	wt := &WorktreeRec{
		Repo: p.repo.Top, Sub: p.repo.Sub, Path: filepath.Join(p.root, name),
		CommonDir: p.repo.CommonDir, Branch: p.branch, Base: p.base, BaseCommit: p.baseCommit,
	}
	if wt.Branch == "" {
		wt.Branch = worktree.BranchPrefix + name
	}
	if _, err := os.Lstat(wt.Path); err == nil {
		return api.Errorf(api.CodeInvalidArgs, "spawn: worktree path %s exists (an earlier agent's, kept?); remove it or spawn under another --name", wt.Path)
	}
	exists, err := m.opts.Git.BranchExists(ctx, wt.Repo, wt.Branch)
	if err != nil {
		return api.Errorf(api.CodeInternal, "spawn: %v", err)
	}
	if exists {
		return api.Errorf(api.CodeInvalidArgs, "spawn: branch %s exists in %s; name another with --branch (or delete it)", wt.Branch, wt.Repo)
	}
	if err := a.commit(func(r *Record) { r.Worktree = wt.clone() }); err != nil {
		return api.Errorf(api.CodeInternal, "spawn: the worktree's intent could not be recorded, so none was made (%w)", err)
	}
	if err := m.opts.Git.Add(ctx, wt.Repo, wt.Path, wt.Branch, wt.BaseCommit); err != nil {
		return api.Errorf(api.CodeInternal, "spawn: %v", err)
	}
	if err := m.crashAt("worktree-added"); err != nil {
		return err
	}
	return a.adoptWorktree(wt)
}

// adoptWorktree marks a made worktree as leo's and records it made.
func (a *agent) adoptWorktree(wt *WorktreeRec) error {
	m := a.m
	a.mu.Lock()
	harnessName := a.rec.Harness
	a.mu.Unlock()
	if err := worktree.WriteMarker(wt.Path, worktree.Marker{
		Home: m.opts.Home.Root, Agent: a.name(), Repo: wt.Repo, Branch: wt.Branch, Base: wt.Base, Made: m.clk.Now(),
		Own: m.ownFiles(wt.Path, harnessName, wt.Sub),
	}); err != nil {
		m.log.Warn("worktree: marker not written (leo doctor will not recognise it)", "path", wt.Path, "err", err)
	}
	made := wt.clone()
	made.Made = true
	if err := a.commit(func(r *Record) { r.Worktree = made }); err != nil {
		return api.Errorf(api.CodeInternal, "worktree %s made but not recorded as made (%w)", wt.Path, err)
	}
	*wt = *made
	return nil
}

// ensureWorktree makes sure the worktree on a's record is there before a
// launch: a made one is used as it is; one only intended (a daemon killed
// around the add) is adopted when git made it, and made otherwise; one
// removed by hand is made again from its branch, which holds its commits.
func (a *agent) ensureWorktree(ctx context.Context, rec *Record) error {
	wt := rec.Worktree
	if wt == nil {
		return nil
	}
	m := a.m
	if gd, err := worktree.GitDir(wt.Path); err == nil {
		if _, err := os.Stat(gd); err == nil {
			if !wt.Made {
				m.log.Info("worktree: adopting one an earlier daemon made before recording it", "agent", rec.Name, "path", wt.Path)
				return a.adoptWorktree(wt)
			}
			return nil
		}
	}
	if _, err := os.Lstat(wt.Path); err == nil {
		return api.Errorf(api.CodeConfigError, "%s: worktree %s exists but is not a git worktree; leo leaves it alone", rec.scope(), wt.Path)
	}
	exists, err := m.opts.Git.BranchExists(ctx, wt.Repo, wt.Branch)
	if err != nil {
		return api.Errorf(api.CodeInternal, "%s: worktree %s: %v", rec.scope(), wt.Path, err)
	}
	commit := wt.BaseCommit
	if exists {
		commit = "" // check out the branch as it is: its commits are the agent's work
		m.log.Warn("worktree: missing; making it again from its branch", "agent", rec.Name, "path", wt.Path, "branch", wt.Branch)
		_ = m.opts.Git.Prune(ctx, wt.Repo)
	}
	if err := m.opts.Git.Add(ctx, wt.Repo, wt.Path, wt.Branch, commit); err != nil {
		return api.Errorf(api.CodeInternal, "%s: worktree %s: %v", rec.scope(), wt.Path, err)
	}
	return a.adoptWorktree(wt)
}

// writableDirs are the worktree's git dirs a sandbox must open for commits.
func (w *WorktreeRec) writableDirs() []string {
	var out []string
	if gd, err := worktree.GitDir(w.Path); err == nil {
		out = append(out, gd)
	}
	if w.CommonDir != "" {
		out = append(out, w.CommonDir)
	}
	return out
}

// statusCache keeps each worktree's dirty and ahead for a moment: a
// listing is asked for often (the web UI polls) and git status is not free.
type statusCache struct {
	mu sync.Mutex
	m  map[string]cachedStatus
}

type cachedStatus struct {
	at time.Time
	st worktree.Status
	ok bool
}

const statusFresh = 2 * time.Second

// ownFiles are the files leo's launches of harnessName write into a
// worktree at path, relative to it (harness.WorkspaceFiler), for any
// workspace under it.
func (m *Manager) ownFiles(path, harnessName string, sub string) []string {
	h, ok := harness.Lookup(harnessName)
	if !ok {
		return nil
	}
	f, ok := h.(harness.WorkspaceFiler)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range f.WorkspaceFiles(filepath.Join(path, sub)) {
		if rel, err := filepath.Rel(path, p); err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// withStatus adds dirty and ahead to the listing v of a; cached says an
// answer of the last moment will do (a fleet listing, polled).
func (a *agent) withStatus(ctx context.Context, av *api.Agent, cached bool) {
	v := av.Worktree
	if v == nil {
		return
	}
	m := a.m
	a.mu.Lock()
	harnessName, sub := a.rec.Harness, ""
	if a.rec.Worktree != nil {
		sub = a.rec.Worktree.Sub
	}
	a.mu.Unlock()
	now := time.Now()
	m.wtStatus.mu.Lock()
	c, hit := m.wtStatus.m[v.Path]
	m.wtStatus.mu.Unlock()
	if !cached || !hit || now.Sub(c.at) > statusFresh {
		st, err := m.opts.Git.Inspect(ctx, v.Path, v.Branch, v.Base, m.ownFiles(v.Path, harnessName, sub)...)
		c = cachedStatus{at: now, st: st, ok: err == nil}
		m.wtStatus.mu.Lock()
		if m.wtStatus.m == nil {
			m.wtStatus.m = map[string]cachedStatus{}
		}
		m.wtStatus.m[v.Path] = c
		m.wtStatus.mu.Unlock()
	}
	if c.ok {
		v.Dirty, v.Ahead = len(c.st.Changed) > 0, len(c.st.Ahead)
	}
}

func (m *Manager) forgetStatus(path string) {
	m.wtStatus.mu.Lock()
	delete(m.wtStatus.m, path)
	m.wtStatus.mu.Unlock()
}

// DeleteAgent deletes a stopped agent and, unless asked to keep it, its
// worktree: only when nothing would be lost, or with Force. The record
// goes first, the worktree after it (a daemon killed in between leaves a
// marked worktree no record claims, which leo doctor lists).
func (m *Manager) DeleteAgent(ctx context.Context, name string, req api.DeleteRequest) (api.DeleteResult, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.DeleteResult{}, err
	}
	a.op.Lock()
	defer a.op.Unlock()
	a.mu.Lock()
	wt := a.rec.Worktree.clone()
	state, deleted, harnessName := a.rec.State, a.deleted, a.rec.Harness
	a.mu.Unlock()
	if wt == nil || deleted || state != api.StateStopped {
		if err := a.delete(ctx); err != nil {
			return api.DeleteResult{}, err
		}
		return api.DeleteResult{OK: true, Agent: name}, nil
	}
	out := &api.WorktreeRemove{Path: wt.Path, Branch: wt.Branch}
	var st worktree.Status
	if !req.KeepWorktree {
		if _, err := os.Stat(wt.Path); err == nil {
			st, err = m.opts.Git.Inspect(ctx, wt.Path, wt.Branch, wt.Base, m.ownFiles(wt.Path, harnessName, wt.Sub)...)
			if err != nil {
				return api.DeleteResult{}, api.Errorf(api.CodeInternal, "agent %s not deleted: cannot tell what its worktree %s holds (%v)", name, wt.Path, err)
			}
		} else if ahead, err := m.opts.Git.Ahead(ctx, wt.Repo, wt.Branch, wt.Base); err == nil {
			st.Ahead = ahead
		}
		if !req.Force {
			if len(st.Changed) > 0 {
				return api.DeleteResult{}, api.Errorf(api.CodeWorktreeDirty,
					"agent %s not deleted: its worktree %s has uncommitted changes: %s (commit them, or --force to discard, or --keep-worktree to keep the worktree)",
					name, wt.Path, listText(st.Changed))
			}
			if len(st.Ahead) > 0 {
				return api.DeleteResult{}, api.Errorf(api.CodeWorktreeUnmerged,
					"agent %s not deleted: branch %s has commits on neither %s nor any remote: %s (merge or push them; --force removes the worktree and keeps the branch with them; --keep-worktree keeps both)",
					name, wt.Branch, cmpOr(wt.Base, "its base"), listText(st.Ahead))
			}
		}
	}
	if err := a.delete(ctx); err != nil {
		return api.DeleteResult{}, err
	}
	res := api.DeleteResult{OK: true, Agent: name, Worktree: out}
	if req.KeepWorktree {
		out.BranchKept = "--keep-worktree"
		return res, nil
	}
	if err := m.crashAt("record-deleted"); err != nil {
		return res, err
	}
	m.forgetStatus(wt.Path)
	// Forced: what is left is leo's own files, or what --force discards.
	if err := m.opts.Git.Remove(ctx, wt.Repo, wt.Path, true); err != nil {
		out.Error = fmt.Sprintf("the agent is deleted but its worktree could not be removed (%v); leo doctor lists it", err)
		m.log.Warn("worktree not removed", "agent", name, "path", wt.Path, "err", err)
		return res, nil
	}
	out.Removed = true
	out.DiscardedFiles = st.Changed // only --force gets here with any
	if len(st.Ahead) > 0 {
		// Commits are never discarded: the branch keeps them.
		out.BranchKept = fmt.Sprintf("it has %d commit(s) on neither %s nor any remote: %s", len(st.Ahead), cmpOr(wt.Base, "its base"), listText(st.Ahead))
		return res, nil
	}
	if err := m.opts.Git.DeleteBranch(ctx, wt.Repo, wt.Branch); err != nil {
		out.BranchKept = fmt.Sprintf("git branch -D failed: %v", err)
		return res, nil
	}
	out.BranchDeleted = true
	m.log.Info("worktree removed", "agent", name, "path", wt.Path, "branch", wt.Branch, "discarded_files", len(out.DiscardedFiles))
	return res, nil
}

// dropNewWorktree removes the worktree and branch of a spawn that did not
// start: they are new, and hold nothing of anyone's.
func (m *Manager) dropNewWorktree(ctx context.Context, wt *WorktreeRec) {
	if wt == nil {
		return
	}
	if err := m.opts.Git.Remove(ctx, wt.Repo, wt.Path, true); err != nil {
		m.log.Warn("worktree of a failed spawn not removed", "path", wt.Path, "err", err)
		return
	}
	if err := m.opts.Git.DeleteBranch(ctx, wt.Repo, wt.Branch); err != nil {
		m.log.Warn("branch of a failed spawn not deleted", "branch", wt.Branch, "err", err)
	}
}

// listText names at most 20 items.
func listText(items []string) string {
	if len(items) > 20 {
		return strings.Join(items[:20], ", ") + fmt.Sprintf(" and %d more", len(items)-20)
	}
	return strings.Join(items, ", ")
}
