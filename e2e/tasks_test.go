package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// writeTasks writes leo.yaml with one-shot tasks: name → harness and extra
// YAML at a task's settings indentation. Each task's workspace holds its
// prompt file; FAKE_HARNESS_LOG is in every task's env.
func writeTasks(t *testing.T, w world, tasks map[string][2]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("defaults:\n  harness: claude\ntasks:\n")
	names := make([]string, 0, len(tasks))
	for n := range tasks {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ws := filepath.Join(w.Workspaces, "task-"+n)
		if err := os.MkdirAll(ws, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "prompt.md"), []byte("report on "+n+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n    prompt_file: prompt.md\n%s", n, tasks[n][0], ws, tasks[n][1])
		if !strings.Contains(tasks[n][1], "    env:\n") {
			b.WriteString("    env:\n")
		}
		fmt.Fprintf(&b, "      FAKE_HARNESS_LOG: %q\n", w.HarnessLog)
	}
	if err := os.WriteFile(w.Home.ConfigPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func runJSON(t *testing.T, w world, args ...string) (api.TaskRun, cliResult) {
	t.Helper()
	r := leo(t, w, nil, append(args, "--json")...)
	var out struct {
		api.TaskRun
		Run *api.TaskRun `json:"run"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if out.Run != nil {
		return *out.Run, r
	}
	return out.TaskRun, r
}

// One-shot runs of each harness through the daemon: the run succeeds with
// the session id, reply and usage its stream reported, its output is in
// its log, and the next run continues the same conversation.
func TestTaskRunsThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tasks := map[string][2]string{}
	for _, h := range leoproc.Harnesses {
		tasks[h] = [2]string{h, ""}
	}
	writeTasks(t, w, tasks)
	w.startDaemon()
	for _, h := range leoproc.Harnesses {
		first, r := runJSON(t, w, "run", h)
		if r.code != 0 || first.Outcome != api.OutcomeSucceeded || first.SessionID == "" || first.Trigger != api.TriggerManual {
			t.Fatalf("%s first run: %+v\n%s", h, first, r)
		}
		if !strings.Contains(first.Reply, "report on "+h) || first.Usage == nil || first.Usage.OutputTokens == 0 {
			t.Fatalf("%s reply %q usage %+v", h, first.Reply, first.Usage)
		}
		second, r := runJSON(t, w, "run", h)
		if r.code != 0 || second.SessionID != first.SessionID {
			t.Fatalf("%s second run resumed %q, want %q\n%s", h, second.SessionID, first.SessionID, r)
		}
		last := w.Launches(h)[len(w.Launches(h))-1]
		if !slices.Contains(last, first.SessionID) {
			t.Fatalf("%s second run argv %q does not resume %s", h, last, first.SessionID)
		}
		lg := leo(t, w, nil, "task", "logs", h, "--run", first.ID)
		if lg.code != 0 || !strings.Contains(lg.stdout, first.SessionID) {
			t.Fatalf("%s log of run %s: %s", h, first.ID, lg)
		}
		fi, err := os.Stat(filepath.Join(w.Home.Root, "state", "logs", h, first.ID+".log"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s log file: %v %v", h, fi, err)
		}
	}
	hist := leo(t, w, nil, "task", "history", "--json")
	var all api.TaskHistory
	if err := json.Unmarshal([]byte(hist.stdout), &all); err != nil || len(all.Runs) != 2*len(leoproc.Harnesses) {
		t.Fatalf("history: %v\n%s", err, hist)
	}
}

// Each failure ends in history with its outcome and reason, and the
// daemon goes on: a stream error on exit 0, a transient codex error that
// recovers, a hang killed at the timeout with its process group, retries,
// and claude not installed.
func TestTaskFailuresThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex", "opencode") // no claude on PATH
	writeTasks(t, w, map[string][2]string{
		"noclaude":  {"claude", ""},
		"errexit0":  {"opencode", "    env:\n      FAKE_SCENARIO: stream_error_exit0\n"},
		"transient": {"codex", "    env:\n      FAKE_SCENARIO: reconnecting\n"},
		"hang":      {"codex", "    timeout: 2s\n    env:\n      FAKE_SCENARIO: hang\n      FAKE_HANG_CHILD: \"1\"\n"},
		"retried":   {"codex", "    retries: 1\n    env:\n      FAKE_SCENARIO: turn_failed\n"},
	})
	w.startDaemon()

	rec, r := runJSON(t, w, "run", "noclaude")
	if r.code == 0 || rec.Outcome != api.OutcomeFailed || rec.Reason != api.ReasonClaudeNotFound || rec.Message != claude.NotFoundMessage {
		t.Fatalf("claude missing: %+v\n%s", rec, r)
	}
	rec, r = runJSON(t, w, "run", "errexit0")
	if rec.Outcome != api.OutcomeFailed || rec.Reason != api.ReasonHarnessError || rec.ExitCode == nil || *rec.ExitCode != 0 {
		t.Fatalf("error then exit 0: %+v\n%s", rec, r)
	}
	rec, r = runJSON(t, w, "run", "transient")
	if rec.Outcome != api.OutcomeSucceeded || len(rec.Warnings) == 0 || !strings.Contains(strings.Join(rec.Warnings, " "), "Reconnecting") {
		t.Fatalf("transient codex errors: %+v\n%s", rec, r)
	}
	rec, r = runJSON(t, w, "run", "hang")
	if rec.Outcome != api.OutcomeTimeout || rec.Reason != api.ReasonTimeout {
		t.Fatalf("hang: %+v\n%s", rec, r)
	}
	testutil.WaitFor(t, 20*time.Second, func() bool { return !w.fakeRunning("hang") }, "the hung run's process group to be gone")
	rec, r = runJSON(t, w, "run", "retried")
	if rec.Outcome != api.OutcomeFailed || rec.Attempt != 2 || len(rec.Warnings) == 0 {
		t.Fatalf("retries: %+v\n%s", rec, r)
	}
	if h, err := w.Client.Health(t.Context()); err != nil || !h.Ready {
		t.Fatalf("the daemon after the failures: %+v %v", h, err)
	}
}

// fakeRunning reports whether a fake harness process of task's runs (the
// run itself, or a child it started) is still alive.
func (w world) fakeRunning(task string) bool {
	w.TB.Helper()
	var pids []int
	for _, ev := range w.HarnessEvents() {
		if ev.Child > 0 {
			pids = append(pids, ev.Child)
		}
		if slices.ContainsFunc(ev.Argv, func(a string) bool { return strings.HasPrefix(a, "report on "+task) }) && ev.PID > 0 {
			pids = append(pids, ev.PID)
		}
	}
	if len(pids) == 0 {
		w.TB.Fatalf("no fake harness process of task %s was logged", task)
	}
	for _, pid := range pids {
		if proc.Start(pid) != "" { // alive, and not a zombie
			return true
		}
	}
	return false
}

// Issue 15.6, as a user meets it: with no daemon, `leo run` runs the task
// in the foreground and names the command that shows its output; that
// command, the history, the task list and the agent list then answer from
// the home's files (saying no daemon runs), and none of them starts a
// daemon or writes to state/. Issue 17.11 on the same home: an unknown
// task's logs are not_found.
func TestReadsWithoutADaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	writeTasks(t, w, map[string][2]string{"report": {"codex", ""}})

	r := leo(t, w, nil, "run", "report")
	if r.code != 0 || !strings.Contains(r.stderr, "no leo daemon runs for this home") {
		t.Fatalf("foreground run: %s", r)
	}
	m := regexp.MustCompile(`leo task logs report --run (\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("the run names no log command: %s", r)
	}
	id := m[1]
	stateBefore := dirListing(t, filepath.Join(w.Home.Root, "state"))

	lg := leo(t, w, nil, "task", "logs", "report", "--run", id)
	if lg.code != 0 || lg.stdout == "" || !strings.Contains(lg.stderr, "no leo daemon runs for this home") {
		t.Fatalf("task logs: %s", lg)
	}
	var hist struct {
		api.TaskHistory
		Live *bool `json:"live"`
	}
	h := leo(t, w, nil, "task", "history", "report", "--json")
	if err := json.Unmarshal([]byte(h.stdout), &hist); err != nil || h.code != 0 || len(hist.Runs) != 1 || hist.Runs[0].ID != id || hist.Live == nil || *hist.Live {
		t.Fatalf("task history: %v %s", err, h)
	}
	for _, args := range [][]string{{"task", "list", "--json"}, {"agent", "list", "--json"}, {"task", "history"}} {
		r := leo(t, w, nil, args...)
		if r.code != 0 || !strings.Contains(r.stderr, "no leo daemon runs for this home") {
			t.Fatalf("leo %v: %s", args, r)
		}
	}
	leo(t, w, nil, "task", "logs", "nosuch", "--json").failure(t, "not_found", 1)
	if after := dirListing(t, filepath.Join(w.Home.Root, "state")); after != stateBefore {
		t.Fatalf("the reads changed state/:\n%s\nthen\n%s", stateBefore, after)
	}

	// The same through a daemon: live, and the unknown task not_found.
	w.startDaemon()
	if obj := leo(t, w, nil, "task", "logs", "report", "--run", id, "--json").success(t); obj["live"] != true || obj["run"] != id {
		t.Fatalf("task logs through the daemon: %v", obj)
	}
	if msg := leo(t, w, nil, "task", "logs", "nosuch", "--json").failure(t, "not_found", 1); msg != `task "nosuch" not found` {
		t.Fatalf("unknown task through the daemon: %q", msg)
	}
}

// dirListing is every path under dir with its size and time.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", p, fi.Size(), fi.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Issue 15.8: a persistent task whose agent needs claude, with no claude
// installed, records the spec's message exactly — as a one-shot run does —
// with the agent in its own field.
func TestPersistentTaskWithoutClaude(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex") // no claude on PATH
	ws := filepath.Join(w.Workspaces, "task-remind")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "prompt.md"), []byte("remind me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("defaults:\n  harness: claude\ntasks:\n  remind:\n    runtime: persistent\n    workspace: %s\n    prompt_file: prompt.md\n    timeout: 30s\n", ws)
	if err := os.WriteFile(w.Home.ConfigPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	w.startDaemon()
	rec, r := runJSON(t, w, "run", "remind")
	if r.code == 0 || rec.Outcome != api.OutcomeFailed || rec.Reason != api.ReasonClaudeNotFound || rec.Message != claude.NotFoundMessage || rec.Agent != "remind" {
		t.Fatalf("persistent run without claude: %+v\n%s", rec, r)
	}
}
