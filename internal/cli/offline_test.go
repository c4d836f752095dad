package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/agent"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/task"
)

// homeTree is every path under root with its mode, time and size: what
// "never writes" is checked against.
func homeTree(t *testing.T, root string) string {
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

// Issue 15.6: with no daemon, the commands that only read files leo keeps
// answer from those files — the run a foreground `leo run` recorded, its
// log, the task list, the agents as agents.json holds them — say on stderr
// that no daemon runs, carry "live": false in JSON, and write nothing.
func TestReadingWhatIsOnDiskNeedsNoDaemon(t *testing.T) {
	e, h := taskEnv(t)
	// What a foreground `leo run morning` leaves (task.RunOnce records
	// through the same history and log files).
	hist, err := task.OpenHistory(h.TaskHistoryDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	id := task.RunID(start)
	rec := api.TaskRun{ID: id, Task: "morning", Trigger: api.TriggerManual, Start: start, End: start.Add(2 * time.Second),
		Outcome: api.OutcomeFailed, Reason: api.ReasonClaudeNotFound, Message: claude.NotFoundMessage}
	if err := hist.Append(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.LogsDir(), "morning"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(task.LogPath(h.LogsDir(), "morning", id), []byte("[leo] run "+id+"\nthe output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := agent.NewStore(h.AgentsPath()).Save(func() []*agent.Record {
		return []*agent.Record{{Name: "bob", Template: "assistant", Harness: "claude", Workspace: "/w", State: api.StateRunning}}
	}); err != nil {
		t.Fatal(err)
	}
	before := homeTree(t, h.Root)

	for _, tc := range []struct {
		argv []string
		text []string // in stdout
		json func(obj map[string]any) bool
	}{
		{[]string{"task", "logs", "morning", "--run", id}, []string{"the output"},
			func(o map[string]any) bool {
				return o["run"] == id && strings.Contains(o["text"].(string), "the output")
			}},
		{[]string{"task", "logs", "morning"}, []string{"the output"},
			func(o map[string]any) bool { return o["run"] == id }},
		{[]string{"task", "history", "morning"}, []string{id, "claude_not_found"},
			func(o map[string]any) bool {
				r := o["runs"].([]any)
				return len(r) == 1 && r[0].(map[string]any)["id"] == id
			}},
		{[]string{"task", "history"}, []string{id},
			func(o map[string]any) bool { return len(o["runs"].([]any)) == 1 }},
		{[]string{"task", "list"}, []string{"morning", "nightly", "failed (claude_not_found)"},
			func(o map[string]any) bool {
				ts := o["tasks"].([]any)
				m := ts[0].(map[string]any)
				return len(ts) == 2 && m["name"] == "morning" && m["last_run"].(map[string]any)["id"] == id && m["next_run"] == nil
			}},
		{[]string{"agent", "list"}, []string{"bob", "running"},
			func(o map[string]any) bool {
				as := o["agents"].([]any)
				return len(as) == 1 && as[0].(map[string]any)["name"] == "bob"
			}},
	} {
		name := strings.Join(tc.argv, " ")
		r := e.run(tc.argv...)
		if r.code != ExitOK {
			t.Errorf("leo %s with no daemon: %+v", name, r)
			continue
		}
		mustContain(t, "leo "+name, r.stdout, tc.text...)
		mustContain(t, "leo "+name+" stderr", r.stderr, "leo: no leo daemon runs for this home", client.StartHint)
		r = e.run(append(tc.argv, "--json")...)
		if r.code != ExitOK {
			t.Errorf("leo %s --json with no daemon: %+v", name, r)
			continue
		}
		obj := decodeOne(t, r.stdout)
		if obj["live"] != false || !tc.json(obj) {
			t.Errorf("leo %s --json: %s", name, r.stdout)
		}
		mustContain(t, "leo "+name+" --json stderr", r.stderr, "no leo daemon runs")
	}
	if after := homeTree(t, h.Root); after != before {
		t.Errorf("reading with no daemon wrote:\n--- before\n%s--- after\n%s", before, after)
	}
}

// A home whose state/ does not exist yet: empty answers, and no state/.
func TestReadingAFreshHomeCreatesNothing(t *testing.T) {
	e, h := daemonEnv(t)
	before := homeTree(t, h.Root)
	for _, argv := range [][]string{{"agent", "list"}, {"task", "list"}, {"task", "history"}} {
		if r := e.run(argv...); r.code != ExitOK {
			t.Errorf("leo %v: %+v", argv, r)
		}
	}
	if after := homeTree(t, h.Root); after != before {
		t.Errorf("wrote:\n--- before\n%s--- after\n%s", before, after)
	}
}

// Issue 17.11: `leo task logs` of a task that does not exist says not
// found (not "no run logs yet"), and a persistent task's logs point to its
// agent's conversation.
func TestTaskLogsOfAnUnknownOrPersistentTask(t *testing.T) {
	e, h := taskEnv(t)
	if err := os.WriteFile(h.ConfigPath, []byte(taskTestConfig+`  remind:
    runtime: persistent
    prompt_file: p.md
`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run("task", "logs", "nosuch", "--json")
	obj := assertJSONFailure(t, r, "not_found", ExitError)
	if obj["message"] != `task "nosuch" not found` {
		t.Errorf("unknown task: %v", obj["message"])
	}
	r = e.run("task", "logs", "remind")
	want := "task remind is persistent: its runs are turns of agent remind, which keep no run logs; see the conversation with: leo agent logs remind (or leo attach remind)"
	if r.code != ExitError || !strings.Contains(r.stderr, want) {
		t.Errorf("persistent task: %+v", r)
	}
}

// A daemon that holds the lock but does not answer is not "no daemon":
// the reads do not go behind its back.
func TestReadsWhileADaemonHoldsTheLockAreDaemonDown(t *testing.T) {
	e, h := taskEnv(t)
	l, err := lockfileAcquire(t, h)
	if err != nil {
		t.Fatal(err)
	}
	defer l()
	for _, argv := range [][]string{{"task", "list", "--json"}, {"agent", "list", "--json"}} {
		obj := assertJSONFailure(t, e.run(argv...), "daemon_down", ExitDaemonDown)
		mustContain(t, "message", obj["message"].(string), "holds the lock but does not answer")
	}
}

func lockfileAcquire(t *testing.T, h home.Home) (func(), error) {
	t.Helper()
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		return nil, err
	}
	return func() { l.Release() }, nil
}
