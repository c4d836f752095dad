package task

import (
	"bufio"
	"bytes"
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
	clk := r.clock()
	start := clk.Now()
	if j.ID == "" {
		j.ID = RunID(start)
	}
	rec := Record{ID: j.ID, Task: j.Task, Trigger: j.Trigger, Due: j.Due, Start: start, Attempt: 1}
	end := func(a attempt) Record {
		rec.Outcome, rec.Reason, rec.Message, rec.ExitCode = a.outcome, a.reason, a.message, a.exitCode
		if a.outcome == OutcomeSucceeded {
			rec.Reason, rec.Message = "", ""
		}
		rec.End = clk.Now() // the service logs the run as it records it
		return rec
	}
	configError := func(format string, args ...any) Record {
		return end(attempt{outcome: OutcomeFailed, reason: ReasonConfigError, message: fmt.Sprintf(format, args...)})
	}
	if !names.Valid(j.Task) {
		return configError("task %q: %s", j.Task, names.Rule)
	}
	if !ValidRunID(j.ID) {
		return configError("tasks.%s: run id %q is not a UTC start time like %s", j.Task, j.ID, RunIDLayout)
	}
	if j.Scope == nil || j.Scope.Harness == nil {
		return configError("tasks.%s: the task has no resolved harness", j.Task)
	}
	if j.Scope.Runtime == config.RuntimePersistent {
		return configError("%s: a persistent task delivers into an agent; it has no headless run", j.Scope.Scope)
	}
	h := j.Scope.Harness
	rec.Harness = j.Scope.HarnessName
	if rec.Harness == "" {
		rec.Harness = h.Name()
	}

	lg, err := openRunLog(r.LogDir, j.Task, j.ID)
	if err != nil {
		rec.Warnings = append(rec.Warnings, "no run log: "+err.Error())
		r.log().Warn("task run log", "task", j.Task, "run", j.ID, "err", err)
	}
	defer func() {
		lg.close()
		if err := PruneLogs(r.LogDir, j.Task, r.LogsKeep); err != nil {
			r.log().Warn("pruning task run logs", "task", j.Task, "err", err)
		}
	}()
	say := func(format string, args ...any) {
		lg.meta(fmt.Sprintf("[leo %s] ", clk.Now().UTC().Format(time.RFC3339)) + fmt.Sprintf(format, args...))
	}
	say("task %s, run %s, trigger %s, harness %s", j.Task, j.ID, j.Trigger, rec.Harness)

	fail := func(a attempt) Record {
		say("%s", a.summary())
		return end(a)
	}

	bin, err := r.Resolver.LookupHarness(h.Binary(), rec.Harness)
	if err != nil {
		reason := ReasonHarnessNotFound
		if api.HasCode(err, api.CodeClaudeNotFound) {
			reason = ReasonClaudeNotFound
		}
		return fail(attempt{outcome: OutcomeFailed, reason: reason, message: err.Error()})
	}
	streamer, ok := h.(harness.EventStreamer)
	if !ok {
		return fail(attempt{outcome: OutcomeFailed, reason: ReasonHarnessError,
			message: fmt.Sprintf("harness %s has no headless event stream: leo cannot tell how its runs end", rec.Harness)})
	}

	// Every harness keys its sessions by the real workspace path.
	ws := j.Scope.Workspace
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return fail(attempt{outcome: OutcomeFailed, reason: ReasonConfigError, message: fmt.Sprintf("%s.workspace: %v", j.Scope.Scope, err)})
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	spec := j.Scope.LaunchSpec()
	spec.Name = j.Task
	spec.Workspace = ws
	spec.Prompt = j.Prompt
	spec.Bridge = j.Bridge

	env := newEnv(r.Environ)
	env.overlay(spec.Env)
	if _, set := spec.Env["PATH"]; !set {
		env.set("PATH", r.Resolver.SearchPath())
	}
	// Marks the run as leo's own, as LEO_AGENT marks agents: what runs in
	// it (an agent's tool call) may not move the daemon (handover).
	env.set("LEO_TASK", j.Task)
	if j.SessionID != "" {
		q := harness.SessionQuery{Workspace: ws, Env: env.asMap()}
		exists, err := h.Sessions().Exists(ctx, q, j.SessionID)
		switch {
		case err != nil:
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("cannot check session %s (%v): started a fresh one", j.SessionID, err))
		case !exists:
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("session %s no longer exists: started a fresh one", j.SessionID))
		default:
			spec.SessionID, spec.Resume = j.SessionID, true
		}
	}
	cmd, err := h.Headless(spec)
	if err == nil && len(cmd.Argv) == 0 {
		err = errors.New("the adapter built an empty command")
	}
	if err != nil {
		return fail(attempt{outcome: OutcomeFailed, reason: ReasonConfigError, message: fmt.Sprintf("%s: %v", j.Scope.Scope, err)})
	}
	// Run the very program the lookup found.
	argv := append([]string(nil), cmd.Argv...)
	if argv[0] == h.Binary() {
		argv[0] = bin
	}
	if err := checkArgs(argv, j.Prompt); err != nil {
		field := j.Scope.Scope
		if err.prompt {
			field += ".prompt_file"
		}
		return fail(attempt{outcome: OutcomeFailed, reason: ReasonConfigError, message: fmt.Sprintf("%s: %v", field, err)})
	}
	env.overlay(cmd.Env)
	dir := cmd.Dir
	if dir == "" {
		dir = ws
	}
	timeout := j.Scope.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if spec.Resume {
		say("resuming session %s", spec.SessionID)
	}
	for _, w := range rec.Warnings {
		say("warning: %s", w)
	}

	attempts := 1 + max(j.Scope.Retries, 0)
	var a attempt
	for n := 1; ; n++ {
		rec.Attempt = n
		if ctx.Err() != nil {
			a = attempt{outcome: OutcomeFailed, reason: ReasonInterrupted, message: "leo stopped before the run started"}
			break
		}
		say("attempt %d of %d: %s in %s, timeout %s", n, attempts, argv[0], dir, timeout)
		a = r.attempt(ctx, streamer, process{argv: argv, env: env.list(), dir: dir, timeout: timeout, started: j.Started}, lg)
		say("attempt %d: %s", n, a.summary())
		if a.final() || n == attempts {
			break
		}
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("attempt %d: %s", n, a.summary()))
		wait := r.backoff(n)
		say("retrying in %s", wait)
		if !r.sleep(ctx, wait) {
			a = attempt{outcome: OutcomeFailed, reason: ReasonInterrupted,
				message: fmt.Sprintf("leo stopped while waiting to retry (attempt %d of %d)", n+1, attempts)}
			break
		}
	}
	rec.SessionID = a.res.SessionID
	if rec.SessionID == "" && spec.Resume {
		rec.SessionID = spec.SessionID
	}
	rec.Reply = FirstLines(a.res.Reply, ReplyMaxLines, ReplyMaxBytes)
	rec.Warnings = append(rec.Warnings, a.res.Warnings...)
	rec.Usage, rec.CostUSD = a.res.Usage, a.res.CostUSD
	return end(a)
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

// env is an environment as an ordered set of variables: later writes win.
type env struct {
	keys []string
	vals map[string]string
}

func newEnv(base []string) *env {
	if base == nil {
		base = os.Environ()
	}
	e := &env{vals: make(map[string]string, len(base)+8)}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			e.set(k, v)
		}
	}
	return e
}

func (e *env) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *env) overlay(m map[string]string) {
	for k, v := range m {
		e.set(k, v)
	}
}

func (e *env) list() []string {
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

func (e *env) asMap() map[string]string {
	out := make(map[string]string, len(e.vals))
	for k, v := range e.vals {
		out[k] = v
	}
	return out
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
