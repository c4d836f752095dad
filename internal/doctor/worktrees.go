package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/blackpaw-studio/leo/internal/worktree"
)

// NameWorktrees is the check of the worktrees leo made.
const NameWorktrees = "worktrees"

// Worktrees is what the worktrees check looks at.
type Worktrees struct {
	// Roots are the directories leo makes worktrees under (worktrees.root,
	// <home>/worktrees).
	Roots []string
	// Claimed says whether the agent record or the task run a worktree's
	// marker names still claims the worktree at path (an agent's record
	// naming it, a run in progress or whose record keeps it as output).
	Claimed func(path string, m worktree.Marker) bool
	// Git runs git (zero: git on PATH).
	Git worktree.Git
}

// orphan is a leo-made worktree nothing claims, and what is in it.
type orphan struct {
	worktree.Found
	st  worktree.Status
	err error
}

func (o orphan) describe() string {
	who := "agent " + o.Marker.Agent
	if o.Marker.Task != "" {
		who = "task " + o.Marker.Task + " run " + o.Marker.Run
	}
	what := "clean, merged"
	switch {
	case o.err != nil:
		what = "cannot tell what it holds: " + o.err.Error()
	case !o.st.Clean():
		var parts []string
		if n := len(o.st.Changed); n > 0 {
			parts = append(parts, fmt.Sprintf("%d uncommitted change(s)", n))
		}
		if n := len(o.st.Ahead); n > 0 {
			parts = append(parts, fmt.Sprintf("%d commit(s) on neither its base nor a remote", n))
		}
		what = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s (%s, branch %s; %s)", o.Path, who, o.Marker.Branch, what)
}

func (w *Worktrees) orphans(ctx context.Context, home string) []orphan {
	var out []orphan
	seen := map[string]bool{}
	for _, root := range w.Roots {
		for _, f := range worktree.Scan(root, home) {
			if seen[f.Path] || (w.Claimed != nil && w.Claimed(f.Path, f.Marker)) {
				continue
			}
			seen[f.Path] = true
			st, err := w.Git.Inspect(ctx, f.Path, f.Marker.Branch, f.Marker.Base, f.Marker.Own...)
			out = append(out, orphan{Found: f, st: st, err: err})
		}
	}
	return out
}

// checkWorktrees lists the worktrees leo made that no agent record or
// task run claims (a daemon killed mid-delete, a record lost). It never
// removes one; --fix removes only the clean, merged ones.
func checkWorktrees(ctx context.Context, e *Env) (Check, bool) {
	w := e.Worktrees
	if w == nil {
		return Check{}, false
	}
	orphans := w.orphans(ctx, e.Home.Root)
	if len(orphans) == 0 {
		return Check{Name: NameWorktrees, Status: OK, Message: "every worktree leo made is claimed by an agent or a task run"}, true
	}
	var list []string
	for _, o := range orphans {
		list = append(list, o.describe())
	}
	return Check{
		Name:    NameWorktrees,
		Status:  Warn,
		Message: fmt.Sprintf("%d worktree(s) leo made that no agent or task run claims: %s", len(orphans), strings.Join(list, "; ")),
		Fix:     "leo doctor --fix removes the clean, merged ones; look at the others, then git worktree remove <path>",
	}, true
}

// fixWorktrees removes the orphaned worktrees that hold nothing (clean,
// and no commit on neither the base nor a remote), with their branches.
// With a daemon running it leaves task runs' worktrees alone: a run
// starting now has one before its record.
func fixWorktrees(ctx context.Context, e *Env) []Repair {
	w := e.Worktrees
	if w == nil {
		return nil
	}
	daemon, _ := e.daemonHolder()
	var out []Repair
	for _, o := range w.orphans(ctx, e.Home.Root) {
		if o.err != nil || !o.st.Clean() || (daemon && o.Marker.Task != "") {
			continue
		}
		// Forced: what is left is leo's own files (Marker.Own), which a
		// plain remove refuses as untracked.
		if err := w.Git.Remove(ctx, o.Marker.Repo, o.Path, true); err != nil {
			out = append(out, Repair{Name: NameWorktrees, OK: false, Message: "could not remove " + o.Path + ": " + err.Error()})
			continue
		}
		msg := "removed the orphaned worktree " + o.Path
		if err := w.Git.DeleteBranch(ctx, o.Marker.Repo, o.Marker.Branch); err != nil {
			msg += "; its branch " + o.Marker.Branch + " stays (" + err.Error() + ")"
		} else {
			msg += " and its branch " + o.Marker.Branch
		}
		out = append(out, Repair{Name: NameWorktrees, OK: true, Message: msg})
	}
	return out
}
