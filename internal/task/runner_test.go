package task

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// claudeStream reads claude's stream-json as far as these tests need, for
// as long as the claude adapter has no EventStreamer of its own: the
// session id, and the final result event (is_error fails the run even with
// subtype success).
type claudeStream struct {
	longest int
	lines   int
	res     harness.RunResult
}

func (s *claudeStream) Line(line []byte) {
	s.lines++
	s.longest = max(s.longest, len(line))
	var ev struct {
		Type      string          `json:"type"`
		SessionID string          `json:"session_id"`
		IsError   bool            `json:"is_error"`
		Subtype   string          `json:"subtype"`
		Result    string          `json:"result"`
		Cost      *float64        `json:"total_cost_usd"`
		Usage     *harness.Usage  `json:"usage"`
		Errors    json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	if ev.SessionID != "" {
		s.res.SessionID = ev.SessionID
	}
	if ev.Type != "result" {
		return
	}
	s.res.Reply, s.res.CostUSD, s.res.Usage = ev.Result, ev.Cost, ev.Usage
	if ev.IsError || ev.Subtype != "success" {
		s.res.Error = "claude: " + ev.Subtype + ": " + ev.Result
		return
	}
	s.res.Succeeded = true
}

func (s *claudeStream) Result() harness.RunResult { return s.res }

// streamed gives an adapter an event stream when it has none yet and keeps
// every stream it made, so a test can look at what the runner fed it.
type streamed struct {
	harness.Harness
	mu      sync.Mutex
	streams []*claudeStream
}

func (s *streamed) NewEventStream() harness.EventStream {
	st := &claudeStream{}
	s.mu.Lock()
	s.streams = append(s.streams, st)
	s.mu.Unlock()
	return st
}

func (s *streamed) last() *claudeStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams[len(s.streams)-1]
}

// rig is one task run setup: the fake harnesses first on PATH, a private
// HOME, a fake clock, and the fake's own log of what it was run with.
type rig struct {
	t       *testing.T
	clk     *clock.Fake
	r       *Runner
	home    string
	ws      string
	fakeLog string
	h       *streamed
	scope   *config.Resolved
}

func newRig(t *testing.T) *rig {
	t.Helper()
	fake := testutil.FakeHarnessDir(t)
	root := t.TempDir()
	g := &rig{
		t:       t,
		clk:     clock.NewFake(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)),
		home:    filepath.Join(root, "home"),
		ws:      filepath.Join(root, "ws"),
		fakeLog: filepath.Join(root, "fake.log"),
	}
	claude, ok := harness.Lookup("claude")
	if !ok {
		t.Fatal("claude adapter not registered")
	}
	g.h = &streamed{Harness: claude}
	g.scope = &config.Resolved{
		Scope: "tasks.brief", Name: "brief", Harness: g.h, HarnessName: "claude",
		Options: harness.Options{}, Env: map[string]string{}, Workspace: g.ws,
		Timeout: time.Hour, Runtime: config.RuntimeOneshot,
	}
	g.r = &Runner{
		Resolver: binpath.Resolver{PathFirst: fake},
		Clock:    g.clk,
		LogDir:   filepath.Join(root, "state", "logs"),
		Environ: []string{
			"HOME=" + g.home, "PATH=" + os.Getenv("PATH"),
			"FAKE_HARNESS_LOG=" + g.fakeLog, "FAKE_TURN_MS=0",
		},
	}
	return g
}

func (g *rig) job() Job {
	return Job{Task: "brief", Trigger: TriggerManual, Scope: g.scope, Prompt: "summarise the inbox"}
}

// run runs j in the background; the record arrives on the channel.
func (g *rig) run(ctx context.Context, j Job) <-chan Record {
	ch := make(chan Record, 1)
	go func() { ch <- g.r.Run(ctx, j) }()
	return ch
}

func (g *rig) wait(ch <-chan Record) Record {
	g.t.Helper()
	select {
	case rec := <-ch:
		return rec
	case <-time.After(30 * time.Second):
		g.t.Fatal("the run did not end")
		return Record{}
	}
}

type fakeEntry struct {
	Argv  []string `json:"argv"`
	PID   int      `json:"pid"`
	Event string   `json:"event"`
	Child int      `json:"child"`
}

func (g *rig) fakeEntries() []fakeEntry {
	b, err := os.ReadFile(g.fakeLog)
	if err != nil {
		return nil
	}
	var out []fakeEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e fakeEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

func (g *rig) argvs() [][]string {
	var out [][]string
	for _, e := range g.fakeEntries() {
		if e.Argv != nil {
			out = append(out, e.Argv)
		}
	}
	return out
}

func wantOutcome(t *testing.T, rec Record, outcome Outcome, reason Reason) {
	t.Helper()
	if rec.Outcome != outcome || rec.Reason != reason {
		t.Fatalf("outcome %s (%s) %q, want %s (%s)", rec.Outcome, rec.Reason, rec.Message, outcome, reason)
	}
}

func wantExit(t *testing.T, rec Record, code int) {
	t.Helper()
	if rec.ExitCode == nil || *rec.ExitCode != code {
		t.Fatalf("exit code %v, want %d", rec.ExitCode, code)
	}
}

func TestRunSucceeds(t *testing.T) {
	g := newRig(t)
	j := g.job()
	j.Trigger, j.Due = TriggerSchedule, g.clk.Now().Add(-time.Second)
	rec := g.wait(g.run(context.Background(), j))
	wantOutcome(t, rec, OutcomeSucceeded, "")
	wantExit(t, rec, 0)
	if rec.ID != RunID(g.clk.Now()) || rec.Task != "brief" || rec.Trigger != TriggerSchedule || !rec.Due.Equal(j.Due) {
		t.Fatalf("record names the run wrong: %+v", rec)
	}
	if rec.Harness != "claude" || rec.Attempt != 1 || rec.Start.IsZero() || rec.End.IsZero() {
		t.Fatalf("record: %+v", rec)
	}
	if uuid.Validate(rec.SessionID) != nil {
		t.Fatalf("session id %q, want the stream's uuid", rec.SessionID)
	}
	if rec.Reply != "echo: summarise the inbox" {
		t.Fatalf("reply %q", rec.Reply)
	}
	if rec.Usage == nil || rec.Usage.InputTokens != 10 || rec.Usage.OutputTokens != 3 || rec.CostUSD == nil || *rec.CostUSD != 0.0012 {
		t.Fatalf("usage %+v cost %v", rec.Usage, rec.CostUSD)
	}
	if err := check(&rec); err != nil {
		t.Fatalf("history would refuse the record: %v", err)
	}
	argvs := g.argvs()
	if len(argvs) != 1 || !slices.Contains(argvs[0], "-p") || !slices.Contains(argvs[0], "summarise the inbox") {
		t.Fatalf("fake ran with %q, want one headless claude run of the prompt", argvs)
	}
}

func TestRunOutcomes(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		outcome Outcome
		reason  Reason
		exit    int // -1: no exit code
		message string
	}{
		{"turn failed", map[string]string{"FAKE_SCENARIO": "turn_failed"}, OutcomeFailed, ReasonHarnessError, 1, "turn failed (fake)"},
		{"error event then exit 0", map[string]string{"FAKE_SCENARIO": "stream_error_exit0"}, OutcomeFailed, ReasonHarnessError, 0, "stream error (fake)"},
		{"is_error with subtype success", map[string]string{"FAKE_SCENARIO": "error_as_success"}, OutcomeFailed, ReasonHarnessError, 0, "API Error: 500"},
		{"non-zero exit without a stated error", map[string]string{"FAKE_SCENARIO": "hang", "FAKE_CRASH_AFTER_MS": "0"}, OutcomeFailed, ReasonExitStatus, 3, "exited with status 3: fake: crashing after 0 ms"},
		{"exit 0 without a result", map[string]string{"FAKE_SCENARIO": "hang", "FAKE_CRASH_AFTER_MS": "0", "FAKE_CRASH_CODE": "0"}, OutcomeFailed, ReasonHarnessError, 0, "the stream ended without a result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t)
			// The scenario reaches the harness through the task's env: only
			// the process environment carries it.
			g.scope.Env = tc.env
			rec := g.wait(g.run(context.Background(), g.job()))
			wantOutcome(t, rec, tc.outcome, tc.reason)
			wantExit(t, rec, tc.exit)
			if !strings.Contains(rec.Message, tc.message) {
				t.Fatalf("message %q, want it to contain %q", rec.Message, tc.message)
			}
			if err := check(&rec); err != nil {
				t.Fatalf("history would refuse the record: %v", err)
			}
		})
	}
}

// processGone: kill(pid, 0) finds no process (a zombie still counts, so
// this waits for its reaping too).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestRunTimeoutKillsTheProcessGroup(t *testing.T) {
	g := newRig(t)
	g.scope.Timeout = 10 * time.Minute
	g.scope.Retries = 0
	g.scope.Env = map[string]string{"FAKE_SCENARIO": "hang", "FAKE_HANG_CHILD": "1"}
	ch := g.run(context.Background(), g.job())

	var leader, child int
	testutil.WaitFor(t, 10*time.Second, func() bool {
		leader, child = 0, 0
		for _, e := range g.fakeEntries() {
			if e.Event == "hang_child" {
				leader, child = e.PID, e.Child
			}
		}
		return child != 0 && g.clk.Pending() == 1
	}, "the fake hanging with a child, and the run's timeout armed")
	g.clk.Advance(10 * time.Minute)
	rec := g.wait(ch)
	wantOutcome(t, rec, OutcomeTimeout, ReasonTimeout)
	if rec.ExitCode != nil {
		t.Fatalf("a killed run has no exit code, got %d", *rec.ExitCode)
	}
	if !strings.Contains(rec.Message, "10m0s") {
		t.Fatalf("message %q does not name the timeout", rec.Message)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return processGone(leader) && processGone(child) },
		"the harness and the child it forked gone")
}

func TestRunInterruptedWhenLeoStops(t *testing.T) {
	g := newRig(t)
	g.scope.Retries = 3
	g.scope.Env = map[string]string{"FAKE_SCENARIO": "hang"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := g.run(ctx, g.job())
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(g.argvs()) == 1 }, "the fake started")
	cancel()
	rec := g.wait(ch)
	wantOutcome(t, rec, OutcomeFailed, ReasonInterrupted)
	if rec.Attempt != 1 {
		t.Fatalf("attempt %d: an interrupted run is not retried", rec.Attempt)
	}
	pid := g.fakeEntries()[0].PID
	testutil.WaitFor(t, 10*time.Second, func() bool { return processGone(pid) }, "the harness gone")
}

func TestRunRetriesWithBackoff(t *testing.T) {
	g := newRig(t)
	g.scope.Retries = 2
	g.scope.Env = map[string]string{"FAKE_SCENARIO": "turn_failed"}
	retries := make(chan int, 10)
	g.r.Backoff = func(n int) time.Duration {
		retries <- n
		return time.Duration(n) * time.Minute
	}
	start := g.clk.Now()
	ch := g.run(context.Background(), g.job())
	for want := 1; want <= 2; want++ {
		select {
		case n := <-retries:
			if n != want {
				t.Fatalf("backoff asked for retry %d, want %d", n, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no retry %d", want)
		}
		// The attempt's timeout timer is stopped; the one armed timer is
		// the backoff.
		testutil.WaitFor(t, 10*time.Second, func() bool { return g.clk.Pending() == 1 }, "the backoff armed")
		if n := len(g.argvs()); n != want {
			t.Fatalf("%d attempts ran before retry %d's backoff ended", n, want)
		}
		g.clk.Advance(time.Duration(want) * time.Minute)
	}
	rec := g.wait(ch)
	wantOutcome(t, rec, OutcomeFailed, ReasonHarnessError)
	if rec.Attempt != 3 || len(g.argvs()) != 3 {
		t.Fatalf("attempt %d, %d starts: want the third attempt to decide", rec.Attempt, len(g.argvs()))
	}
	if len(rec.Warnings) != 2 || !strings.HasPrefix(rec.Warnings[0], "attempt 1: failed (harness_error)") || !strings.HasPrefix(rec.Warnings[1], "attempt 2: ") {
		t.Fatalf("warnings %q, want the two earlier failures", rec.Warnings)
	}
	if got := g.clk.Since(start); got != 3*time.Minute {
		t.Fatalf("the retries waited %s on the clock, want 1m+2m", got)
	}
}

func TestRunRetrySucceeds(t *testing.T) {
	g := newRig(t)
	g.scope.Retries = 5
	// The first attempt fails for want of a result; the second finds the
	// marker the first left and succeeds (the fake's env cannot change
	// between attempts, so a wrapper script decides).
	marker := filepath.Join(t.TempDir(), "failed-once")
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ ! -e '" + marker + "' ]; then : > '" + marker + "'; exit 7; fi\nexec '" +
		filepath.Join(testutil.FakeHarnessDir(t), "claude") + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g.r.Resolver = binpath.Resolver{PathFirst: dir}
	backoff := make(chan struct{}, 1)
	g.r.Backoff = func(int) time.Duration { backoff <- struct{}{}; return time.Second }
	ch := g.run(context.Background(), g.job())
	select {
	case <-backoff:
	case <-time.After(30 * time.Second):
		t.Fatal("no retry")
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return g.clk.Pending() == 1 }, "the backoff armed")
	g.clk.Advance(time.Second)
	rec := g.wait(ch)
	wantOutcome(t, rec, OutcomeSucceeded, "")
	if rec.Attempt != 2 || len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], "attempt 1: failed (exit_status): claude exited with status 7") {
		t.Fatalf("attempt %d warnings %q", rec.Attempt, rec.Warnings)
	}
}

func TestDefaultBackoff(t *testing.T) {
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if got := DefaultBackoff(i + 1); got != w {
			t.Errorf("DefaultBackoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := DefaultBackoff(1000); got != 5*time.Minute {
		t.Errorf("DefaultBackoff(1000) = %s", got)
	}
}

func TestRunHarnessNotFound(t *testing.T) {
	empty := t.TempDir()
	noPath := binpath.Resolver{PathFirst: empty, Getenv: func(string) string { return "" }}
	for _, name := range testutil.Harnesses() {
		t.Run(name, func(t *testing.T) {
			g := newRig(t)
			h, _ := harness.Lookup(name)
			g.scope.Harness, g.scope.HarnessName = &streamed{Harness: h}, name
			g.scope.Retries = 3
			g.r.Resolver = noPath
			g.r.Backoff = func(int) time.Duration { t.Error("a missing harness is retried"); return 0 }
			rec := g.wait(g.run(context.Background(), g.job()))
			if name == "claude" {
				wantOutcome(t, rec, OutcomeFailed, ReasonClaudeNotFound)
				if rec.Message != api.ClaudeNotFoundMessage {
					t.Fatalf("message %q, want the contract text", rec.Message)
				}
			} else {
				wantOutcome(t, rec, OutcomeFailed, ReasonHarnessNotFound)
				if !strings.Contains(rec.Message, h.Binary()+" CLI not found") || !strings.Contains(rec.Message, empty) {
					t.Fatalf("message %q does not name the binary and the PATH searched", rec.Message)
				}
			}
			if rec.Attempt != 1 || rec.Harness != name {
				t.Fatalf("record %+v", rec)
			}
			log, err := ReadLog(g.r.LogDir, "brief", rec.ID)
			if err != nil || !strings.Contains(log.Text, rec.Message) {
				t.Fatalf("the run's log %q (%v) does not say why it failed", log.Text, err)
			}
		})
	}
}

func TestRunEnvNeverInArgv(t *testing.T) {
	g := newRig(t)
	const secret = "sk-very-secret-value-0123456789"
	g.scope.Env = map[string]string{"ANTHROPIC_API_KEY": secret, "FAKE_SCENARIO": "turn_failed"}
	rec := g.wait(g.run(context.Background(), g.job()))
	// turn_failed came through the task's env: the environment reached the run.
	wantOutcome(t, rec, OutcomeFailed, ReasonHarnessError)
	argvs := g.argvs()
	if len(argvs) != 1 {
		t.Fatalf("fake ran %d times", len(argvs))
	}
	for _, a := range argvs[0] {
		if strings.Contains(a, secret) || strings.Contains(a, "FAKE_SCENARIO") {
			t.Fatalf("an env value is in argv: %q", argvs[0])
		}
	}
	log, err := ReadLog(g.r.LogDir, "brief", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	if strings.Contains(log.Text, secret) || strings.Contains(string(b), secret) {
		t.Fatal("an env value is in the run log or the record")
	}
}

func TestRunHugeLine(t *testing.T) {
	g := newRig(t)
	g.scope.Env = map[string]string{"FAKE_HUGE_LINE_BYTES": "9000000"}
	rec := g.wait(g.run(context.Background(), g.job()))
	// The events after the huge line were read: the run succeeded.
	wantOutcome(t, rec, OutcomeSucceeded, "")
	st := g.h.last()
	if st.longest != MaxLineBytes {
		t.Fatalf("longest line given to the stream: %d bytes, want it cut to %d", st.longest, MaxLineBytes)
	}
	// ReadLog shows only the end of so big a log: read the file.
	b, err := os.ReadFile(LogPath(g.r.LogDir, "brief", rec.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("[leo: line cut at 8388608 bytes]\n")) || !bytes.Contains(b, []byte(`"type":"result"`)) {
		t.Fatal("the log does not say the line was cut, or lacks what followed it")
	}
}

func TestReadLines(t *testing.T) {
	const max = 100
	big := strings.Repeat("a", 300<<10) // longer than the reader's buffer
	cases := []struct {
		in   string
		want []string
		cuts []bool
	}{
		{"", nil, nil},
		{"one\ntwo\n", []string{"one", "two"}, []bool{false, false}},
		{"no newline", []string{"no newline"}, []bool{false}},
		{"\n\n", []string{"", ""}, []bool{false, false}},
		{strings.Repeat("b", max) + "\nx\n", []string{strings.Repeat("b", max), "x"}, []bool{false, false}},
		{strings.Repeat("b", max+1) + "\nx\n", []string{strings.Repeat("b", max), "x"}, []bool{true, false}},
		{big + "\n{}\n" + big, []string{big[:max], "{}", big[:max]}, []bool{true, false, true}},
		{"bin\x00ary\r\x1b[2J\n", []string{"bin\x00ary\r\x1b[2J"}, []bool{false}},
	}
	for i, tc := range cases {
		var got []string
		var cuts []bool
		readLines(strings.NewReader(tc.in), max, func(line []byte, cut bool) {
			got = append(got, string(line))
			cuts = append(cuts, cut)
		})
		if !slices.Equal(got, tc.want) || !slices.Equal(cuts, tc.cuts) {
			t.Errorf("case %d: lines %d %v, want %d %v", i, len(got), cuts, len(tc.want), tc.cuts)
		}
	}
}

func TestRunResume(t *testing.T) {
	g := newRig(t)
	first := g.wait(g.run(context.Background(), g.job()))
	wantOutcome(t, first, OutcomeSucceeded, "")

	g.clk.Advance(time.Minute)
	j := g.job()
	j.SessionID = first.SessionID
	rec := g.wait(g.run(context.Background(), j))
	wantOutcome(t, rec, OutcomeSucceeded, "")
	if rec.SessionID != first.SessionID || len(rec.Warnings) != 0 {
		t.Fatalf("session %q warnings %q, want %q resumed", rec.SessionID, rec.Warnings, first.SessionID)
	}
	argv := g.argvs()[1]
	if !testutil.IsResume("claude", argv) || !slices.Contains(argv, first.SessionID) {
		t.Fatalf("second run %q does not resume %s", argv, first.SessionID)
	}
}

func TestRunVanishedSessionStartsFresh(t *testing.T) {
	g := newRig(t)
	gone := uuid.NewString()
	j := g.job()
	j.SessionID = gone
	rec := g.wait(g.run(context.Background(), j))
	wantOutcome(t, rec, OutcomeSucceeded, "")
	if rec.SessionID == gone || rec.SessionID == "" {
		t.Fatalf("session %q, want a fresh one", rec.SessionID)
	}
	if len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], "session "+gone+" no longer exists") {
		t.Fatalf("warnings %q", rec.Warnings)
	}
	argv := g.argvs()[0]
	if testutil.IsResume("claude", argv) || slices.Contains(argv, gone) {
		t.Fatalf("run %q resumes the vanished session", argv)
	}
}

func TestRunLogFileAndRetention(t *testing.T) {
	g := newRig(t)
	g.r.LogsKeep = 3
	dir := filepath.Join(g.r.LogDir, "brief")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(stray, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 5 {
		g.clk.Advance(time.Second)
		rec := g.wait(g.run(context.Background(), g.job()))
		wantOutcome(t, rec, OutcomeSucceeded, "")
		ids = append(ids, rec.ID)
		fi, err := os.Stat(LogPath(g.r.LogDir, "brief", rec.ID))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("log mode %v, want 0600", fi.Mode().Perm())
		}
	}
	di, err := os.Stat(dir)
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("log dir mode %v (%v), want 0700", di.Mode().Perm(), err)
	}
	left, err := runLogs(g.r.LogDir, "brief")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, ids[2:]) {
		t.Fatalf("logs left %q, want the newest three %q", left, ids[2:])
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a file that is not a run log was removed: %v", err)
	}
	log, err := ReadLog(g.r.LogDir, "brief", "")
	if err != nil || log.Run != ids[4] {
		t.Fatalf("newest log %q (%v), want %s", log.Run, err, ids[4])
	}
	for _, want := range []string{"task brief, run " + ids[4], "attempt 1 of 1:", `"type":"result"`, "attempt 1: succeeded"} {
		if !strings.Contains(log.Text, want) {
			t.Errorf("log lacks %q:\n%s", want, log.Text)
		}
	}
}

func TestReadLogRefusesOddNames(t *testing.T) {
	logDir := t.TempDir()
	secret := filepath.Join(logDir, "secret.log")
	if err := os.WriteFile(secret, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../secret", "../../etc/passwd", "20250101T000000.000Z/../../secret", "2025-01-01", "20250101T000000.000Z\x00", "20251301T000000.000Z"} {
		_, err := ReadLog(logDir, "brief", id)
		if !api.HasCode(err, api.CodeInvalidArgs) {
			t.Errorf("run id %q: %v, want invalid_args", id, err)
		}
	}
	for _, task := range []string{"..", "../x", "", "A"} {
		_, err := ReadLog(logDir, task, "")
		if !api.HasCode(err, api.CodeInvalidArgs) {
			t.Errorf("task %q: %v, want invalid_args", task, err)
		}
	}
	if _, err := ReadLog(logDir, "brief", ""); !api.HasCode(err, api.CodeNotFound) {
		t.Errorf("no logs: %v, want not_found", err)
	}
	if _, err := ReadLog(logDir, "brief", "20250101T000000.000Z"); !api.HasCode(err, api.CodeNotFound) {
		t.Errorf("missing run: %v, want not_found", err)
	}
}

func TestReadLogShowsTheEndOfAHugeLog(t *testing.T) {
	logDir := t.TempDir()
	id := "20250101T000000.000Z"
	if err := os.MkdirAll(filepath.Join(logDir, "brief"), 0o700); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("z", 999) + "\n"
	body := strings.Repeat(line, ReadLogMaxBytes/len(line)+100) + "the end\n"
	if err := os.WriteFile(LogPath(logDir, "brief", id), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := ReadLog(logDir, "brief", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Text) > ReadLogMaxBytes+200 || !strings.HasPrefix(log.Text, "[leo: the first ") || !strings.HasSuffix(log.Text, "the end\n") {
		t.Fatalf("%d bytes starting %q", len(log.Text), log.Text[:80])
	}
	if rest := log.Text[strings.IndexByte(log.Text, '\n')+1:]; !strings.HasPrefix(rest, line) {
		t.Fatal("the shown part does not start at a line")
	}
}

func TestRunIDShape(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 678_900_000, time.FixedZone("X", 3600))
	if id := RunID(at); id != "20250102T140405.678Z" || !ValidRunID(id) {
		t.Fatalf("RunID = %q", id)
	}
}

func TestRunInterruptedDuringBackoff(t *testing.T) {
	g := newRig(t)
	g.scope.Retries = 3
	g.scope.Env = map[string]string{"FAKE_SCENARIO": "turn_failed"}
	backoff := make(chan struct{}, 1)
	g.r.Backoff = func(int) time.Duration { backoff <- struct{}{}; return time.Minute }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := g.run(ctx, g.job())
	select {
	case <-backoff:
	case <-time.After(30 * time.Second):
		t.Fatal("no retry")
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return g.clk.Pending() == 1 }, "the backoff armed")
	cancel()
	rec := g.wait(ch)
	wantOutcome(t, rec, OutcomeFailed, ReasonInterrupted)
	if len(g.argvs()) != 1 || len(rec.Warnings) != 1 || !strings.HasPrefix(rec.Warnings[0], "attempt 1: failed (harness_error)") {
		t.Fatalf("%d starts, warnings %q: want one attempt, its failure kept", len(g.argvs()), rec.Warnings)
	}
	if !strings.Contains(rec.Message, "waiting to retry") {
		t.Fatalf("message %q", rec.Message)
	}
}
