package api

import (
	"fmt"
	"strings"
)

// Worktree is an agent's (or a task run's) own git worktree.
type Worktree struct {
	// Repo is the checkout it was made from; Path is the worktree.
	Repo   string `json:"repo"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	// Base is what the branch started from and is compared with.
	Base string `json:"base,omitempty"`
	// Dirty: it has uncommitted changes (untracked files too).
	Dirty bool `json:"dirty"`
	// Ahead counts the branch's commits on neither Base nor any remote:
	// the work a removal of the branch would lose.
	Ahead int `json:"ahead"`
	// Kept is set on a task run's record when the run left changes or
	// commits, so its worktree was kept (a clean one is removed).
	Kept bool `json:"kept,omitempty"`
}

// DeleteRequest is DELETE /agents/{name}'s options (query parameters
// force=true, keep_worktree=true).
type DeleteRequest struct {
	// Force removes the agent's worktree and branch even when that
	// discards changes or commits.
	Force bool `json:"force,omitempty"`
	// KeepWorktree deletes the agent and keeps its worktree and branch.
	KeepWorktree bool `json:"keep_worktree,omitempty"`
}

// DeleteResult is DELETE /agents/{name}'s answer.
type DeleteResult struct {
	OK       bool            `json:"ok"`
	Agent    string          `json:"agent,omitempty"`
	Worktree *WorktreeRemove `json:"worktree,omitempty"`
}

// WorktreeRemove is what a delete did with the agent's worktree.
type WorktreeRemove struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	// Removed: the worktree is gone; false with --keep-worktree.
	Removed bool `json:"removed"`
	// BranchDeleted: the branch went with it (merged or pushed, or
	// --force); otherwise BranchKept says why it stays.
	BranchDeleted bool   `json:"branch_deleted"`
	BranchKept    string `json:"branch_kept,omitempty"`
	// DiscardedFiles are the uncommitted changes --force threw away.
	// Commits are never thrown away: a branch holding any stays.
	DiscardedFiles []string `json:"discarded_files,omitempty"`
	// Error is a removal that failed after the record went (the worktree
	// is left; leo doctor lists it).
	Error string `json:"error,omitempty"`
}

// State says in words what a worktree holds that nothing else has.
func (w *Worktree) State() string {
	dirty := "no uncommitted changes"
	if w.Dirty {
		dirty = "uncommitted changes"
	}
	return fmt.Sprintf("%s, %d commit(s) on neither the base nor a remote", dirty, w.Ahead)
}

// maxListed is how many discarded files Lines names before it counts.
const maxListed = 20

// Lines says what a delete did with the agent's worktree, a line a fact:
// removed or kept, what --force discarded, the branch deleted or kept and
// why. Every client says it in these words.
func (r *WorktreeRemove) Lines() []string {
	if r == nil {
		return nil
	}
	var lines []string
	switch {
	case r.Error != "":
		lines = append(lines, "worktree "+r.Path+" left: "+r.Error)
	case r.Removed:
		lines = append(lines, "removed worktree "+r.Path)
	default:
		lines = append(lines, "kept worktree "+r.Path+" and branch "+r.Branch)
	}
	if n := len(r.DiscardedFiles); n > 0 {
		names := strings.Join(r.DiscardedFiles[:min(n, maxListed)], ", ")
		if n > maxListed {
			names += fmt.Sprintf(" and %d more", n-maxListed)
		}
		lines = append(lines, fmt.Sprintf("discarded %d uncommitted change(s): %s", n, names))
	}
	if r.BranchDeleted {
		lines = append(lines, "deleted branch "+r.Branch)
	} else if r.Removed || r.Error != "" {
		kept := r.BranchKept
		if kept == "" {
			kept = "-"
		}
		lines = append(lines, "kept branch "+r.Branch+": "+kept)
	}
	return lines
}
