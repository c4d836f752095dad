package daemon_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEditedConfigIsReloadedByTheDaemon: an edit of leo.yaml on disk
// reaches the running daemon by itself (no `leo service reload`); a bad
// one keeps the running config and shows in /health's problems until it
// is fixed.
func TestEditedConfigIsReloadedByTheDaemon(t *testing.T) {
	h := newHome(t)
	r, _ := startOwner(t, h, "test", 20*time.Millisecond)
	deps := r.deps.Load()

	writeFile(t, h.ConfigPath, validConfig+"  coder:\n    harness: codex\n")
	waitFor(t, 10*time.Second, "the edit loaded", func() bool { return deps.Config().Templates["coder"] != nil })
	if n := r.agents.ConfigChangedCalls(); n != 1 {
		t.Errorf("ConfigChanged called %d times, want 1", n)
	}

	running := deps.Config()
	writeFile(t, h.ConfigPath, validConfig+"  broken:\n    harness: nope\n")
	var problems []string
	waitFor(t, 10*time.Second, "the bad edit in /health", func() bool {
		hl, err := r.Client.Health(context.Background())
		problems = hl.Problems
		return err == nil && slices.ContainsFunc(hl.Problems, func(p string) bool { return strings.Contains(p, "broken") })
	})
	if deps.Config() != running {
		t.Fatal("a bad edit replaced the running config")
	}
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "the running config is kept") }) {
		t.Errorf("problems %q do not say the running config is kept", problems)
	}

	writeFile(t, h.ConfigPath, validConfig+"  fixed:\n    harness: codex\n")
	waitFor(t, 10*time.Second, "the fix loaded and the problem gone", func() bool {
		hl, err := r.Client.Health(context.Background())
		return err == nil && len(hl.Problems) == 0 && deps.Config().Templates["fixed"] != nil
	})
}
