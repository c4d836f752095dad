package config

import (
	"path/filepath"
	"testing"
)

func TestWorktreeFields(t *testing.T) {
	c := parseTestYAML(t, `worktrees:
  root: wt
templates:
  coder:
    worktree: true
tasks:
  nightly:
    worktree: true
    prompt_file: p.md
`)
	if got, want := c.WorktreesRoot("/leo"), filepath.Join(c.Home, "wt"); got != want {
		t.Errorf("WorktreesRoot = %s, want %s", got, want)
	}
	r, err := c.ResolveTemplate("coder")
	if err != nil || !r.Worktree {
		t.Fatalf("templates.coder: worktree %v, %v", r.Worktree, err)
	}
	if c2 := parseTestYAML(t, "templates:\n  a: {}\n"); c2.WorktreesRoot("/leo") != "/leo/worktrees" {
		t.Errorf("default root = %s", c2.WorktreesRoot("/leo"))
	}
}

// worktree: true is for templates and one-shot tasks: a persistent task's
// agent takes it from its template.
func TestWorktreeOnPersistentTaskIsAnError(t *testing.T) {
	c := parseTestYAML(t, `tasks:
  watch:
    runtime: persistent
    worktree: true
    schedule: "0 7 * * *"
    prompt_file: p.md
`)
	wantFinding(t, c, "tasks.watch.worktree: only for runtime: oneshot tasks (a persistent task's agent gets a worktree from its template's worktree: true)")
	if c.Validate() == nil {
		t.Fatal("Validate passed")
	}
}
