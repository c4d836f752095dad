package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

// runWorktree is the fresh worktree a firing of a one-shot task with
// worktree: true runs in, on branch leo/<task>/<run-id>.
type runWorktree struct {
	repo       worktree.Repo
	path       string
	branch     string
	base       string
	baseCommit string
}

func (w *runWorktree) workdir() string { return filepath.Join(w.path, w.repo.Sub) }

func (w *runWorktree) view() *api.Worktree {
	return &api.Worktree{Repo: w.repo.Top, Path: w.path, Branch: w.branch, Base: w.base}
}

// planRunWorktree decides the worktree of run id of task res: the
// repository its workspace is in, the path and branch, the base.
func (s *Service) planRunWorktree(ctx context.Context, cfg *config.Config, res *config.Resolved, id string) (*runWorktree, error) {
	g := s.opts.Git
	if _, err := os.Stat(res.Workspace); err != nil {
		return nil, fmt.Errorf("%s.workspace: %s does not exist; worktree: true needs a workspace inside a git repository", res.Scope, res.Workspace)
	}
	repo, err := g.Find(ctx, res.Workspace)
	if errors.Is(err, worktree.ErrNotARepo) {
		return nil, fmt.Errorf("%s.workspace: %s is not inside a git repository (worktree: true needs one)", res.Scope, res.Workspace)
	}
	if err != nil {
		return nil, fmt.Errorf("%s.workspace: %s: %v", res.Scope, res.Workspace, err)
	}
	base, commit, err := g.Base(ctx, repo.Top, "")
	if err != nil {
		return nil, fmt.Errorf("%s.workspace: %s has no commit to branch from: %v", res.Scope, repo.Top, err)
	}
	return &runWorktree{
		repo:   repo,
		path:   filepath.Join(cfg.WorktreesRoot(s.opts.Home), res.Name, id),
		branch: worktree.BranchPrefix + res.Name + "/" + id,
		base:   base, baseCommit: commit,
	}, nil
}

// makeRunWorktree makes w (its intent is in the runs-in-progress file
// already, on the run's record) and marks it as leo's.
func (s *Service) makeRunWorktree(ctx context.Context, w *runWorktree, task, id string) error {
	g := s.opts.Git
	if err := g.Add(ctx, w.repo.Top, w.path, w.branch, w.baseCommit); err != nil {
		return fmt.Errorf("tasks.%s: worktree for run %s: %v", task, id, err)
	}
	if err := worktree.WriteMarker(w.path, worktree.Marker{
		Home: s.opts.Home, Task: task, Run: id, Repo: w.repo.Top, Branch: w.branch, Base: w.base, Made: s.opts.Clock.Now(),
	}); err != nil {
		s.opts.Log.Warn("task run worktree: marker not written (leo doctor will not recognise it)", "task", task, "run", id, "err", err)
	}
	return nil
}

// finishRunWorktree removes w and its branch when the run left nothing in
// them; otherwise both are kept (they are the run's output) and the
// record says so.
func (s *Service) finishRunWorktree(ctx context.Context, w *runWorktree, task, id string) *api.Worktree {
	g := s.opts.Git
	v := w.view()
	st, err := g.Inspect(context.WithoutCancel(ctx), w.path, w.branch, w.base)
	if err != nil {
		s.opts.Log.Warn("task run worktree: cannot tell what it holds; kept", "task", task, "run", id, "path", w.path, "err", err)
		v.Kept = true
		return v
	}
	v.Dirty, v.Ahead = len(st.Changed) > 0, len(st.Ahead)
	if !st.Clean() {
		v.Kept = true
		s.opts.Log.Info("task run worktree kept: the run left changes or commits", "task", task, "run", id, "path", w.path, "changed", len(st.Changed), "ahead", len(st.Ahead))
		return v
	}
	if err := g.Remove(context.WithoutCancel(ctx), w.repo.Top, w.path, true); err != nil {
		s.opts.Log.Warn("task run worktree: not removed", "task", task, "run", id, "path", w.path, "err", err)
		v.Kept = true
		return v
	}
	if err := g.DeleteBranch(context.WithoutCancel(ctx), w.repo.Top, w.branch); err != nil {
		s.opts.Log.Warn("task run worktree: branch not deleted", "task", task, "run", id, "branch", w.branch, "err", err)
	}
	return v
}
