package task

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

const offlineTasks = `
templates:
  helper:
    harness: codex
tasks:
  morning:
    schedule: "0 7 * * *"
    prompt_file: p.md
  remind:
    runtime: persistent
    template: helper
    prompt_file: p.md
`

// offlineHome is a home holding offlineTasks and its prompt file.
func offlineHome(t *testing.T) (home.Home, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workspace", "p.md"), []byte("do it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, offlineTasks)
	return home.Home{Root: dir, ConfigPath: filepath.Join(dir, "leo.yaml")}, cfg
}

// tree is every path under root with its size and mode: what "writes
// nothing" is checked against.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %s %d\n", p, fi.Mode(), fi.ModTime(), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Issue 15.6: with no daemon, the list, history and run logs are read
// from the home's files as the daemon would answer them, and nothing is
// written — not even a missing directory.
func TestOfflineReadsWhatIsOnDiskAndWritesNothing(t *testing.T) {
	h, cfg := offlineHome(t)
	dir := h.Root

	// A home whose state/ does not exist yet: empty answers, no directory made.
	before := tree(t, dir)
	off := OpenOffline(h, cfg)
	if ts := off.List(); len(ts) != 2 || ts[0].Name != "morning" || ts[0].LastRun != nil || ts[0].NextRun != nil || ts[1].Agent != "helper" {
		t.Fatalf("list %+v", ts)
	}
	if hist, err := off.TaskHistory("morning", 0); err != nil || len(hist.Runs) != 0 {
		t.Fatalf("history %+v %v", hist, err)
	}
	if _, err := off.Log("morning", ""); !api.HasCode(err, api.CodeNotFound) || err.Error() != "task morning has no run logs yet" {
		t.Fatalf("log of a task that never ran: %v", err)
	}
	if after := tree(t, dir); after != before {
		t.Fatalf("reading with no daemon wrote:\nbefore\n%s\nafter\n%s", before, after)
	}

	// Runs the daemon (or leo run in the foreground) recorded.
	hist, err := OpenHistory(h.TaskHistoryDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)
	id := start.Format(RunIDLayout)
	rec := Record{ID: id, Task: "morning", Trigger: TriggerManual, Start: start, End: start.Add(time.Second), Outcome: OutcomeSucceeded, Reply: "ok"}
	if err := hist.Append(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.LogsDir(), "morning"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(LogPath(h.LogsDir(), "morning", id), []byte("the run's output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before = tree(t, dir)
	off = OpenOffline(h, cfg)
	ts := off.List()
	if ts[0].LastRun == nil || ts[0].LastRun.ID != id || ts[0].Running {
		t.Fatalf("list after a run: %+v", ts[0])
	}
	got, err := off.TaskHistory("morning", 10)
	if err != nil || len(got.Runs) != 1 || got.Runs[0].ID != id {
		t.Fatalf("history %+v %v", got, err)
	}
	if all, err := off.AllHistory(10); err != nil || len(all.Runs) != 1 {
		t.Fatalf("all history %+v %v", all, err)
	}
	l, err := off.Log("morning", id)
	if err != nil || l.Text != "the run's output\n" || l.Run != id {
		t.Fatalf("log %+v %v", l, err)
	}
	if err := ReadHistory(h.TaskHistoryDir()).Append(rec); err == nil {
		t.Fatal("a read-only history appended")
	}
	if after := tree(t, dir); after != before {
		t.Fatalf("reading with no daemon wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// Issue 17.11: the logs of a task that does not exist are not_found as
// such, and a persistent task's runs point to its agent's conversation.
func TestTaskLogOfAnUnknownOrPersistentTask(t *testing.T) {
	h, cfg := offlineHome(t)
	off := OpenOffline(h, cfg)
	_, err := off.Log("nosuch", "")
	if !api.HasCode(err, api.CodeNotFound) || err.Error() != `task "nosuch" not found` {
		t.Fatalf("unknown task: %v", err)
	}
	for _, run := range []string{"", "20260302T070000.000Z"} {
		_, err = off.Log("remind", run)
		want := "task remind is persistent: its runs are turns of agent helper, which keep no run logs; see the conversation with: leo agent logs helper (or leo attach helper)"
		if !api.HasCode(err, api.CodeNotFound) || err.Error() != want {
			t.Fatalf("persistent task, run %q: %v\nwant %q", run, err, want)
		}
	}
}
