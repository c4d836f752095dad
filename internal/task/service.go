package task

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/names"
	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

// ServiceOptions are what the task service runs on. The daemon fills them;
// tests pass fakes.
type ServiceOptions struct {
	Clock  clock.Clock
	Config func() *config.Config
	// History is where every run is recorded.
	History *History
	// Oneshot runs one headless job (Runner.Run).
	Oneshot func(ctx context.Context, j Job) Record
	// Persistent delivers firings of persistent tasks into agents; nil
	// fails them (a daemon without agents).
	Persistent *Persistent
	// Bridge is the MCP bridge a headless run gets (nil: none).
	Bridge func(cfg *config.Config) *harness.MCPBridge
	// ReadLog reads a run's log (ReadLog of the runner's log directory).
	ReadLog func(task, runID string) (api.TaskLog, error)
	// RunningPath is the state file of the headless runs going (the
	// daemon's; "" keeps none): runs a killed daemon left are recorded
	// interrupted by the next, and their process groups killed.
	RunningPath string
	// MaxConcurrent is the daemon-wide cap on headless runs at once.
	MaxConcurrent func() int
	Log           *slog.Logger
	// Events receives task.run.started and task.run.ended (nil: nobody
	// listens).
	Events events.Publisher
	// Home is the leo home's root: worktrees of tasks with worktree: true
	// are made under <Home>/worktrees unless worktrees.root says
	// otherwise, and marked as this home's.
	Home string
	// Git runs git for them (zero: git on PATH).
	Git worktree.Git
}

// Service is the daemon's task scheduler: it plans every enabled task's
// firings, runs one-shot tasks headless (at most MaxConcurrent at once,
// the rest waiting in due order), hands persistent firings to their
// agents, and records every run, skipped ones included, in History.
type Service struct {
	opts     ServiceOptions
	sched    *Scheduler
	slots    *slots
	inflight *inflight

	replan chan struct{}
	// runCtx is Run's context: runs started by hand end with the daemon
	// too, and Run waits for them (manual).
	runCtx context.Context
	manual sync.WaitGroup

	mu       sync.Mutex
	live     map[string]*liveRun // the run each running task has going
	sessions map[string]session  // the conversation each task's next run resumes
	last     map[string]Record   // each task's newest record, once read
	// holds: until when each limited harness starts no headless run (in
	// memory only: a restarted daemon forgets them, docs/tasks.md).
	holds map[string]time.Time
	// resuming is the pending persistent firing each task has, taken up
	// after a restart: it holds the task's claim and its slot counts as run.
	resuming map[string]Record
}

// session is a conversation a task's runs continue, per harness: ids of
// one harness mean nothing to another.
type session struct {
	harness, id string
}

// liveRun is a run in progress: listings show it, waiters wait on done.
type liveRun struct {
	rec  Record
	done chan struct{}
}

// NewService makes the service; Run starts it.
func NewService(opts ServiceOptions) *Service {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConcurrent == nil {
		opts.MaxConcurrent = func() int { return config.DefaultMaxConcurrentRuns }
	}
	s := &Service{
		opts:     opts,
		replan:   make(chan struct{}, 1),
		runCtx:   context.Background(),
		live:     map[string]*liveRun{},
		sessions: map[string]session{},
		last:     map[string]Record{},
		resuming: map[string]Record{},
		holds:    map[string]time.Time{},
	}
	s.slots = &slots{max: opts.MaxConcurrent}
	s.inflight = &inflight{path: opts.RunningPath}
	s.sched = NewScheduler(opts.Clock, s.fire, s.skipped)
	return s
}

// Run schedules until ctx ends, then waits for the runs it started. Runs
// of persistent tasks that were waiting for their turn to end when an
// earlier daemon stopped are taken up again first.
func (s *Service) Run(ctx context.Context) {
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	defer s.manual.Wait()
	s.recoverInflight()
	if s.opts.Persistent != nil {
		s.opts.Persistent.Resume(ctx, s.holdResumed, s.resumed)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.replan:
				if cfg := s.opts.Config(); cfg != nil {
					s.opts.History.SetRetention(cfg.Scheduler.HistoryKeepOrDefault())
				}
				if err := s.sched.Update(ctx, s.specs()); err != nil {
					return
				}
			}
		}
	}()
	s.sched.Run(ctx, s.specs())
	wg.Wait()
}

// ConfigChanged re-plans every schedule from the current config (a
// reload). Firings due during the reload are not lost: the scheduler
// fires what came due under the old plan before it takes the new one.
func (s *Service) ConfigChanged() {
	select {
	case s.replan <- struct{}{}:
	default: // a re-plan is pending; it reads the newest config
	}
}

// specs are the scheduled, enabled tasks of the current config. A task
// not yet tracked is planned from its newest run, so slots it missed
// while the daemon was down give their one catch-up firing.
func (s *Service) specs() []Spec {
	cfg := s.opts.Config()
	if cfg == nil {
		return nil
	}
	var specs []Spec
	for _, name := range cfg.TaskNames() {
		res, err := cfg.ResolveTask(name)
		if err != nil || !res.Enabled || res.Schedule == "" {
			continue
		}
		sched, err := ParseSchedule(res.Schedule, res.Timezone)
		if err != nil {
			s.opts.Log.Error("task schedule", "task", name, "err", err)
			continue
		}
		spec := Spec{Name: name, Schedule: sched, CatchUp: res.CatchUp}
		if rec, ok := s.lastRecord(name); ok {
			spec.LastRun = cmp.Or(rec.Due, rec.Start)
		}
		s.mu.Lock()
		if p, ok := s.resuming[name]; ok && cmp.Or(p.Due, p.Start).After(spec.LastRun) {
			// Its slot is being served by the firing taken up again.
			spec.LastRun = cmp.Or(p.Due, p.Start)
		}
		s.mu.Unlock()
		specs = append(specs, spec)
	}
	return specs
}

// lastRecord is task's newest run, from memory or the history file's tail.
func (s *Service) lastRecord(task string) (Record, bool) {
	s.mu.Lock()
	rec, ok := s.last[task]
	s.mu.Unlock()
	if ok {
		return rec, true
	}
	rec, ok, err := s.opts.History.Last(task)
	if err != nil {
		s.opts.Log.Warn("task history", "task", task, "err", err)
		return Record{}, false
	}
	if ok {
		s.mu.Lock()
		if _, newer := s.last[task]; !newer {
			s.last[task] = rec
		}
		s.mu.Unlock()
	}
	return rec, ok
}

// fire runs one scheduled firing (the scheduler has claimed the task).
func (s *Service) fire(ctx context.Context, f Firing) {
	s.execute(ctx, f.Task, f.Trigger, f.Due, s.opts.Clock.Now(), nil, nil)
}

// skipped records a firing that did not run.
func (s *Service) skipped(f Firing, reason Reason) {
	now := s.opts.Clock.Now()
	rec := Record{
		ID: RunID(now), Task: f.Task, Trigger: f.Trigger, Due: f.Due, Start: now, End: now,
		Outcome: OutcomeSkipped, Reason: reason,
	}
	if cfg := s.opts.Config(); cfg != nil && rec.Trigger == TriggerSchedule {
		// Named like the firings of its task that did run (execute).
		if res, err := cfg.ResolveTask(f.Task); err == nil && res.Runtime == config.RuntimePersistent {
			rec.Trigger = TriggerPersistent
		}
	}
	if reason == ReasonStillRunning {
		rec.Message = "skipped: still running (the previous run of this task has not ended)"
	}
	s.record(rec)
}

// Start runs task now, by hand: the same path as a scheduled firing,
// disabled tasks included. It returns the run as started; done closes
// when it has ended, and then Result has its record.
func (s *Service) Start(_ context.Context, name string) (Record, <-chan struct{}, error) {
	cfg := s.opts.Config()
	if cfg == nil {
		return Record{}, nil, api.Errorf(api.CodeNotReady, "no config loaded")
	}
	if _, ok := cfg.Tasks[name]; !ok {
		return Record{}, nil, api.Errorf(api.CodeNotFound, "task %q not found (tasks: %v)", name, cfg.TaskNames())
	}
	if !s.sched.Claim(name) {
		running := s.liveRecord(name)
		return Record{}, nil, api.Errorf(api.CodeTaskRunning, "task %s is running (run %s started %s); runs of one task never overlap",
			name, running.ID, running.Start.Format(time.RFC3339))
	}
	start := s.opts.Clock.Now()
	started := make(chan *liveRun, 1)
	s.mu.Lock()
	runCtx := s.runCtx
	s.manual.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.manual.Done()
		s.execute(runCtx, name, TriggerManual, time.Time{}, start, started, func() { s.sched.Release(name) })
	}()
	lr := <-started
	return lr.rec, lr.done, nil
}

// Result is the record of a run once its done channel closed.
func (s *Service) Result(task, runID string) (Record, bool) {
	if rec, ok := s.lastRecord(task); ok && rec.ID == runID {
		return rec, true
	}
	recs, _, err := s.opts.History.Read(task, 20)
	if err != nil {
		return Record{}, false
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].ID == runID {
			return recs[i], true
		}
	}
	return Record{}, false
}

func (s *Service) liveRecord(task string) Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lr, ok := s.live[task]; ok {
		return lr.rec
	}
	return Record{Task: task}
}

// execute is the one path of every run: it resolves the task, runs it
// (headless, or into its agent) and records the outcome. started, when
// set, is given the live run as soon as it exists; release, when set, ends
// the run's claim on the task before anyone waiting on it hears it ended,
// so a run started right after it is not refused as overlapping.
func (s *Service) execute(ctx context.Context, name string, trigger Trigger, due, start time.Time, started chan<- *liveRun, release func()) {
	rec := Record{ID: RunID(start), Task: name, Trigger: trigger, Due: due, Start: start, Outcome: api.OutcomeRunning}
	lr := &liveRun{rec: rec, done: make(chan struct{})}
	s.mu.Lock()
	s.live[name] = lr
	s.mu.Unlock()
	if started != nil {
		started <- lr
	}
	defer func() {
		s.mu.Lock()
		if s.live[name] == lr { // record took it off already
			delete(s.live, name)
		}
		s.mu.Unlock()
		if release != nil {
			release()
		}
		close(lr.done)
	}()

	cfg := s.opts.Config()
	res, err := cfg.ResolveTask(name)
	s.publishStarted(rec, res)
	if err != nil {
		s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonConfigError, err.Error()))
		return
	}
	rec.Harness = res.HarnessName
	readPrompt := func() (string, bool) {
		prompt, err := os.ReadFile(res.PromptFile)
		if err != nil {
			s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonConfigError,
				fmt.Sprintf("%s.prompt_file: cannot read %s: %v", res.Scope, res.PromptFile, err)))
			return "", false
		}
		// Validation refused such a file; it may have changed since.
		if err := api.CheckText(res.Scope+".prompt_file "+res.PromptFile, string(prompt)); err != nil {
			s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonConfigError, err.Error()))
			return "", false
		}
		return string(prompt), true
	}
	if res.Runtime == config.RuntimePersistent {
		prompt, ok := readPrompt()
		if !ok {
			return
		}
		if trigger == TriggerSchedule {
			rec.Trigger = TriggerPersistent
		}
		// A zero record: the daemon stopped first and the firing stays
		// pending for the next one to record.
		if out := s.deliver(ctx, res, rec, prompt); out.Outcome != "" {
			s.record(out)
		}
		return
	}

	// Headless: first a slot of the daemon-wide cap, in due order. A
	// firing waiting for one costs nothing but a parked goroutine: its
	// prompt is read when it runs (so an edit made meanwhile counts), and
	// a daemon killed meanwhile gives the slot its catch-up firing.
	// A harness under a usage limit starts nothing before its reset (other
	// harnesses run meanwhile).
	if !s.waitHold(ctx, res.HarnessName) {
		s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonInterrupted, "the daemon stopped while "+res.HarnessName+" was held for a usage limit"))
		return
	}
	if err := s.slots.acquire(ctx, cmp.Or(due, start)); err != nil {
		s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonInterrupted, "the daemon stopped before a run slot was free"))
		return
	}
	slotHeld := true
	defer func() {
		if slotHeld {
			s.slots.release()
		}
	}()
	var wt *runWorktree
	if res.Worktree {
		w, err := s.planRunWorktree(ctx, cfg, res, rec.ID)
		if err != nil {
			s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonConfigError, err.Error()))
			return
		}
		wt = w
		// The intent rides on the record kept in state below, before git
		// makes anything: a daemon killed after the add leaves it named.
		rec.Worktree = wt.view()
		rec.Worktree.Kept = true
	}
	// Kept in state until recorded, so a daemon killed meanwhile is
	// followed by one that records it.
	if err := s.inflight.save(func(m map[string]inflightRun) { m[rec.ID] = inflightRun{Rec: rec} }); err != nil {
		s.opts.Log.Warn("task run: not kept in state", "task", name, "run", rec.ID, "err", err)
	}
	defer func() {
		if err := s.inflight.save(func(m map[string]inflightRun) { delete(m, rec.ID) }); err != nil {
			s.opts.Log.Warn("task run: not dropped from state", "task", name, "run", rec.ID, "err", err)
		}
	}()
	prompt, ok := readPrompt()
	if !ok {
		return
	}
	scope, resume := res, s.sessionFor(name, res.HarnessName)
	if wt != nil {
		if err := s.makeRunWorktree(ctx, wt, name, rec.ID); err != nil {
			rec.Worktree = nil
			s.record(ended(rec, s.opts.Clock.Now(), OutcomeFailed, ReasonConfigError, err.Error()))
			return
		}
		// A fresh checkout each firing: a conversation of another
		// directory is not resumed in it.
		c := *res
		c.Workspace = wt.workdir()
		scope, resume = &c, ""
	}
	job := Job{
		ID: rec.ID, Task: name, Trigger: trigger, Due: due, Scope: scope, Prompt: prompt,
		SessionID: resume,
		Started: func(pgid int) {
			run := inflightRun{Rec: rec, PGID: pgid, PGIDStart: proc.Start(pgid)}
			if err := s.inflight.save(func(m map[string]inflightRun) { m[rec.ID] = run }); err != nil {
				s.opts.Log.Warn("task run: its process group not kept in state", "task", name, "run", rec.ID, "err", err)
			}
		},
	}
	// A limited attempt holds its harness until the reset and waits for it
	// without its slot, so runs of other harnesses take it meanwhile.
	job.WaitLimit = func(ctx context.Context, until time.Time) bool {
		s.hold(res.HarnessName, until)
		s.slots.release()
		slotHeld = false
		if !s.waitHold(ctx, res.HarnessName) {
			return false
		}
		if s.slots.acquire(ctx, cmp.Or(due, start)) != nil {
			return false
		}
		slotHeld = true
		return true
	}
	if s.opts.Bridge != nil {
		job.Bridge = s.opts.Bridge(cfg).For(harness.BridgeTaskEnv, name)
	}
	out := s.opts.Oneshot(ctx, job)
	if out.Outcome == OutcomeLimited {
		s.hold(res.HarnessName, LimitRetryAt(deref(out.ResetsAt), s.opts.Clock.Now()))
	}
	if wt != nil {
		out.Worktree = s.finishRunWorktree(ctx, wt, name, rec.ID)
	}
	out.ID, out.Task, out.Trigger, out.Due = rec.ID, name, trigger, due
	out.Harness = cmp.Or(out.Harness, res.HarnessName)
	if out.Start.IsZero() {
		out.Start = start
	}
	if out.SessionID != "" && wt == nil {
		s.mu.Lock()
		s.sessions[name] = session{harness: res.HarnessName, id: out.SessionID}
		s.mu.Unlock()
	}
	s.record(out)
}

// hold keeps headless runs of harness from starting before until (a
// later hold of the same harness wins).
func (s *Service) hold(harnessName string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until.After(s.holds[harnessName]) {
		s.holds[harnessName] = until
	}
	s.opts.Log.Info("task runs held: usage limit", "harness", harnessName, "until", until)
}

// HeldUntil is until when harness starts no headless run (zero: it is
// not held).
func (s *Service) HeldUntil(harnessName string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.holds[harnessName]; t.After(s.opts.Clock.Now()) {
		return t
	}
	return time.Time{}
}

// waitHold waits on the clock while harness is held; false when ctx ended
// first. A hold made longer meanwhile is waited out too.
func (s *Service) waitHold(ctx context.Context, harnessName string) bool {
	for {
		until := s.HeldUntil(harnessName)
		if until.IsZero() {
			return true
		}
		t := s.opts.Clock.NewTimer(until.Sub(s.opts.Clock.Now()))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// publishStarted puts a run's start on the event stream (docs/api.md, "The
// event stream"): its trigger as the record will name it, and a
// persistent task's agent (so that agent's readers see its firings). res
// is nil when the task did not resolve; the run still started, and its
// end follows at once.
func (s *Service) publishStarted(rec Record, res *config.Resolved) {
	e := api.Event{Type: api.EventTaskRunStarted, Task: rec.Task, Run: rec.ID, Reason: string(rec.Trigger)}
	if res != nil && res.Runtime == config.RuntimePersistent {
		e.Agent = agentOf(res)
		if rec.Trigger == TriggerSchedule {
			e.Reason = string(TriggerPersistent)
		}
	}
	events.Publish(s.opts.Events, e)
}

// recoverInflight records the headless runs an earlier daemon left going
// (it was killed or crashed): each once, as interrupted, before anything
// is planned, so the slot it served is not fired again. Their process
// groups are gone by then (inflight.leftover).
func (s *Service) recoverInflight() {
	runs, err := s.inflight.leftover()
	if err != nil {
		s.opts.Log.Error("task runs in progress", "err", err)
	}
	if len(runs) == 0 && err == nil {
		return
	}
	now := s.opts.Clock.Now()
	for _, r := range runs {
		if !names.Valid(r.Rec.Task) || !ValidRunID(r.Rec.ID) {
			continue
		}
		s.record(ended(r.Rec, now, OutcomeFailed, ReasonInterrupted,
			"leo's daemon ended during the run (killed or crashed); the next daemon recorded it and ended the processes it left"))
	}
	if err := s.inflight.save(func(m map[string]inflightRun) { clear(m) }); err != nil {
		s.opts.Log.Error("task runs in progress", "err", err)
	}
}

// sessionFor is the conversation task's next run of harnessName continues:
// the newest one a run of that harness recorded.
func (s *Service) sessionFor(task, harnessName string) string {
	s.mu.Lock()
	ss, ok := s.sessions[task]
	s.mu.Unlock()
	if ok {
		if ss.harness == harnessName {
			return ss.id
		}
		return ""
	}
	recs, _, err := s.opts.History.Read(task, 0)
	if err != nil {
		return ""
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.SessionID != "" && r.Agent == "" {
			if r.Harness != harnessName {
				return ""
			}
			s.mu.Lock()
			s.sessions[task] = session{harness: r.Harness, id: r.SessionID}
			s.mu.Unlock()
			return r.SessionID
		}
	}
	return ""
}

// ended completes rec with an outcome.
func ended(rec Record, end time.Time, outcome Outcome, reason Reason, message string) Record {
	rec.End, rec.Outcome, rec.Reason, rec.Message = end, outcome, reason, message
	return rec
}

// record appends rec to history and remembers it as the task's newest.
// A history that cannot be written is logged; the run still counts.
func (s *Service) record(rec Record) {
	if rec.End.IsZero() {
		rec.End = s.opts.Clock.Now()
	}
	if err := s.opts.History.Append(rec); err != nil {
		s.opts.Log.Error("task history: the run could not be recorded", "task", rec.Task, "run", rec.ID, "outcome", rec.Outcome, "err", err)
		// Whoever waits for the run (leo run) and the listing hear it too.
		rec.Warnings = append(slices.Clip(rec.Warnings), "this run is not in the task's history: "+err.Error())
	}
	s.mu.Lock()
	s.last[rec.Task] = rec
	// The run is over before its end is published: a listing made on
	// task.run.ended must not show it running still.
	if lr := s.live[rec.Task]; lr != nil && lr.rec.ID == rec.ID {
		delete(s.live, rec.Task)
	}
	s.mu.Unlock()
	e := api.Event{Type: api.EventTaskRunEnded, Task: rec.Task, Run: rec.ID, Agent: rec.Agent, State: string(rec.Outcome), Reason: api.FirstLine(rec.Message)}
	if e.Reason == "" {
		e.Reason = string(rec.Reason)
	}
	events.Publish(s.opts.Events, e)
	level := slog.LevelInfo
	if rec.Outcome != OutcomeSucceeded {
		level = slog.LevelWarn
	}
	s.opts.Log.Log(context.Background(), level, "task run", "task", rec.Task, "run", rec.ID, "trigger", rec.Trigger,
		"outcome", rec.Outcome, "reason", rec.Reason, "attempt", rec.Attempt)
}

// List is every task of the current config, by name.
func (s *Service) List() []api.Task {
	cfg := s.opts.Config()
	if cfg == nil {
		return []api.Task{}
	}
	out := make([]api.Task, 0, len(cfg.Tasks))
	for _, name := range cfg.TaskNames() {
		out = append(out, s.view(cfg, name))
	}
	return out
}

// Get is one task.
func (s *Service) Get(name string) (api.Task, error) {
	cfg := s.opts.Config()
	if cfg == nil || cfg.Tasks[name] == nil {
		return api.Task{}, api.Errorf(api.CodeNotFound, "task %q not found", name)
	}
	return s.view(cfg, name), nil
}

func (s *Service) view(cfg *config.Config, name string) api.Task {
	t := api.Task{Name: name, Timezone: time.Local.String()}
	res, err := cfg.ResolveTask(name)
	if err == nil {
		t.Runtime, t.Harness, t.Model = res.Runtime, res.HarnessName, res.Model
		t.HarnessInherited = res.HarnessInherited
		t.Schedule, t.Enabled, t.CatchUp = res.Schedule, res.Enabled, res.CatchUp
		if res.Timezone != "" {
			t.Timezone = res.Timezone
		}
		if res.Schedule != "" {
			t.ScheduleWords = config.DescribeSchedule(res.Schedule)
		}
		if res.Runtime == config.RuntimePersistent {
			t.Agent = agentOf(res)
		}
	}
	if next := s.sched.Next(name); !next.IsZero() {
		t.NextRun = &next
	}
	s.mu.Lock()
	_, t.Running = s.live[name]
	s.mu.Unlock()
	if rec, ok := s.lastRecord(name); ok {
		t.LastRun = &rec
	}
	return t
}

// TaskHistory is task's runs, newest last; limit <= 0 means all kept.
func (s *Service) TaskHistory(name string, limit int) (api.TaskHistory, error) {
	if cfg := s.opts.Config(); cfg == nil || cfg.Tasks[name] == nil {
		if _, ok := s.lastRecord(name); !ok {
			return api.TaskHistory{}, api.Errorf(api.CodeNotFound, "task %q not found", name)
		}
	}
	recs, dropped, err := s.opts.History.Read(name, limit)
	if err != nil {
		return api.TaskHistory{}, api.Errorf(api.CodeInternal, "%w", err)
	}
	// A run still going shows last, as running: `leo run --detach` then
	// `leo task history` finds it.
	s.mu.Lock()
	if lr, ok := s.live[name]; ok {
		recs = append(recs, lr.rec)
		if limit > 0 && len(recs) > limit {
			recs = recs[len(recs)-limit:]
		}
	}
	s.mu.Unlock()
	return historyOf(recs, dropped), nil
}

// AllHistory is the newest runs of every task of the config, by start.
func (s *Service) AllHistory(limit int) (api.TaskHistory, error) {
	cfg := s.opts.Config()
	var all []Record
	var dropped []Dropped
	if cfg != nil {
		for _, name := range cfg.TaskNames() {
			recs, d, err := s.opts.History.Read(name, limit)
			if err != nil {
				return api.TaskHistory{}, api.Errorf(api.CodeInternal, "%w", err)
			}
			all = append(all, recs...)
			dropped = append(dropped, d...)
		}
	}
	slices.SortStableFunc(all, func(a, b Record) int { return a.Start.Compare(b.Start) })
	if limit > 0 && len(all) > limit {
		all = all[len(all)-limit:]
	}
	return historyOf(all, dropped), nil
}

func historyOf(recs []Record, dropped []Dropped) api.TaskHistory {
	h := api.TaskHistory{Runs: recs}
	if h.Runs == nil {
		h.Runs = []api.TaskRun{}
	}
	for _, d := range dropped {
		h.Dropped = append(h.Dropped, d.String())
	}
	return h
}

// Log is the output of one run of task (runID "" is the newest). A task
// that is neither in the config nor in history is not_found as such; a
// persistent task's runs are turns in its agent's conversation, which keep
// no run log: the answer says where they are instead.
func (s *Service) Log(name, runID string) (api.TaskLog, error) {
	cfg := s.opts.Config()
	var persistentAgent string
	if cfg == nil || cfg.Tasks[name] == nil {
		if _, ok := s.lastRecord(name); !ok {
			return api.TaskLog{}, api.Errorf(api.CodeNotFound, "task %q not found", name)
		}
	} else if res, err := cfg.ResolveTask(name); err == nil && res.Runtime == config.RuntimePersistent {
		persistentAgent = agentOf(res)
	}
	var l api.TaskLog
	var err error = api.Errorf(api.CodeNotFound, "task %s: no run logs", name)
	if s.opts.ReadLog != nil {
		l, err = s.opts.ReadLog(name, runID)
	}
	if persistentAgent != "" && api.HasCode(err, api.CodeNotFound) {
		// (A log of a run from before the task became persistent is
		// still shown.)
		return api.TaskLog{}, api.Errorf(api.CodeNotFound,
			"task %s is persistent: its runs are turns of agent %s, which keep no run logs; see the conversation with: leo agent logs %s (or leo attach %s)",
			name, persistentAgent, persistentAgent, persistentAgent)
	}
	return l, err
}

// slots is the daemon-wide cap on headless runs: a run waits for a free
// slot, and waiting runs get one in due order (then arrival order).
type slots struct {
	max func() int

	mu      sync.Mutex
	used    int
	seq     int
	waiting []*slotWait
}

type slotWait struct {
	due   time.Time
	seq   int
	ready chan struct{}
}

func (s *slots) acquire(ctx context.Context, due time.Time) error {
	s.mu.Lock()
	if s.used < max(s.max(), 1) && len(s.waiting) == 0 {
		s.used++
		s.mu.Unlock()
		return nil
	}
	s.seq++
	w := &slotWait{due: due, seq: s.seq, ready: make(chan struct{})}
	i, _ := slices.BinarySearchFunc(s.waiting, w, func(a, b *slotWait) int {
		return cmp.Or(a.due.Compare(b.due), cmp.Compare(a.seq, b.seq))
	})
	s.waiting = slices.Insert(s.waiting, i, w)
	s.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: hand it on
			s.used--
			s.grantLocked()
		default:
			s.waiting = slices.DeleteFunc(s.waiting, func(x *slotWait) bool { return x == w })
		}
		return ctx.Err()
	}
}

func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
	s.grantLocked()
}

// grantLocked gives free slots to the earliest waiters.
func (s *slots) grantLocked() {
	for len(s.waiting) > 0 && s.used < max(s.max(), 1) {
		w := s.waiting[0]
		s.waiting = s.waiting[1:]
		s.used++
		close(w.ready)
	}
}
