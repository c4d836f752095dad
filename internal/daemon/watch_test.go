package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const watchA = "templates:\n  assistant:\n    harness: claude\n    workspace: /tmp/a\n"

// lockedLog is a log sink the test reads while the store writes.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watchStore is a config store on a temp leo.yaml holding content, loaded
// as the daemon loads it at start. Each Watch call is one owner check: the
// test drives the checks itself, no clock involved.
func watchStore(t *testing.T, content string) (*configStore, *lockedLog, *int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "leo.yaml")
	writeWatch(t, path, content)
	logs := &lockedLog{}
	s := &configStore{path: path, getenv: func(string) string { return "" }, load: readValid,
		log: slog.New(slog.NewTextHandler(logs, nil))}
	c, sum, err := readValid(path, s.getenv)
	if err != nil {
		t.Fatal(err)
	}
	s.start(c, sum)
	reloads := new(int)
	s.changed = func() { *reloads++ }
	return s, logs, reloads
}

func writeWatch(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// An edit of leo.yaml is loaded once it has settled, exactly once, and a
// half-written file is never loaded nor reported.
func TestWatchReloadsASettledEditOnce(t *testing.T) {
	s, logs, reloads := watchStore(t, watchA)
	ctx := context.Background()
	s.Watch(ctx)
	s.Watch(ctx)
	if *reloads != 0 {
		t.Fatalf("an unchanged file was reloaded %d times", *reloads)
	}

	// An editor's write caught half-way: not YAML yet.
	writeWatch(t, s.path, watchA+"  coder:\n    harness: [cod")
	s.Watch(ctx)
	edited := watchA + "  coder:\n    harness: codex\n    workspace: /tmp/c\n"
	writeWatch(t, s.path, edited)
	s.Watch(ctx) // changed again since the last look: still settling
	if *reloads != 0 || s.Problem() != "" || strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("a file still being written was acted on: reloads %d, problem %q, log %s", *reloads, s.Problem(), logs)
	}
	s.Watch(ctx) // settled
	if *reloads != 1 || s.Get().Templates["coder"] == nil {
		t.Fatalf("after the edit settled: reloads %d, templates %v", *reloads, s.Get().TemplateNames())
	}
	for range 3 {
		s.Watch(ctx)
	}
	if *reloads != 1 {
		t.Fatalf("the same edit was reloaded %d times", *reloads)
	}
	if n := strings.Count(logs.String(), "leo.yaml changed on disk; reloaded"); n != 1 {
		t.Fatalf("the reload was logged %d times:\n%s", n, logs)
	}
}

// A bad edit keeps the running config, is logged once and stays a problem
// until the file is fixed or put back.
func TestWatchKeepsTheConfigOnABadEdit(t *testing.T) {
	s, logs, reloads := watchStore(t, watchA)
	ctx := context.Background()
	before := s.Get()
	writeWatch(t, s.path, watchA+"  bad:\n    harness: nope\n")
	for range 4 {
		s.Watch(ctx)
	}
	if s.Get() != before || *reloads != 0 {
		t.Fatalf("a bad edit replaced the running config")
	}
	p := s.Problem()
	if !strings.Contains(p, "the running config is kept") || !strings.Contains(p, `templates.bad.harness "nope"`) {
		t.Fatalf("problem = %q, want why the edit was refused", p)
	}
	if n := strings.Count(logs.String(), "leo.yaml changed on disk and was not loaded"); n != 1 {
		t.Fatalf("the refused edit was logged %d times:\n%s", n, logs)
	}

	// Put back as it runs: nothing to reload, the problem is gone.
	writeWatch(t, s.path, watchA)
	s.Watch(ctx)
	s.Watch(ctx)
	if s.Problem() != "" || *reloads != 0 {
		t.Fatalf("after undoing the edit: problem %q, reloads %d", s.Problem(), *reloads)
	}

	// A fix reloads and clears it too.
	writeWatch(t, s.path, watchA+"  bad:\n    harness: nope\n")
	s.Watch(ctx)
	s.Watch(ctx)
	if s.Problem() == "" {
		t.Fatal("the bad edit again: no problem")
	}
	writeWatch(t, s.path, watchA+"  good:\n    harness: codex\n    workspace: /tmp/g\n")
	s.Watch(ctx)
	s.Watch(ctx)
	if s.Problem() != "" || *reloads != 1 || s.Get().Templates["good"] == nil {
		t.Fatalf("after the fix: problem %q, reloads %d", s.Problem(), *reloads)
	}
}

// leo's own saves reload through the API right after writing; the watcher
// then finds the content running and neither reloads nor logs it again.
func TestWatchDoesNotReloadLeosOwnSaveAgain(t *testing.T) {
	s, logs, reloads := watchStore(t, watchA)
	ctx := context.Background()
	writeWatch(t, s.path, watchA+"  saved:\n    harness: codex\n    workspace: /tmp/s\n")
	if _, err := s.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		s.Watch(ctx)
	}
	if *reloads != 1 {
		t.Fatalf("reloads %d, want 1 (the save's own)", *reloads)
	}
	if strings.Contains(logs.String(), "changed on disk") {
		t.Fatalf("the watcher logged leo's own save:\n%s", logs)
	}
}

// A deleted leo.yaml keeps the running config and says so.
func TestWatchReportsARemovedFile(t *testing.T) {
	s, _, reloads := watchStore(t, watchA)
	ctx := context.Background()
	before := s.Get()
	if err := os.Remove(s.path); err != nil {
		t.Fatal(err)
	}
	s.Watch(ctx)
	s.Watch(ctx)
	if s.Get() != before || *reloads != 0 || !strings.Contains(s.Problem(), "not found") {
		t.Fatalf("removed leo.yaml: reloads %d, problem %q", *reloads, s.Problem())
	}
}
