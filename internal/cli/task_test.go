package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

const taskTestConfig = `# tasks of the CLI tests — this comment stays
defaults:
  harness: claude
tasks:
  morning:
    schedule: "0 7 * * 1-5"   # weekdays
    timezone: Europe/Berlin
    prompt_file: p.md
  nightly:
    schedule: "0 3 * * *"
    prompt_file: p.md
    timeout: 2h
    retries: 1
    enabled: false
`

// taskEnv is a test env whose LEO_HOME is a short path (for the socket)
// holding taskTestConfig and its prompt file.
func taskEnv(t *testing.T) (*testEnv, home.Home) {
	t.Helper()
	e := newTestEnv(t)
	root := testutil.ShortTempDir(t, "leo-task")
	for rel, content := range map[string]string{"leo.yaml": taskTestConfig, "workspace/p.md": "Do the thing.\n"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["LEO_HOME"] = root
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	return e, h
}

// fakeTaskDaemon answers the task routes of internal/api/task.go on a
// home's socket from what a test puts in it, and records every call.
type fakeTaskDaemon struct {
	mu      sync.Mutex
	calls   []string
	tasks   []api.Task
	history api.TaskHistory
	log     api.TaskLog
	// run answers POST /tasks/{name}/run (its id and task filled in).
	run    api.TaskRun
	runErr *api.Error
}

func (d *fakeTaskDaemon) called() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

func startTaskDaemon(t *testing.T, h home.Home) *fakeTaskDaemon {
	t.Helper()
	d := &fakeTaskDaemon{}
	reply := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		if e, ok := v.(*api.Error); ok {
			w.WriteHeader(api.HTTPStatus(e.Code))
		}
		json.NewEncoder(w).Encode(v)
	}
	find := func(name string) (api.Task, bool) {
		for _, t := range d.tasks {
			if t.Name == name {
				return t, true
			}
		}
		return api.Task{}, false
	}
	mux := http.NewServeMux()
	handle := func(pattern string, fn func(r *http.Request) any) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			d.mu.Lock()
			defer d.mu.Unlock()
			call := r.Method + " " + r.URL.RequestURI()
			if r.Method == http.MethodPost && r.ContentLength > 0 {
				var body map[string]any
				json.NewDecoder(r.Body).Decode(&body)
				call += fmt.Sprintf(" %v", body)
			}
			if r.URL.Path != "/health" {
				d.calls = append(d.calls, call)
			}
			reply(w, fn(r))
		})
	}
	handle("GET /health", func(*http.Request) any { return api.Health{Version: "test", PID: os.Getpid(), Ready: true} })
	handle("GET /tasks", func(*http.Request) any { return d.tasks })
	handle("GET /tasks/{name}/history", func(r *http.Request) any {
		if _, ok := find(r.PathValue("name")); !ok {
			return api.Errorf(api.CodeNotFound, "task %q not found", r.PathValue("name"))
		}
		return d.history
	})
	handle("GET /history", func(*http.Request) any { return d.history })
	handle("GET /tasks/{name}/logs", func(r *http.Request) any { return d.log })
	handle("POST /tasks/{name}/run", func(r *http.Request) any {
		if d.runErr != nil {
			return d.runErr
		}
		if _, ok := find(r.PathValue("name")); !ok {
			return api.Errorf(api.CodeNotFound, "task %q not found", r.PathValue("name"))
		}
		run := d.run
		run.Task = r.PathValue("name")
		if !strings.Contains(fmt.Sprint(d.calls[len(d.calls)-1]), "wait:true") {
			run = api.TaskRun{ID: run.ID, Task: run.Task, Trigger: api.TriggerManual, Start: run.Start, Outcome: api.OutcomeRunning}
		}
		return run
	})
	for verb, enabled := range map[string]bool{"enable": true, "disable": false} {
		handle("POST /tasks/{name}/"+verb, func(r *http.Request) any {
			for i := range d.tasks {
				if d.tasks[i].Name == r.PathValue("name") {
					d.tasks[i].Enabled = enabled
					return d.tasks[i]
				}
			}
			return api.Errorf(api.CodeNotFound, "task %q not found", r.PathValue("name"))
		})
	}
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return d
}

func TestTaskListShowsScheduleInWordsNextAndLastRun(t *testing.T) {
	e, h := taskEnv(t)
	d := startTaskDaemon(t, h)
	now := time.Now()
	next := now.Add(5*time.Hour + 30*time.Second)
	d.tasks = []api.Task{
		{Name: "morning", Runtime: "oneshot", Harness: "claude", Schedule: "0 7 * * 1-5", Timezone: "Europe/Berlin",
			Enabled: true, CatchUp: true, NextRun: &next,
			LastRun: &api.TaskRun{ID: "r1", Task: "morning", Start: now.Add(-3*time.Hour - time.Minute), Outcome: api.OutcomeSucceeded}},
		{Name: "nightly", Runtime: "oneshot", Harness: "codex", Schedule: "0 3 * * *", ScheduleWords: "nightly at three",
			Timezone: "Local", Enabled: false,
			LastRun: &api.TaskRun{ID: "r2", Task: "nightly", Start: now.Add(-50 * time.Hour), Outcome: api.OutcomeFailed, Reason: api.ReasonTimeout}},
		{Name: "inbox", Runtime: "persistent", Harness: "claude", Timezone: "Local", Enabled: true, Running: true, Agent: "assistant"},
	}

	r := e.run("task", "list")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("task list: %+v", r)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", r.stdout)
	}
	mustContain(t, "header", lines[0], "NAME", "RUNTIME", "HARNESS", "SCHEDULE", "TIMEZONE", "NEXT RUN", "LAST RUN")
	mustContain(t, "morning row", lines[1], "morning", "oneshot", "claude", "every weekday at 07:00", "Europe/Berlin", "(in 5h)", "succeeded 3h ago")
	mustContain(t, "nightly row", lines[2], "nightly", "codex", "nightly at three", "disabled", "failed (timeout) 2d ago")
	mustContain(t, "inbox row", lines[3], "inbox", "persistent", "manual only", "running now")

	r = e.run("task", "list", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("task list --json: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "task list --json", obj, "tasks", "live")
	var got taskListJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tasks) != 3 || got.Tasks[0].ScheduleWords != "every weekday at 07:00" || got.Tasks[1].ScheduleWords != "nightly at three" {
		t.Fatalf("tasks: %+v", got.Tasks)
	}

	d.tasks = nil
	r = e.run("task", "list", "--json")
	if obj := decodeOne(t, r.stdout); fmt.Sprint(obj["tasks"]) != "[]" {
		t.Fatalf(`no tasks: "tasks" = %v, want []`, obj["tasks"])
	}
	r = e.run("task", "list")
	mustContain(t, "empty list", r.stdout, "no tasks")
}

func TestTaskHistory(t *testing.T) {
	e, h := taskEnv(t)
	d := startTaskDaemon(t, h)
	d.tasks = []api.Task{{Name: "morning"}}
	start := time.Now().Add(-2 * time.Hour)
	exit := 1
	d.history = api.TaskHistory{
		Runs: []api.TaskRun{
			{ID: "20260101T060000.000Z", Task: "morning", Trigger: api.TriggerCatchUp, Start: start, End: start.Add(72 * time.Second), Outcome: api.OutcomeSucceeded},
			{ID: "20260101T070000.000Z", Task: "morning", Trigger: api.TriggerSchedule, Start: start.Add(time.Hour), End: start.Add(time.Hour + 3*time.Second),
				Outcome: api.OutcomeFailed, Reason: api.ReasonExitStatus, ExitCode: &exit, Attempt: 2,
				Message: "claude exited 1:\x1b[31m boom\x1b[0m\nsecond line"},
		},
		Dropped: []string{"state/history/morning.jsonl:3: a torn record"},
	}

	r := e.run("task", "history", "morning", "--limit", "5")
	if r.code != ExitOK {
		t.Fatalf("history: %+v", r)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and 2 rows:\n%s", r.stdout)
	}
	mustContain(t, "header", lines[0], "STARTED", "TASK", "RUN", "TRIGGER", "OUTCOME", "TOOK", "DETAIL")
	mustContain(t, "first run", lines[1], "(2h ago)", "20260101T060000.000Z", "catch_up", "succeeded", "1m12s")
	mustContain(t, "second run", lines[2], "(1h ago)", "schedule", "failed", "3s", "exit_status: claude exited 1:", "boom", "second line", "(attempt 2)")
	if strings.ContainsAny(r.stdout, "\x1b") {
		t.Errorf("control bytes from a message reached the table: %q", r.stdout)
	}
	mustContain(t, "stderr", r.stderr, "leo: warning: history: state/history/morning.jsonl:3: a torn record")

	r = e.run("task", "history", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("history --json: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "history --json", obj, "runs", "dropped", "live")

	d.history = api.TaskHistory{}
	r = e.run("task", "history", "morning", "--json")
	if obj := decodeOne(t, r.stdout); fmt.Sprint(obj["runs"]) != "[]" {
		t.Fatalf(`no runs: "runs" = %v, want []`, obj["runs"])
	}
	r = e.run("task", "history", "morning")
	mustContain(t, "empty history", r.stdout, "no runs yet of morning")

	assertJSONFailure(t, e.run("task", "history", "ghost", "--json"), "not_found", ExitError)
	assertJSONFailure(t, e.run("task", "history", "--limit", "0", "--json"), "invalid_args", ExitUsage)
	assertJSONFailure(t, e.run("task", "history", "Bad/Name", "--json"), "invalid_args", ExitUsage)
	assertJSONFailure(t, e.run("task", "history", "a", "b", "--json"), "invalid_args", ExitUsage)

	want := []string{
		"GET /tasks/morning/history?limit=5",
		"GET /history?limit=20",
		"GET /tasks/morning/history?limit=20",
		"GET /tasks/morning/history?limit=20",
		"GET /tasks/ghost/history?limit=20",
	}
	if got := d.called(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTaskLogs(t *testing.T) {
	e, h := taskEnv(t)
	d := startTaskDaemon(t, h)
	d.log = api.TaskLog{Task: "morning", Run: "20260101T070000.000Z", Text: "line one\nline two"}
	r := e.run("task", "logs", "morning", "--run", "20260101T070000.000Z")
	if r.code != ExitOK || r.stdout != "line one\nline two\n" {
		t.Fatalf("logs: %+v", r)
	}
	r = e.run("task", "logs", "morning", "--json")
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "logs --json", obj, "task", "run", "text", "live")
	want := []string{"GET /tasks/morning/logs?run=20260101T070000.000Z", "GET /tasks/morning/logs"}
	if got := d.called(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls: %q, want %q", got, want)
	}
	assertJSONFailure(t, e.run("task", "logs", "--json"), "invalid_args", ExitUsage)
}

func TestTaskEnableDisableThroughTheDaemon(t *testing.T) {
	e, h := taskEnv(t)
	d := startTaskDaemon(t, h)
	d.tasks = []api.Task{{Name: "morning", Enabled: true}}
	r := e.run("task", "disable", "morning")
	if r.code != ExitOK || r.stdout != "tasks.morning: disabled\n" || r.stderr != "" {
		t.Fatalf("disable: %+v", r)
	}
	r = e.run("task", "enable", "morning", "--json")
	if obj := decodeOne(t, r.stdout); obj["name"] != "morning" || obj["enabled"] != true {
		t.Fatalf("enable --json: %s", r.stdout)
	}
	assertJSONFailure(t, e.run("task", "enable", "ghost", "--json"), "not_found", ExitError)
	want := []string{"POST /tasks/morning/disable", "POST /tasks/morning/enable", "POST /tasks/ghost/enable"}
	if got := d.called(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls: %q, want %q", got, want)
	}
	// The daemon made the edit: the CLI left the file alone.
	if data, _ := os.ReadFile(h.ConfigPath); string(data) != taskTestConfig {
		t.Errorf("the CLI edited leo.yaml although a daemon runs:\n%s", data)
	}
}

func TestTaskEnableDisableWithoutADaemonEditsTheFile(t *testing.T) {
	e, h := taskEnv(t)
	r := e.run("task", "disable", "morning")
	if r.code != ExitOK || r.stdout != "tasks.morning: disabled\n" {
		t.Fatalf("disable: %+v", r)
	}
	if strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("want one line on stderr, got %q", r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "no leo daemon runs", "edited "+h.ConfigPath+" directly")
	want := strings.Replace(taskTestConfig, "  morning:\n", "  morning:\n    enabled: false\n", 1)
	if data, _ := os.ReadFile(h.ConfigPath); string(data) != want {
		t.Fatalf("leo.yaml after disable:\n%s\nwant:\n%s", data, want)
	}

	r = e.run("task", "enable", "nightly", "--json")
	if r.code != ExitOK {
		t.Fatalf("enable --json: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	if obj["name"] != "nightly" || obj["enabled"] != true || obj["schedule_words"] != "every day at 03:00" || obj["harness"] != "claude" || obj["harness_inherited"] != true {
		t.Fatalf("enable --json: %s", r.stdout)
	}
	want = strings.Replace(want, "    retries: 1\n    enabled: false\n", "    retries: 1\n    enabled: true\n", 1)
	if data, _ := os.ReadFile(h.ConfigPath); string(data) != want {
		t.Fatalf("leo.yaml after enable:\n%s\nwant:\n%s", data, want)
	}

	obj = assertJSONFailure(t, e.run("task", "disable", "ghost", "--json"), "not_found", ExitError)
	mustContain(t, "message", obj["message"].(string), `task "ghost" not found`, "morning, nightly")
	if data, _ := os.ReadFile(h.ConfigPath); string(data) != want {
		t.Fatal("a failed edit changed leo.yaml")
	}
}

// A daemon that holds the lock but does not answer is not "no daemon":
// the CLI must not edit behind its back (or run a task twice).
func TestTaskCommandsDoNotActAloneWhileADaemonHoldsTheLock(t *testing.T) {
	e, h := taskEnv(t)
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	called := false
	for _, argv := range [][]string{{"task", "disable", "morning", "--json"}, {"run", "morning", "--json"}} {
		r := e.runWith(func(f *Factory) {
			f.RunTaskLocally = func(context.Context, *config.Config, home.Home, string) (api.TaskRun, error) {
				called = true
				return api.TaskRun{}, nil
			}
		}, argv...)
		obj := assertJSONFailure(t, r, "daemon_down", ExitDaemonDown)
		mustContain(t, "message", obj["message"].(string), "holds the lock but does not answer")
	}
	if called {
		t.Error("the task ran in the CLI while a daemon holds the lock")
	}
	if data, _ := os.ReadFile(h.ConfigPath); string(data) != taskTestConfig {
		t.Error("leo.yaml changed while a daemon holds the lock")
	}
}

func TestRunThroughTheDaemon(t *testing.T) {
	e, h := taskEnv(t)
	d := startTaskDaemon(t, h)
	d.tasks = []api.Task{{Name: "morning"}}
	start := time.Now().Add(-time.Minute)
	exit0, cost := 0, 0.0123
	d.run = api.TaskRun{ID: "20260101T070000.000Z", Trigger: api.TriggerManual, Start: start, End: start.Add(42 * time.Second),
		Outcome: api.OutcomeSucceeded, ExitCode: &exit0, Attempt: 1, Harness: "claude", SessionID: "sess-1",
		Reply: "All done.\nFive bullets.", Usage: &api.Usage{InputTokens: 1200, OutputTokens: 340}, CostUSD: &cost}

	r := e.run("run", "morning")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("run: %+v", r)
	}
	mustContain(t, "run output", r.stdout, "tasks.morning run 20260101T070000.000Z: succeeded in 42s",
		"claude (attempt 1)", "sess-1", "1.2k in, 340 out, $0.0123", "| All done.", "| Five bullets.",
		"leo task logs morning --run 20260101T070000.000Z")

	r = e.run("run", "morning", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("run --json: %+v", r)
	}
	if obj := decodeOne(t, r.stdout); obj["outcome"] != "succeeded" || obj["id"] != "20260101T070000.000Z" {
		t.Fatalf("run --json: %s", r.stdout)
	}

	r = e.run("run", "morning", "--detach")
	if r.code != ExitOK {
		t.Fatalf("run --detach: %+v", r)
	}
	mustContain(t, "detach", r.stdout, "started tasks.morning run 20260101T070000.000Z", "leo task logs morning --run 20260101T070000.000Z")
	r = e.run("run", "morning", "--detach", "--json")
	if obj := decodeOne(t, r.stdout); obj["outcome"] != "running" {
		t.Fatalf("run --detach --json: %s", r.stdout)
	}

	// A run that did not succeed: its record is shown, the exit is 1.
	d.run.Outcome, d.run.Reason, d.run.Message = api.OutcomeTimeout, api.ReasonTimeout, "no answer within 30m"
	r = e.run("run", "morning")
	if r.code != ExitError {
		t.Fatalf("failed run exit %d: %+v", r.code, r)
	}
	mustContain(t, "stdout", r.stdout, "tasks.morning run 20260101T070000.000Z: timeout", "timeout: no answer within 30m")
	mustContain(t, "stderr", r.stderr, "leo: tasks.morning run 20260101T070000.000Z timed out (timeout): no answer within 30m")
	obj := assertJSONFailure(t, e.run("run", "morning", "--json"), "run_failed", ExitError)
	assertKeys(t, "run_failed", obj, "error", "message", "run")
	if run := obj["run"].(map[string]any); run["outcome"] != "timeout" || run["reason"] != "timeout" {
		t.Fatalf("run_failed run: %v", run)
	}

	d.runErr = api.Errorf(api.CodeTaskRunning, "a run of task morning is going (started 1m ago)")
	obj = assertJSONFailure(t, e.run("run", "morning", "--json"), "task_running", ExitError)
	mustContain(t, "message", obj["message"].(string), "is going")
	d.runErr = nil
	assertJSONFailure(t, e.run("run", "ghost", "--json"), "not_found", ExitError)

	want := []string{
		"POST /tasks/morning/run map[wait:true]",
		"POST /tasks/morning/run map[wait:true]",
		"POST /tasks/morning/run map[]",
		"POST /tasks/morning/run map[]",
		"POST /tasks/morning/run map[wait:true]",
		"POST /tasks/morning/run map[wait:true]",
		"POST /tasks/morning/run map[wait:true]",
		"POST /tasks/ghost/run map[wait:true]",
	}
	if got := d.called(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRunWithoutADaemonRunsInTheForeground(t *testing.T) {
	e, h := taskEnv(t)
	var gotTask string
	var gotHome home.Home
	var gotCfg *config.Config
	outcome := api.OutcomeSucceeded
	local := func(f *Factory) {
		f.RunTaskLocally = func(_ context.Context, cfg *config.Config, h home.Home, task string) (api.TaskRun, error) {
			gotTask, gotHome, gotCfg = task, h, cfg
			return api.TaskRun{ID: "20260101T070000.000Z", Task: task, Trigger: api.TriggerManual, Outcome: outcome, Reason: "", Harness: "claude"}, nil
		}
	}
	r := e.runWith(local, "run", "nightly")
	if r.code != ExitOK {
		t.Fatalf("run: %+v", r)
	}
	if gotTask != "nightly" || gotHome.Root != h.Root || gotCfg == nil || gotCfg.Tasks["nightly"] == nil {
		t.Fatalf("seam got task %q home %q cfg %v", gotTask, gotHome.Root, gotCfg)
	}
	mustContain(t, "stderr", r.stderr, "no leo daemon runs for this home; running tasks.nightly here in the foreground")
	mustContain(t, "stdout", r.stdout, "tasks.nightly run 20260101T070000.000Z: succeeded")

	r = e.runWith(local, "run", "nightly", "--json")
	if r.code != ExitOK {
		t.Fatalf("run --json: %+v", r)
	}
	decodeOne(t, r.stdout) // stderr has the note, stdout only the JSON

	outcome = api.OutcomeFailed
	assertJSONFailure(t, e.runWith(local, "run", "nightly", "--json"), "run_failed", ExitError)

	obj := assertJSONFailure(t, e.runWith(local, "run", "ghost", "--json"), "not_found", ExitError)
	mustContain(t, "message", obj["message"].(string), `task "ghost" not found`, "morning, nightly")
	obj = assertJSONFailure(t, e.runWith(local, "run", "nightly", "--detach", "--json"), "daemon_down", ExitDaemonDown)
	mustContain(t, "message", obj["message"].(string), "--detach needs the leo daemon")

	// A build without the seam says so instead of pretending.
	obj = assertJSONFailure(t, e.runWith(func(f *Factory) { f.RunTaskLocally = nil }, "run", "nightly", "--json"), "unsupported", ExitError)
	mustContain(t, "message", obj["message"].(string), "no leo daemon runs", "leo service")

	assertJSONFailure(t, e.run("run", "nightly", "--dry-run", "--detach", "--json"), "invalid_args", ExitUsage)
	assertJSONFailure(t, e.run("run", "Bad..Name", "--json"), "invalid_args", ExitUsage)
}

// leo run waits as long as the task may run: every attempt's timeout, with
// slack, not a fixed bound shorter than the task's timeout.
func TestRunWaitCoversEveryAttempt(t *testing.T) {
	e, h := taskEnv(t)
	if got, want := runWait(h, e.getenv, "nightly"), 2*(2*time.Hour+runWaitSlack)+runWaitMargin; got != want {
		t.Errorf("nightly (2h, 1 retry): %v, want %v", got, want)
	}
	if got, want := runWait(h, e.getenv, "morning"), 30*time.Minute+runWaitSlack+runWaitMargin; got != want {
		t.Errorf("morning (default 30m): %v, want %v", got, want)
	}
}

// A limited run shows its outcome and when its limit resets, in the table
// and in the JSON (resets_at).
func TestTaskHistoryShowsALimitedRun(t *testing.T) {
	e, h := taskEnv(t)
	d := startTaskDaemon(t, h)
	d.tasks = []api.Task{{Name: "morning"}}
	start := time.Now().Add(-time.Hour)
	reset := time.Date(2031, 5, 6, 7, 0, 0, 0, time.UTC)
	d.history = api.TaskHistory{Runs: []api.TaskRun{{ID: "20260101T070000.000Z", Task: "morning", Trigger: api.TriggerSchedule,
		Start: start, End: start.Add(time.Second), Outcome: api.OutcomeLimited, Reason: api.ReasonUsageLimit, ResetsAt: &reset,
		Message: "You’ve hit your usage limit."}}}
	r := e.run("task", "history", "morning")
	mustContain(t, "limited run", r.stdout, "limited", "resets 2031-05-06T07:00:00Z; usage_limit: You’ve hit your usage limit.")
	r = e.run("task", "history", "morning", "--json")
	mustContain(t, "limited run --json", r.stdout, `"outcome":"limited"`, `"reason":"usage_limit"`, `"resets_at":"2031-05-06T07:00:00Z"`)
}
