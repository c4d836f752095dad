package config

import "path/filepath"

// Worktrees is the worktrees: section: where the git worktrees of
// worktree agents and task runs are made.
type Worktrees struct {
	// Root is the directory they are made under; "" is <home>/worktrees.
	Root string
}

func (d *decoder) worktrees(w *Worktrees, m fields) {
	w.Root = d.str("worktrees", m, "root")
}

// WorktreesRoot is the directory worktrees are made under: worktrees.root
// (relative to the directory of leo.yaml, ~ expanded), else
// <leoHome>/worktrees.
func (c *Config) WorktreesRoot(leoHome string) string {
	if c.Worktrees.Root != "" {
		if p, err := c.absPath(c.Worktrees.Root); err == nil {
			return p
		}
	}
	return filepath.Join(leoHome, "worktrees")
}

func (c *Config) validateWorktrees() []Finding {
	rv := &resolver{c: c}
	if c.Worktrees.Root != "" {
		if _, err := c.absPath(c.Worktrees.Root); err != nil {
			rv.errorf("worktrees.root", "%v", err)
		}
	}
	return rv.findings
}

// checkTaskWorktree refuses worktree: true on a persistent task: its
// prompt goes to an agent, which has (or has not) a worktree of its own
// from its template.
func (rv *resolver) checkTaskWorktree(r *Resolved) {
	if r.Worktree && r.Runtime == RuntimePersistent {
		rv.errorf(r.Scope+".worktree", "only for runtime: %s tasks (a persistent task's agent gets a worktree from its template's worktree: true)", RuntimeOneshot)
	}
}
