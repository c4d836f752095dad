package task

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/statefile"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// serviceRig is a task service on a fake clock whose one-shot runs are
// recorded and, per task, held until released.
type serviceRig struct {
	t    *testing.T
	dir  string
	clk  *testClock
	cfg  *config.Config
	hist *History
	svc  *Service

	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	jobs  []Job
	hold  map[string]chan struct{}
	reply map[string]Record // what a task's runs answer
	// during, when set, runs inside each one-shot run (before its reply).
	during func(ctx context.Context, j Job)
	// events is what the service published.
	events eventLog
}

// eventLog is an events.Publisher that keeps what it is given.
type eventLog struct {
	mu   sync.Mutex
	list []api.Event
}

func (l *eventLog) Publish(e api.Event) api.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, e)
	return e
}

func (l *eventLog) of(task string) []api.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []api.Event
	for _, e := range l.list {
		if e.Task == task {
			out = append(out, e)
		}
	}
	return out
}

func writeConfig(t *testing.T, dir, yaml string) *config.Config {
	t.Helper()
	path := filepath.Join(dir, "leo.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(yaml), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newServiceRig(t *testing.T, start time.Time, yaml string, persistent func(r *serviceRig) *Persistent) *serviceRig {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p.md", "q.md"} {
		if err := os.WriteFile(filepath.Join(dir, "workspace", p), []byte("do the thing\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := OpenHistory(filepath.Join(dir, "history"), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &serviceRig{t: t, dir: dir, clk: newTestClock(start), hist: hist, hold: map[string]chan struct{}{}, reply: map[string]Record{}}
	r.cfg = writeConfig(t, dir, yaml)
	opts := ServiceOptions{
		Clock:         r.clk,
		Config:        func() *config.Config { r.mu.Lock(); defer r.mu.Unlock(); return r.cfg },
		History:       hist,
		MaxConcurrent: func() int { return 1 },
		Events:        &r.events,
		Oneshot: func(ctx context.Context, j Job) Record {
			r.mu.Lock()
			r.jobs = append(r.jobs, j)
			h := r.hold[j.Task]
			out := r.reply[j.Task]
			during := r.during
			r.mu.Unlock()
			if during != nil {
				during(ctx, j)
			}
			if h != nil {
				select {
				case <-h:
				case <-ctx.Done():
				}
			}
			if out.Outcome == "" {
				out.Outcome = OutcomeSucceeded
			}
			out.Attempt = 1
			return out
		},
	}
	if persistent != nil {
		opts.Persistent = persistent(r)
	}
	r.svc = NewService(opts)
	return r
}

func (r *serviceRig) run() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	n := r.clk.armed()
	go func() { r.svc.Run(ctx); close(r.done) }()
	r.clk.waitArmed(r.t, n)
	r.t.Cleanup(r.stop)
}

func (r *serviceRig) stop() {
	r.mu.Lock()
	for k, h := range r.hold {
		close(h)
		delete(r.hold, k)
	}
	r.mu.Unlock()
	if r.cancel == nil {
		return
	}
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatal("the service did not stop")
	}
	r.cancel = nil
}

func (r *serviceRig) holdTask(task string) func() {
	ch := make(chan struct{})
	r.mu.Lock()
	r.hold[task] = ch
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.hold[task] == ch {
			close(ch)
			delete(r.hold, task)
		}
	}
}

func (r *serviceRig) jobTasks() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []string
	for _, j := range r.jobs {
		s = append(s, j.Task)
	}
	return strings.Join(s, ",")
}

func (r *serviceRig) history(task string) []Record {
	recs, _, err := r.hist.Read(task, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return recs
}

func (r *serviceRig) waitHistory(task string, n int) []Record {
	r.t.Helper()
	testutil.WaitForEvery(r.t, 10*time.Second, time.Millisecond, func() bool { return len(r.history(task)) >= n },
		fmt.Sprintf("%d history records of %s", n, task))
	return r.history(task)
}

const twoTasks = `
tasks:
  a:
    schedule: "0 7 * * *"
    timezone: Europe/Berlin
    prompt_file: p.md
  b:
    schedule: "5 7 * * *"
    timezone: Europe/Berlin
    prompt_file: q.md
`

var berlin = func() *time.Location {
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return l
}()

func TestServiceFiresAndRecords(t *testing.T) {
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 58, 0, 0, berlin), twoTasks, nil)
	r.run()
	r.clk.advance(t, 3*time.Minute)
	recs := r.waitHistory("a", 1)
	rec := recs[0]
	if rec.Trigger != TriggerSchedule || rec.Outcome != OutcomeSucceeded || !rec.Due.Equal(time.Date(2026, 3, 2, 7, 0, 0, 0, berlin)) {
		t.Fatalf("record %+v", rec)
	}
	if rec.ID != RunID(rec.Start) || rec.Harness == "" {
		t.Fatalf("run id %q for start %v, harness %q", rec.ID, rec.Start, rec.Harness)
	}
	r.mu.Lock()
	j := r.jobs[0]
	r.mu.Unlock()
	if j.Prompt != "do the thing\n" || j.Scope == nil || j.Scope.Name != "a" {
		t.Fatalf("job %+v", j)
	}
	if got := r.svc.List(); len(got) != 2 || got[0].NextRun == nil || !got[0].NextRun.Equal(time.Date(2026, 3, 3, 7, 0, 0, 0, berlin)) || got[0].LastRun == nil {
		t.Fatalf("list %+v", got)
	}
}

// Each run is on the event stream: task.run.started with its trigger when
// it begins, task.run.ended with its outcome when it is recorded; a
// skipped firing only ends.
func TestServicePublishesRunsStartedAndEnded(t *testing.T) {
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 58, 0, 0, berlin), twoTasks, nil)
	release := r.holdTask("a")
	r.reply["a"] = Record{Outcome: OutcomeFailed, Reason: ReasonExitStatus, Message: "exit status 3\nmore words"}
	r.run()
	r.clk.advance(t, 3*time.Minute)
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(r.events.of("a")) == 1 }, "task.run.started of a")
	started := r.events.of("a")[0]
	if started.Type != api.EventTaskRunStarted || started.Reason != string(TriggerSchedule) || started.Run == "" || started.Agent != "" {
		t.Fatalf("while a runs: %+v, want task.run.started by schedule", started)
	}
	// A manual run of a while it runs is refused; nothing is published.
	if _, _, err := r.svc.Start(context.Background(), "a"); !api.HasCode(err, api.CodeTaskRunning) {
		t.Fatalf("second run: %v", err)
	}
	release()
	rec := r.waitHistory("a", 1)[0]
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(r.events.of("a")) >= 2 }, "task.run.ended of a")
	got := r.events.of("a")
	if len(got) != 2 {
		t.Fatalf("events of a: %+v, want started and ended", got)
	}
	if e := got[1]; e.Type != api.EventTaskRunEnded || e.Run != started.Run || e.Run != rec.ID || e.State != string(OutcomeFailed) || e.Reason != "exit status 3" {
		t.Fatalf("ended: %+v, want task.run.ended of run %s, failed, the message's first line", e, rec.ID)
	}

	// Manual, then skipped: a still-running firing has no start.
	r.svc.skipped(Firing{Task: "b", Trigger: TriggerSchedule}, ReasonStillRunning)
	if got := r.events.of("b"); len(got) != 1 || got[0].Type != api.EventTaskRunEnded || got[0].State != string(OutcomeSkipped) {
		t.Fatalf("skipped b: %+v, want task.run.ended skipped only", got)
	}
	_, done, err := r.svc.Start(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	<-done
	got = r.events.of("b")
	if len(got) != 3 || got[1].Type != api.EventTaskRunStarted || got[1].Reason != string(TriggerManual) || got[2].Type != api.EventTaskRunEnded || got[2].State != string(OutcomeSucceeded) {
		t.Fatalf("manual b: %+v", got)
	}
}

// Runs beyond the daemon-wide cap wait, and get their slot in due order.
func TestServiceCapQueuesInDueOrder(t *testing.T) {
	yaml := `
tasks:
  first:
    schedule: "0 7 * * *"
    prompt_file: p.md
  later:
    schedule: "2 7 * * *"
    prompt_file: p.md
  earlier:
    schedule: "1 7 * * *"
    prompt_file: p.md
`
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 59, 0, 0, time.Local), yaml, nil)
	release := r.holdTask("first")
	r.run()
	r.clk.advance(t, 4*time.Minute)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.svc.sched.Running("later") && r.svc.sched.Running("earlier") }, "both to wait for a slot")
	if got := r.jobTasks(); got != "first" {
		t.Fatalf("with a cap of 1, ran %q while first holds the slot", got)
	}
	release()
	r.waitHistory("later", 1)
	r.waitHistory("earlier", 1)
	if got := r.jobTasks(); got != "first,earlier,later" {
		t.Fatalf("runs in order %q, want first,earlier,later (due order)", got)
	}
}

// A manual run shares the no-overlap rule with scheduled firings; it runs
// disabled tasks too.
func TestServiceManualRun(t *testing.T) {
	yaml := `
tasks:
  off:
    enabled: false
    schedule: "0 7 * * *"
    prompt_file: p.md
`
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 59, 0, 0, time.Local), yaml, nil)
	release := r.holdTask("off")
	r.run()
	r.clk.advance(t, 2*time.Minute)
	if got := r.jobTasks(); got != "" {
		t.Fatalf("a disabled task fired: %q", got)
	}
	rec, done, err := r.svc.Start(context.Background(), "off")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Outcome != api.OutcomeRunning || rec.Trigger != TriggerManual || rec.ID == "" {
		t.Fatalf("started %+v", rec)
	}
	if _, _, err := r.svc.Start(context.Background(), "off"); !api.HasCode(err, api.CodeTaskRunning) {
		t.Fatalf("a second run while one runs: %v, want task_running", err)
	}
	if v, _ := r.svc.Get("off"); !v.Running || v.NextRun != nil {
		t.Fatalf("view while running %+v", v)
	}
	if h, err := r.svc.TaskHistory("off", 0); err != nil || len(h.Runs) != 1 || h.Runs[0].ID != rec.ID || h.Runs[0].Outcome != api.OutcomeRunning {
		t.Fatalf("history while running: %+v %v", h, err)
	}
	release()
	<-done
	got, ok := r.svc.Result("off", rec.ID)
	if !ok || got.Outcome != OutcomeSucceeded || got.Trigger != TriggerManual {
		t.Fatalf("result %+v %v", got, ok)
	}
	if _, _, err := r.svc.Start(context.Background(), "nope"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

// A firing due while the task still runs is skipped and recorded.
func TestServiceSkipsStillRunning(t *testing.T) {
	yaml := `
tasks:
  often:
    schedule: "* * * * *"
    prompt_file: p.md
`
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 59, 30, 0, time.Local), yaml, nil)
	release := r.holdTask("often")
	r.run()
	r.clk.advance(t, time.Minute)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.jobTasks() == "often" }, "the first run")
	r.clk.advance(t, time.Minute)
	recs := r.waitHistory("often", 1)
	if recs[0].Outcome != OutcomeSkipped || recs[0].Reason != ReasonStillRunning || !strings.Contains(recs[0].Message, "still running") {
		t.Fatalf("skip record %+v", recs[0])
	}
	release()
	r.waitHistory("often", 2)
}

// The next run of a task continues the conversation its last run of the
// same harness recorded, across a restart of the service.
func TestServiceResumesSession(t *testing.T) {
	yaml := `
tasks:
  conv:
    prompt_file: p.md
`
	r := newServiceRig(t, time.Date(2026, 3, 2, 7, 0, 0, 0, time.Local), yaml, nil)
	r.reply["conv"] = Record{SessionID: "sess-1"}
	r.run()
	for range 2 {
		_, done, err := r.svc.Start(context.Background(), "conv")
		if err != nil {
			t.Fatal(err)
		}
		<-done
	}
	r.mu.Lock()
	first, second := r.jobs[0].SessionID, r.jobs[1].SessionID
	r.mu.Unlock()
	if first != "" || second != "sess-1" {
		t.Fatalf("sessions %q then %q; want fresh then sess-1", first, second)
	}
	// A new service reads it from history.
	again := NewService(ServiceOptions{Clock: r.clk, Config: func() *config.Config { return r.cfg }, History: r.hist})
	if got := again.sessionFor("conv", r.history("conv")[0].Harness); got != "sess-1" {
		t.Fatalf("after restart: %q", got)
	}
	if got := again.sessionFor("conv", "some-other-harness"); got != "" {
		t.Fatalf("another harness resumed %q", got)
	}
}

// A task whose slot passed while the daemon was down runs once, as a
// catch-up, when the service starts.
func TestServiceCatchUpFromHistory(t *testing.T) {
	yaml := `
tasks:
  daily:
    schedule: "0 7 * * *"
    prompt_file: p.md
`
	start := time.Date(2026, 3, 5, 12, 0, 0, 0, time.Local)
	r := newServiceRig(t, start, yaml, nil)
	last := time.Date(2026, 3, 2, 7, 0, 0, 0, time.Local)
	if err := r.hist.Append(Record{ID: RunID(last), Task: "daily", Trigger: TriggerSchedule, Due: last, Start: last, End: last, Outcome: OutcomeSucceeded}); err != nil {
		t.Fatal(err)
	}
	r.run()
	recs := r.waitHistory("daily", 2)
	if got := recs[1]; got.Trigger != TriggerCatchUp || !got.Due.Equal(time.Date(2026, 3, 5, 7, 0, 0, 0, time.Local)) {
		t.Fatalf("catch-up record %+v", got)
	}
	r.stop()
	if got := r.jobTasks(); got != "daily" {
		t.Fatalf("runs %q: want exactly one catch-up", got)
	}
}

// A reload that adds a task plans it; one that disables a task stops it.
func TestServiceReload(t *testing.T) {
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 50, 0, 0, berlin), twoTasks, nil)
	r.run()
	r.mu.Lock()
	r.cfg = writeConfig(t, r.dir, twoTasks+`    enabled: false
  c:
    schedule: "1 7 * * *"
    timezone: Europe/Berlin
    prompt_file: p.md
`)
	r.mu.Unlock()
	n := r.clk.armed()
	r.svc.ConfigChanged()
	r.clk.waitArmed(t, n)
	r.clk.advance(t, 20*time.Minute)
	r.waitHistory("c", 1)
	r.waitHistory("a", 1)
	r.stop()
	// a (07:00) and c (07:01) are both due after the advance and may run
	// side by side: which started first is not what this test is about.
	runs := strings.Split(r.jobTasks(), ",")
	slices.Sort(runs)
	if got := strings.Join(runs, ","); got != "a,c" {
		t.Fatalf("runs %q, want a and c (b disabled by the reload)", got)
	}
}

func TestSlotsGrantInDueOrder(t *testing.T) {
	s := &slots{max: func() int { return 1 }}
	ctx := context.Background()
	if err := s.acquire(ctx, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 3)
	var wg sync.WaitGroup
	for i, due := range []int64{30, 10, 20} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.acquire(ctx, time.Unix(due, 0)); err != nil {
				t.Error(err)
				return
			}
			order <- int(due)
			s.release()
		}()
		testutil.WaitFor(t, 5*time.Second, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.waiting) == i+1 }, "the waiter")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.acquire(cctx, time.Unix(1, 0)); err == nil {
		t.Fatal("a cancelled wait got a slot")
	}
	s.release()
	wg.Wait()
	close(order)
	var got []int
	for d := range order {
		got = append(got, d)
	}
	if fmt.Sprint(got) != "[10 20 30]" {
		t.Fatalf("granted in order %v", got)
	}
}

// A run whose record cannot be written still answers its waiter, saying
// that it is not in history.
func TestServiceRunNotRecordedSaysSo(t *testing.T) {
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 0, 0, 0, berlin), twoTasks, nil)
	// The task's history file cannot be opened for appending.
	if err := os.MkdirAll(filepath.Join(r.dir, "history", "a.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	r.run()
	rec, done := mustStart(t, r.svc, "a")
	<-done
	got, ok := r.svc.Result("a", rec.ID)
	if !ok || got.Outcome != OutcomeSucceeded {
		t.Fatalf("result %+v %v", got, ok)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "not in the task's history") || !strings.Contains(got.Warnings[0], "a.jsonl") {
		t.Fatalf("warnings %q: want one saying the run is not in history, and why", got.Warnings)
	}
}

// A daemon killed mid-run (SIGKILL) leaves the run in its state file; the
// next one records it once, interrupted, before planning (the slot it
// served does not fire again), and kills the process group it left.
func TestServiceRecordsRunsAKilledDaemonLeft(t *testing.T) {
	start := time.Date(2026, 3, 2, 7, 1, 0, 0, berlin)
	r := newServiceRig(t, start, twoTasks, nil)
	yesterday := time.Date(2026, 3, 1, 7, 0, 0, 0, berlin)
	if err := r.hist.Append(Record{ID: RunID(yesterday), Task: "a", Trigger: TriggerSchedule, Due: yesterday, Start: yesterday, End: yesterday, Outcome: OutcomeSucceeded}); err != nil {
		t.Fatal(err)
	}
	// The harness the killed daemon started: a group of its own.
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited })
	due := time.Date(2026, 3, 2, 7, 0, 0, 0, berlin)
	left := Record{ID: RunID(due), Task: "a", Trigger: TriggerSchedule, Due: due, Start: due, Outcome: api.OutcomeRunning, Harness: "claude"}
	path := filepath.Join(r.dir, "task-running.json")
	killed := &inflight{path: path}
	if err := killed.save(func(m map[string]inflightRun) {
		m[left.ID] = inflightRun{Rec: left, PGID: cmd.Process.Pid, PGIDStart: proc.Start(cmd.Process.Pid)}
	}); err != nil {
		t.Fatal(err)
	}

	r.svc.opts.RunningPath = path
	r.svc.inflight = &inflight{path: path}
	r.run()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the process group the killed daemon left is still running")
	}
	recs := r.waitHistory("a", 2)
	if got := recs[1]; got.ID != left.ID || got.Outcome != OutcomeFailed || got.Reason != ReasonInterrupted || !got.Due.Equal(due) {
		t.Fatalf("record of the run the killed daemon left: %+v", got)
	}
	r.stop()
	if got := r.jobTasks(); got != "" {
		t.Fatalf("runs %q: the slot the interrupted run served fired again", got)
	}
	if n := len(r.history("a")); n != 2 {
		t.Fatalf("%d records, want the old one and the interrupted run once", n)
	}
	var f inflightFile
	if _, err := statefile.ReadJSON(path, &f); err != nil || len(f.Runs) != 0 {
		t.Fatalf("state after recovery: %+v (%v)", f, err)
	}
}

// A run in progress is in the state file, and leaves it once recorded.
func TestServiceKeepsRunsInProgressInState(t *testing.T) {
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 0, 0, 0, berlin), twoTasks, nil)
	path := filepath.Join(r.dir, "task-running.json")
	r.svc.opts.RunningPath = path
	r.svc.inflight = &inflight{path: path}
	release := r.holdTask("a")
	r.run()
	rec, done := mustStart(t, r.svc, "a")
	read := func() []inflightRun {
		var f inflightFile
		if _, err := statefile.ReadJSON(path, &f); err != nil {
			t.Fatal(err)
		}
		return f.Runs
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { runs := read(); return len(runs) == 1 && runs[0].Rec.ID == rec.ID }, "the run in state")
	release()
	<-done
	if runs := read(); len(runs) != 0 {
		t.Fatalf("a recorded run is still in state: %+v", runs)
	}
}

// A task naming no harness runs defaults.harness and says so (the UI dims
// its badge); one naming its own does not.
func TestViewSaysWhetherTheHarnessIsInherited(t *testing.T) {
	yaml := "defaults:\n  harness: codex\n" + strings.Replace(twoTasks, "    prompt_file: q.md\n", "    prompt_file: q.md\n    harness: claude\n", 1)
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 58, 0, 0, berlin), yaml, nil)
	a, err := r.svc.Get("a")
	if err != nil || a.Harness != "codex" || !a.HarnessInherited {
		t.Fatalf("a: %+v %v; want codex, inherited", a, err)
	}
	b, err := r.svc.Get("b")
	if err != nil || b.Harness != "claude" || b.HarnessInherited {
		t.Fatalf("b: %+v %v; want claude, its own", b, err)
	}
}

// A run's MCP bridge speaks for its task: the server signs what the run
// sends as "task <name>", and the shared bridge itself is not changed.
func TestServiceRunBridgeNamesItsTask(t *testing.T) {
	yaml := `
tasks:
  nightly:
    schedule: "0 7 * * *"
    prompt_file: p.md
`
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 59, 0, 0, time.Local), yaml, nil)
	shared := &harness.MCPBridge{Command: "/bin/leo", Args: []string{"mcp-server"}, Env: map[string]string{"LEO_HOME": "/h"}}
	r.svc.opts.Bridge = func(*config.Config) *harness.MCPBridge { return shared }
	r.run()
	_, done, err := r.svc.Start(context.Background(), "nightly")
	if err != nil {
		t.Fatal(err)
	}
	<-done
	r.mu.Lock()
	jobs := append([]Job(nil), r.jobs...)
	r.mu.Unlock()
	if len(jobs) != 1 || jobs[0].Bridge == nil {
		t.Fatalf("jobs %+v, want one with a bridge", jobs)
	}
	if env := jobs[0].Bridge.Env; env["LEO_TASK"] != "nightly" || env["LEO_HOME"] != "/h" || len(env) != 3 || env["LEO_AGENT"] != "" {
		t.Errorf("run bridge env %v, want LEO_TASK=nightly with LEO_HOME kept and no LEO_AGENT", env)
	}
	if _, set := shared.Env["LEO_TASK"]; set {
		t.Error("the shared bridge was written into")
	}
}

// A prompt file that became invalid UTF-8 after validation fails the run
// with config_error naming the byte; the harness never gets it changed
// (issue 15).
func TestServicePromptNotUTF8FailsTheRun(t *testing.T) {
	r := newServiceRig(t, time.Date(2026, 3, 2, 6, 58, 0, 0, berlin), twoTasks, nil)
	if err := os.WriteFile(filepath.Join(r.dir, "workspace", "p.md"), []byte("caf\xe9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.run()
	r.clk.advance(t, 3*time.Minute)
	rec := r.waitHistory("a", 1)[0]
	if rec.Outcome != OutcomeFailed || rec.Reason != ReasonConfigError || !strings.Contains(rec.Message, "tasks.a.prompt_file") || !strings.Contains(rec.Message, "invalid UTF-8 byte 0xe9") {
		t.Fatalf("record %+v", rec)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.jobs) != 0 {
		t.Fatalf("the harness was given %q", r.jobs[0].Prompt)
	}
}
