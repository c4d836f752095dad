package task

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/launch"
	"github.com/blackpaw-studio/leo/internal/names"
)

// Defaults of a Runner and of a task.
const (
	DefaultLogsKeep  = 50
	DefaultTimeout   = 30 * time.Minute
	DefaultKillGrace = 5 * time.Second
	// MaxLineBytes caps one stdout line given to the event stream: the
	// rest of a longer line is dropped (the cut line is not JSON, so the
	// stream ignores it) and reading goes on.
	MaxLineBytes = 8 << 20
	// MaxLogBytes caps one run's log file; output beyond it is read and
	// dropped.
	MaxLogBytes = 64 << 20
	// stderrTailBytes of stderr are kept to explain a non-zero exit.
	stderrTailBytes = 4096
)

// Runner runs one-shot headless task runs: a cron firing and `leo run`
// take the same path. Its fields are read-only once Run is called; one
// Runner may run many jobs at once.
type Runner struct {
	// Resolver finds the harness binary, every run anew (a harness
	// installed while the daemon runs is found). Runs get its PATH.
	Resolver binpath.Resolver
	// Clock times the timeout, the kill grace and the retry backoff.
	Clock clock.Clock
	// LogDir is state/logs: run logs go to <LogDir>/<task>/<run-id>.log.
	LogDir string
	// LogsKeep is how many run logs are kept per task (<= 0: 50).
	LogsKeep int
	// Environ is the environment a run starts from (nil: os.Environ()).
	Environ []string
	// Backoff is the wait before retry n (1, 2, …); nil: 10s doubling, at
	// most 5m.
	Backoff func(retry int) time.Duration
	// KillGrace is how long a process group has between SIGTERM and
	// SIGKILL (<= 0: 5s).
	KillGrace time.Duration
	Log       *slog.Logger
}

// Job is one firing to run.
type Job struct {
	// ID is the run id: the start time in UTC (RunIDLayout). Run sets it
	// when empty.
	ID      string
	Task    string
	Trigger Trigger
	Due     time.Time
	// Scope is the resolved task: harness, model, options, env,
	// workspace, timeout and retries.
	Scope  *config.Resolved
	Prompt string
	// SessionID is the conversation to resume ("" = a fresh one).
	SessionID string
	Bridge    *harness.MCPBridge
	// Started, when set, is told the process group of each attempt as it
	// starts.
	Started func(pgid int)
	// WaitLimit, when set, waits out a usage limit before the retry: the
	// service holds the harness until then and gives up the run's slot
	// meanwhile (false: ctx ended first). Nil waits on the clock.
	WaitLimit func(ctx context.Context, until time.Time) bool
}

// LimitMargin is added to a limit's reset before the retry; LimitBackoff is
// the wait when the harness gave no reset time (or one already past).
const (
	LimitMargin  = 10 * time.Second
	LimitBackoff = time.Minute
)

// LimitRetryAt is when a run limited at now until resetsAt is retried.
func LimitRetryAt(resetsAt, now time.Time) time.Time {
	if resetsAt.IsZero() || !resetsAt.After(now) {
		return now.Add(LimitBackoff)
	}
	return resetsAt.Add(LimitMargin)
}

// RunIDLayout formats a run id from the run's start time in UTC.
const RunIDLayout = "20060102T150405.000Z"

// RunID is the run id of a run that starts at t.
func RunID(t time.Time) string { return t.UTC().Format(RunIDLayout) }

// ValidRunID reports whether id has the shape of a run id, so it can name
// a file: nothing else (no path separator, no "..") passes.
func ValidRunID(id string) bool {
	if len(id) != len(RunIDLayout) {
		return false
	}
	t, err := time.Parse(RunIDLayout, id)
	return err == nil && t.Format(RunIDLayout) == id
}

// DefaultBackoff waits 10s before the first retry, doubling each time, at
// most 5m.
func DefaultBackoff(retry int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < retry && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

func (r *Runner) clock() clock.Clock {
	if r.Clock == nil {
		return clock.New()
	}
	return r.Clock
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func (r *Runner) grace() time.Duration {
	if r.KillGrace <= 0 {
		return DefaultKillGrace
	}
	return r.KillGrace
}

// attempt is how one start of the harness ended.
type attempt struct {
	outcome  Outcome
	reason   Reason
	message  string
	exitCode *int
	resetsAt time.Time // a limited attempt's reset, zero when unknown
	res      harness.RunResult
}

// final: no retry can change the outcome (a missing binary, a task that
// does not build, leo stopping).
func (a attempt) final() bool {
	switch a.reason {
	case ReasonClaudeNotFound, ReasonHarnessNotFound, ReasonConfigError, ReasonInterrupted:
		return true
	}
	return a.outcome == OutcomeSucceeded
}

func (a attempt) summary() string {
	if a.outcome == OutcomeSucceeded {
		return string(a.outcome)
	}
	return fmt.Sprintf("%s (%s): %s", a.outcome, a.reason, a.message)
}

// Run runs j to its end: every attempt its retries allow, with the backoff
// between them. It returns the one record of the firing, decided by the
// last attempt; earlier attempts' failures are in its Warnings. It never
// returns early: a cancelled ctx (leo stopping) kills the run's process
// group and the record says interrupted.
func (r *Runner) Run(ctx context.Context, j Job) Record {
	start := r.clock().Now()
	if j.ID == "" {
		j.ID = RunID(start)
	}
	f := &firing{r: r, j: j, rec: Record{ID: j.ID, Task: j.Task, Trigger: j.Trigger, Due: j.Due, Start: start, Attempt: 1}}
	if msg := checkJob(j); msg != "" {
		return f.end(attempt{outcome: OutcomeFailed, reason: ReasonConfigError, message: msg})
	}
	f.rec.Harness = cmp.Or(j.Scope.HarnessName, j.Scope.Harness.Name())

	f.openLog()
	defer f.closeLog()
	f.say("task %s, run %s, trigger %s, harness %s", j.Task, j.ID, j.Trigger, f.rec.Harness)

	p, failed := f.prepare(ctx)
	if p == nil {
		f.say("%s", failed.summary())
		return f.end(failed)
	}
	a := f.attempts(ctx, p)
	f.rec.SessionID = cmp.Or(a.res.SessionID, p.resumed)
	f.rec.Reply = FirstLines(a.res.Reply, ReplyMaxLines, ReplyMaxBytes)
	f.rec.Warnings = append(f.rec.Warnings, a.res.Warnings...)
	f.rec.Usage, f.rec.CostUSD = a.res.Usage, a.res.CostUSD
	return f.end(a)
}

// checkJob is why j cannot run at all ("" when it can).
func checkJob(j Job) string {
	switch {
	case !names.Valid(j.Task):
		return fmt.Sprintf("task %q: %s", j.Task, names.Rule)
	case !ValidRunID(j.ID):
		return fmt.Sprintf("tasks.%s: run id %q is not a UTC start time like %s", j.Task, j.ID, RunIDLayout)
	case j.Scope == nil || j.Scope.Harness == nil:
		return fmt.Sprintf("tasks.%s: the task has no resolved harness", j.Task)
	case j.Scope.Runtime == config.RuntimePersistent:
		return fmt.Sprintf("%s: a persistent task delivers into an agent; it has no headless run", j.Scope.Scope)
	}
	return ""
}

// firing is one Run under way: the record it builds and the run's log.
type firing struct {
	r   *Runner
	j   Job
	rec Record
	lg  *runLog
}

func (f *firing) openLog() {
	lg, err := openRunLog(f.r.LogDir, f.j.Task, f.j.ID)
	if err != nil {
		f.rec.Warnings = append(f.rec.Warnings, "no run log: "+err.Error())
		f.r.log().Warn("task run log", "task", f.j.Task, "run", f.j.ID, "err", err)
	}
	f.lg = lg
}

func (f *firing) closeLog() {
	f.lg.close()
	if err := PruneLogs(f.r.LogDir, f.j.Task, f.r.LogsKeep); err != nil {
		f.r.log().Warn("pruning task run logs", "task", f.j.Task, "err", err)
	}
}

// say writes a line of leo's own to the run's log.
func (f *firing) say(format string, args ...any) {
	f.lg.meta(fmt.Sprintf("[leo %s] ", f.r.clock().Now().UTC().Format(time.RFC3339)) + fmt.Sprintf(format, args...))
}

// end is the record of the firing, decided by a.
func (f *firing) end(a attempt) Record {
	rec := f.rec
	rec.Outcome, rec.Reason, rec.Message, rec.ExitCode = a.outcome, a.reason, a.message, a.exitCode
	rec.ResetsAt = nil
	if a.outcome == OutcomeLimited && !a.resetsAt.IsZero() {
		t := a.resetsAt
		rec.ResetsAt = &t
	}
	if a.outcome == OutcomeSucceeded {
		rec.Reason, rec.Message = "", ""
	}
	rec.End = f.r.clock().Now() // the service logs the run as it records it
	return rec
}

// prepared is a run ready to start: what each attempt starts and reads,
// and the conversation it resumes ("" for a fresh one).
type prepared struct {
	streamer harness.EventStreamer
	proc     process
	resumed  string
}

// prepare takes the launch steps every harness start shares
// (internal/launch) for a headless run of j, and checks that exec can
// take its arguments. Without a run, the attempt says why (nothing was
// started, and no retry can change it).
func (f *firing) prepare(ctx context.Context) (*prepared, attempt) {
	j, r := f.j, f.r
	failed := func(reason Reason, format string, args ...any) (*prepared, attempt) {
		return nil, attempt{outcome: OutcomeFailed, reason: reason, message: fmt.Sprintf(format, args...)}
	}
	streamer, ok := j.Scope.Harness.(harness.EventStreamer)
	if !ok {
		return failed(ReasonHarnessError, "harness %s has no headless event stream: leo cannot tell how its runs end", f.rec.Harness)
	}
	base := r.Environ
	if base == nil {
		base = os.Environ()
	}
	lp, err := launch.New(launch.Request{
		Mode:     launch.Headless,
		Scope:    j.Scope,
		Name:     j.Task,
		Prompt:   j.Prompt,
		Bridge:   j.Bridge,
		Resolver: r.Resolver,
		Base:     base,
	})
	var wsErr *launch.WorkspaceError
	switch {
	case errors.As(err, &wsErr):
		return failed(ReasonConfigError, "%s.workspace: %v", j.Scope.Scope, wsErr.Err)
	case api.HasCode(err, api.CodeClaudeNotFound):
		return failed(ReasonClaudeNotFound, "%s", err)
	case err != nil:
		return failed(ReasonHarnessNotFound, "%s", err)
	}

	s := lp.ChooseSession(ctx, j.SessionID)
	switch s.Stored {
	case launch.Unchecked:
		f.rec.Warnings = append(f.rec.Warnings, fmt.Sprintf("cannot check session %s (%v): started a fresh one", j.SessionID, s.CheckErr))
	case launch.Gone:
		f.rec.Warnings = append(f.rec.Warnings, fmt.Sprintf("session %s no longer exists: started a fresh one", j.SessionID))
	}
	cmd, err := lp.Command()
	if err != nil {
		return failed(ReasonConfigError, "%s: %v", j.Scope.Scope, err)
	}
	if err := checkArgs(cmd.Argv, j.Prompt); err != nil {
		field := j.Scope.Scope
		if err.prompt {
			field += ".prompt_file"
		}
		return failed(ReasonConfigError, "%s: %v", field, err)
	}
	p := &prepared{streamer: streamer, proc: process{
		argv: cmd.Argv, env: lp.Env(cmd).List(), dir: cmp.Or(cmd.Dir, lp.Spec.Workspace),
		timeout: j.Scope.Timeout, started: j.Started,
	}}
	if p.proc.timeout <= 0 {
		p.proc.timeout = DefaultTimeout
	}
	if s.Resume {
		p.resumed = s.ID
		f.say("resuming session %s", s.ID)
	}
	for _, w := range f.rec.Warnings {
		f.say("warning: %s", w)
	}
	return p, attempt{}
}

// attempts starts p as many times as the task's retries allow, with the
// backoff between attempts, and returns how the last one ended.
func (f *firing) attempts(ctx context.Context, p *prepared) attempt {
	attempts := 1 + max(f.j.Scope.Retries, 0)
	limitRetried := false
	for n := 1; ; n++ {
		f.rec.Attempt = n
		if ctx.Err() != nil {
			return attempt{outcome: OutcomeFailed, reason: ReasonInterrupted, message: "leo stopped before the run started"}
		}
		f.say("attempt %d of %d: %s in %s, timeout %s", n, attempts, p.proc.argv[0], p.proc.dir, p.proc.timeout)
		a := f.r.attempt(ctx, p.streamer, p.proc, f.lg)
		f.say("attempt %d: %s", n, a.summary())
		if a.final() || n == attempts {
			return a
		}
		f.rec.Warnings = append(f.rec.Warnings, fmt.Sprintf("attempt %d: %s", n, a.summary()))
		if a.outcome == OutcomeLimited {
			// One retry after the reset; a second limit ends the firing.
			if limitRetried {
				return a
			}
			limitRetried = true
			until := LimitRetryAt(a.resetsAt, f.r.clock().Now())
			f.say("limited: retrying at %s", until.UTC().Format(time.RFC3339))
			if !f.waitLimit(ctx, until) {
				return attempt{outcome: OutcomeFailed, reason: ReasonInterrupted,
					message: fmt.Sprintf("leo stopped while waiting out a usage limit to retry (attempt %d of %d)", n+1, attempts)}
			}
			continue
		}
		wait := f.r.backoff(n)
		f.say("retrying in %s", wait)
		if !f.r.sleep(ctx, wait) {
			return attempt{outcome: OutcomeFailed, reason: ReasonInterrupted,
				message: fmt.Sprintf("leo stopped while waiting to retry (attempt %d of %d)", n+1, attempts)}
		}
	}
}

// waitLimit waits until the limit's retry time: through the job's WaitLimit
// (the service's harness hold), else on the clock.
func (f *firing) waitLimit(ctx context.Context, until time.Time) bool {
	if f.j.WaitLimit != nil {
		return f.j.WaitLimit(ctx, until)
	}
	return f.r.sleep(ctx, until.Sub(f.r.clock().Now()))
}

// maxArgBytes is Linux's limit on one argument, its NUL included
// (MAX_ARG_STRLEN: 32 pages).
const maxArgBytes = 128 << 10

// argError is an argument no program can be started with; prompt: the
// argument carries the prompt.
type argError struct {
	msg    string
	prompt bool
}

func (e *argError) Error() string { return e.msg }

// checkArgs finds an argument exec would refuse: one with a NUL byte
// (EINVAL) or longer than the kernel takes (E2BIG). Said up front, as a
// config error that no retry can change, rather than as a bare errno.
func checkArgs(argv []string, prompt string) *argError {
	for i, a := range argv[1:] {
		isPrompt := prompt != "" && strings.Contains(a, prompt)
		what := fmt.Sprintf("argument %d of the command", i+1)
		if isPrompt {
			what = "the prompt (a headless run passes it as an argument)"
		}
		if at := strings.IndexByte(a, 0); at >= 0 {
			return &argError{prompt: isPrompt, msg: fmt.Sprintf("%s holds a NUL byte at byte %d; a program's arguments cannot", what, at)}
		}
		if len(a) >= maxArgBytes {
			return &argError{prompt: isPrompt, msg: fmt.Sprintf("%s is %d bytes; one argument can be at most %d bytes", what, len(a), maxArgBytes-1)}
		}
	}
	return nil
}

func (r *Runner) backoff(retry int) time.Duration {
	if r.Backoff != nil {
		return r.Backoff(retry)
	}
	return DefaultBackoff(retry)
}

// sleep waits d on the clock; false when ctx ended first.
func (r *Runner) sleep(ctx context.Context, d time.Duration) bool {
	t := r.clock().NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// process is what one attempt starts.
type process struct {
	argv    []string
	env     []string
	dir     string
	timeout time.Duration
	started func(pgid int)
}

// attempt starts the harness once and waits for it: its exit, the
// timeout, or ctx. However it ends, the whole process group is gone (or
// SIGKILLed) and both output pipes are drained before it returns.
func (r *Runner) attempt(ctx context.Context, streamer harness.EventStreamer, p process, lg *runLog) attempt {
	clk := r.clock()
	name := filepath.Base(p.argv[0])
	outR, outW, err := os.Pipe()
	if err != nil {
		return attempt{outcome: OutcomeFailed, reason: ReasonStartFailed, message: fmt.Sprintf("starting %s: %v", name, err)}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return attempt{outcome: OutcomeFailed, reason: ReasonStartFailed, message: fmt.Sprintf("starting %s: %v", name, err)}
	}
	c := exec.Command(p.argv[0], p.argv[1:]...)
	c.Env, c.Dir = p.env, p.dir
	c.Stdin = nil // /dev/null: a harness waiting for input would hang
	c.Stdout, c.Stderr = outW, errW
	// Its own process group, so a timeout reaches everything it started.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = c.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return attempt{outcome: OutcomeFailed, reason: ReasonStartFailed, message: fmt.Sprintf("starting %s: %v", name, err)}
	}
	pgid := c.Process.Pid
	if p.started != nil {
		p.started(pgid)
	}

	stream := streamer.NewEventStream()
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		readLines(outR, MaxLineBytes, func(line []byte, cut bool) {
			lg.line(line, cut)
			stream.Line(line)
		})
	}()
	tail := &tailBuffer{max: stderrTailBytes}
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = io.Copy(io.MultiWriter(lg, tail), errR)
	}()
	exited := make(chan struct{})
	go func() {
		_ = c.Wait()
		close(exited)
	}()

	timer := clk.NewTimer(p.timeout)
	var killed Reason
	select {
	case <-exited:
	case <-timer.C():
		killed = ReasonTimeout
	case <-ctx.Done():
		killed = ReasonInterrupted
	}
	timer.Stop()
	if killed != "" {
		r.stopGroup(pgid, exited)
	}
	// Whatever the leader left behind (a tool, an MCP server) goes with
	// it: a one-shot run leaves no processes, and none holds our pipes.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	r.drain(outDone, errDone, outR, errR)
	outR.Close()
	errR.Close()

	switch killed {
	case ReasonTimeout:
		return attempt{outcome: OutcomeTimeout, reason: ReasonTimeout,
			message: fmt.Sprintf("%s ran longer than the timeout %s: its process group was killed", name, p.timeout)}
	case ReasonInterrupted:
		return attempt{outcome: OutcomeFailed, reason: ReasonInterrupted,
			message: fmt.Sprintf("leo stopped during the run: %s's process group was killed", name)}
	}
	res := stream.Result()
	a := attempt{res: res}
	st := c.ProcessState
	if st.Exited() {
		code := st.ExitCode()
		a.exitCode = &code
	}
	switch {
	case res.Limited:
		a.outcome, a.reason, a.message, a.resetsAt = OutcomeLimited, ReasonUsageLimit, res.Error, res.ResetsAt
		if a.message == "" {
			a.message = name + " hit a usage limit"
		}
	case res.Error != "":
		a.outcome, a.reason, a.message = OutcomeFailed, ReasonHarnessError, res.Error
	case !st.Success():
		a.outcome, a.reason = OutcomeFailed, ReasonExitStatus
		if a.exitCode != nil {
			a.message = fmt.Sprintf("%s exited with status %d", name, *a.exitCode)
		} else {
			a.message = fmt.Sprintf("%s ended: %s", name, st.String())
		}
		if last := tail.lastLine(); last != "" {
			a.message += ": " + last
		}
	case !res.Succeeded:
		a.outcome, a.reason = OutcomeFailed, ReasonHarnessError
		a.message = "the stream ended without a result"
		if last := tail.lastLine(); last != "" {
			a.message += " (stderr: " + last + ")"
		}
	default:
		a.outcome = OutcomeSucceeded
	}
	return a
}

// stopGroup ends a process group whose leader is still running: SIGTERM,
// then SIGKILL after the grace.
func (r *Runner) stopGroup(pgid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := r.clock().NewTimer(r.grace())
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-t.C():
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
}

// drain waits for both output readers to reach EOF. A process that left
// the group (setsid) could hold a pipe open forever: after the grace the
// pipes are closed under the readers.
func (r *Runner) drain(outDone, errDone <-chan struct{}, pipes ...*os.File) {
	both := make(chan struct{})
	go func() {
		<-outDone
		<-errDone
		close(both)
	}()
	select {
	case <-both:
		return
	default:
	}
	t := r.clock().NewTimer(r.grace())
	defer t.Stop()
	select {
	case <-both:
	case <-t.C():
		for _, p := range pipes {
			p.Close()
		}
		<-both
	}
}

// readLines calls fn with each line of rd, without its newline. A line
// longer than max is cut to max bytes (cut=true) and the rest of it is
// skipped; reading goes on with the next line.
func readLines(rd io.Reader, max int, fn func(line []byte, cut bool)) {
	br := bufio.NewReaderSize(rd, 64<<10)
	var buf []byte
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			complete := chunk[len(chunk)-1] == '\n'
			if complete {
				chunk = chunk[:len(chunk)-1]
			}
			if room := max - len(buf); len(chunk) > room {
				chunk, cut = chunk[:room], true
			}
			buf = append(buf, chunk...)
			if complete {
				fn(buf, cut)
				buf, cut = nil, false // fn may keep the line it was given
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			if len(buf) > 0 || cut {
				fn(buf, cut)
			}
			return
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// lastLine is the last non-empty line written, trimmed.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.b), []byte("\n"))
	return string(bytes.TrimSpace(lines[len(lines)-1]))
}
