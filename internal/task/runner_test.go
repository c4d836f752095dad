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

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// spied wraps an adapter so a test sees what the runner fed its event
// stream: the longest line of every run.
type spied struct {
	harness.Harness
	mu      sync.Mutex
	longest int
}

func (s *spied) NewEventStream() harness.EventStream {
	return &spyStream{EventStream: s.Harness.(harness.EventStreamer).NewEventStream(), s: s}
}

type spyStream struct {
	harness.EventStream
	s *spied
}

func (st *spyStream) Line(line []byte) {
	st.s.mu.Lock()
	st.s.longest = max(st.s.longest, len(line))
	st.s.mu.Unlock()
	st.EventStream.Line(line)
}

func (s *spied) longestLine() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.longest
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
	h       *spied
	scope   *config.Resolved
}

// newRig sets up runs of a task on harness name.
func newRig(t *testing.T, name string) *rig {
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
	h, ok := harness.Lookup(name)
	if !ok {
		t.Fatalf("%s adapter not registered", name)
	}
	g.h = &spied{Harness: h}
	g.scope = &config.Resolved{
		Scope: "tasks.brief", Name: "brief", Harness: g.h, HarnessName: name,
		Options: harness.Options{}, Env: map[string]string{}, Workspace: g.ws,
		Timeout: time.Hour, Runtime: config.RuntimeOneshot,
	}
	g.r = &Runner{
		Resolver: binpath.Resolver{PathFirst: fake},
		Clock:    g.clk,
		LogDir:   filepath.Join(root, "state", "logs"),
		Environ: []string{
			// Every place a harness keeps its sessions, so neither the fake
			// nor the adapters' lookups see the test process's own.
			"HOME=" + g.home, "PATH=" + os.Getenv("PATH"),
			"CLAUDE_CONFIG_DIR=" + filepath.Join(g.home, ".claude"),
			"CODEX_HOME=" + filepath.Join(g.home, ".codex"),
			"XDG_DATA_HOME=" + filepath.Join(g.home, ".local", "share"),
			"XDG_CONFIG_HOME=" + filepath.Join(g.home, ".config"),
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
	Argv    []string `json:"argv"`
	PID     int      `json:"pid"`
	LeoTask string   `json:"leo_task"`
	Event   string   `json:"event"`
	Child   int      `json:"child"`
	Path    string   `json:"path"`
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

// argvs are the argv of each headless run the fake saw: the ones with the
// prompt (an adapter may run its program to look a session up).
func (g *rig) argvs() [][]string {
	var out [][]string
	for _, e := range g.fakeEntries() {
		if slices.ContainsFunc(e.Argv, func(a string) bool { return strings.Contains(a, "summarise the inbox") }) {
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

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestRunInterruptedWhenLeoStops(t *testing.T) {
	g := newRig(t, "claude")
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
	g := newRig(t, "claude")
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
	g := newRig(t, "claude")
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
			g := newRig(t, "claude")
			h, _ := harness.Lookup(name)
			g.scope.Harness, g.scope.HarnessName = h, name
			g.scope.Retries = 3
			g.r.Resolver = noPath
			g.r.Backoff = func(int) time.Duration { t.Error("a missing harness is retried"); return 0 }
			rec := g.wait(g.run(context.Background(), g.job()))
			if name == "claude" {
				wantOutcome(t, rec, OutcomeFailed, ReasonClaudeNotFound)
				if rec.Message != claude.NotFoundMessage {
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

// A prompt no program can take as an argument (a NUL byte; more than
// Linux's 128 KiB per argument) fails the run as a config error naming
// the prompt file, without starting or retrying anything.
func TestRunPromptThatCannotBeAnArgument(t *testing.T) {
	for name, prompt := range map[string]string{
		"nul":  "before\x00after",
		"huge": strings.Repeat("0123456789abcdef", 1<<16), // 1 MiB
	} {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, "claude")
			g.scope.Retries = 2
			g.r.Backoff = func(int) time.Duration { t.Error("a prompt that cannot be passed is retried"); return 0 }
			j := g.job()
			j.Prompt = prompt
			rec := g.wait(g.run(context.Background(), j))
			wantOutcome(t, rec, OutcomeFailed, ReasonConfigError)
			if !strings.HasPrefix(rec.Message, "tasks.brief.prompt_file: the prompt") || rec.Attempt != 1 {
				t.Fatalf("record %+v: want a config error naming the prompt file", rec)
			}
			if len(g.fakeEntries()) != 0 {
				t.Fatalf("the harness was started: %+v", g.fakeEntries())
			}
		})
	}
}

// Each attempt's process group is told as it starts (the service keeps it
// in state, for the daemon after a crash to kill).
func TestRunTellsTheProcessGroup(t *testing.T) {
	g := newRig(t, "claude")
	var mu sync.Mutex
	var groups []int
	j := g.job()
	j.Started = func(pgid int) { mu.Lock(); groups = append(groups, pgid); mu.Unlock() }
	rec := g.wait(g.run(context.Background(), j))
	wantOutcome(t, rec, OutcomeSucceeded, "")
	var pids []int
	for _, e := range g.fakeEntries() {
		if e.PID > 0 && !slices.Contains(pids, e.PID) {
			pids = append(pids, e.PID)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(groups) != 1 || !slices.Contains(pids, groups[0]) {
		t.Fatalf("groups told %v, the harness ran as %v", groups, pids)
	}
}

func TestRunEnvNeverInArgv(t *testing.T) {
	const secret = "sk-very-secret-value-0123456789"
	forEachHarness(t, func(t *testing.T, g *rig) {
		g.scope.Env = map[string]string{"LEO_TEST_API_KEY": secret, "FAKE_SCENARIO": "turn_failed"}
		j := g.job()
		first := g.wait(g.run(context.Background(), g.job()))
		// turn_failed came through the task's env: the environment reached the run.
		wantOutcome(t, first, OutcomeFailed, ReasonHarnessError)
		// A resuming run too (some adapters run their program to look a session up).
		g.scope.Env["FAKE_SCENARIO"] = "success"
		j.SessionID = first.SessionID
		g.clk.Advance(time.Second)
		rec := g.wait(g.run(context.Background(), j))
		wantOutcome(t, rec, OutcomeSucceeded, "")
		if len(g.argvs()) != 2 {
			t.Fatalf("fake ran %d times", len(g.argvs()))
		}
		for _, e := range g.fakeEntries() {
			// Every run is marked as the task's (handover refuses it).
			if len(e.Argv) > 0 && e.LeoTask != "brief" {
				t.Fatalf("a run of task brief has LEO_TASK=%q", e.LeoTask)
			}
			for _, a := range e.Argv {
				if strings.Contains(a, secret) || strings.Contains(a, "FAKE_SCENARIO") {
					t.Fatalf("an env value is in argv: %q", e.Argv)
				}
			}
		}
		for _, r := range []Record{first, rec} {
			log, err := ReadLog(g.r.LogDir, "brief", r.ID)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(r)
			if strings.Contains(log.Text, secret) || strings.Contains(string(b), secret) {
				t.Fatal("an env value is in the run log or the record")
			}
		}
	})
}
func TestRunHugeLine(t *testing.T) {
	forEachHarness(t, func(t *testing.T, g *rig) {
		g.scope.Env = map[string]string{"FAKE_SCENARIO": "huge_line", "FAKE_HUGE_LINE_BYTES": "9000000"}
		rec := g.wait(g.run(context.Background(), g.job()))
		// The events after the huge line were read: the run succeeded.
		wantOutcome(t, rec, OutcomeSucceeded, "")
		if got := g.h.longestLine(); got != MaxLineBytes {
			t.Fatalf("longest line given to the stream: %d bytes, want it cut to %d", got, MaxLineBytes)
		}
		// ReadLog shows only the end of so big a log: read the file.
		b, err := os.ReadFile(LogPath(g.r.LogDir, "brief", rec.ID))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("[leo: line cut at 8388608 bytes]\n")) || !bytes.Contains(b, []byte("echo: summarise the inbox")) {
			t.Fatal("the log does not say the line was cut, or lacks what followed it")
		}
	})
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

func TestRunLogFileAndRetention(t *testing.T) {
	g := newRig(t, "claude")
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
	g := newRig(t, "claude")
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

// forEachHarness runs f for every registered adapter on the fake harnesses.
func forEachHarness(t *testing.T, f func(t *testing.T, g *rig)) {
	for _, name := range testutil.Harnesses() {
		t.Run(name, func(t *testing.T) { f(t, newRig(t, name)) })
	}
}

func TestRunSucceeds(t *testing.T) {
	cost := map[string]float64{"claude": 0.0012, "opencode": 0.0008, "pi": 0.0004} // codex reports none
	forEachHarness(t, func(t *testing.T, g *rig) {
		name := g.scope.HarnessName
		j := g.job()
		j.Trigger, j.Due = TriggerSchedule, g.clk.Now().Add(-time.Second)
		rec := g.wait(g.run(context.Background(), j))
		wantOutcome(t, rec, OutcomeSucceeded, "")
		wantExit(t, rec, 0)
		if rec.ID != RunID(g.clk.Now()) || rec.Task != "brief" || rec.Trigger != TriggerSchedule || !rec.Due.Equal(j.Due) {
			t.Fatalf("record names the run wrong: %+v", rec)
		}
		if rec.Harness != name || rec.Attempt != 1 || rec.Start.IsZero() || rec.End.IsZero() || rec.Message != "" {
			t.Fatalf("record: %+v", rec)
		}
		if rec.SessionID == "" {
			t.Fatal("no session id recorded")
		}
		if rec.Reply != "echo: summarise the inbox" {
			t.Fatalf("reply %q", rec.Reply)
		}
		if rec.Usage == nil || rec.Usage.InputTokens == 0 || rec.Usage.OutputTokens == 0 {
			t.Fatalf("usage %+v", rec.Usage)
		}
		if want, ok := cost[name]; ok != (rec.CostUSD != nil) || ok && *rec.CostUSD != want {
			t.Fatalf("cost %v, want %v", rec.CostUSD, want)
		}
		if err := check(&rec); err != nil {
			t.Fatalf("history would refuse the record: %v", err)
		}
		argvs := g.argvs()
		if len(argvs) != 1 || !slices.Contains(argvs[0], "summarise the inbox") {
			t.Fatalf("fake ran with %q, want one headless run of the prompt", argvs)
		}
	})
}

func TestRunOutcomes(t *testing.T) {
	type want struct {
		outcome Outcome
		reason  Reason
		exit    int
		message string
	}
	crash := map[string]string{"FAKE_SCENARIO": "hang", "FAKE_CRASH_AFTER_MS": "0"}
	cases := []struct {
		name string
		env  map[string]string
		want map[string]want // by harness
	}{
		{"turn failed", map[string]string{"FAKE_SCENARIO": "turn_failed"}, map[string]want{
			"claude":   {OutcomeFailed, ReasonHarnessError, 1, "turn failed (fake)"},
			"codex":    {OutcomeFailed, ReasonHarnessError, 1, "stream disconnected before completion (fake)"},
			"opencode": {OutcomeFailed, ReasonHarnessError, 1, "provider returned 500 (fake)"},
			"pi":       {OutcomeFailed, ReasonHarnessError, 0, "400 fake: scripted error"}, // pi exits 0
		}},
		// A usage or rate limit is limited, not failed (TestRunLimitedIsRecordedLimited).
		{"limited", map[string]string{"FAKE_SCENARIO": "limited"}, map[string]want{
			"claude":   {OutcomeLimited, ReasonUsageLimit, 1, "API Error: Request rejected (429)"},
			"codex":    {OutcomeLimited, ReasonUsageLimit, 1, "hit your usage limit"},
			"opencode": {OutcomeLimited, ReasonUsageLimit, 1, "Rate limit reached for requests"},
			"pi":       {OutcomeLimited, ReasonUsageLimit, 0, "429 Rate limit reached"}, // pi exits 0
		}},
		// An error the stream states fails the run even when the process exits 0.
		{"error event then exit 0", map[string]string{"FAKE_SCENARIO": "stream_error_exit0"}, map[string]want{
			"claude":   {OutcomeFailed, ReasonHarnessError, 0, "stream error (fake)"},
			"codex":    {OutcomeFailed, ReasonHarnessError, 0, "stream disconnected (fake)"},
			"opencode": {OutcomeFailed, ReasonHarnessError, 0, "stream error (fake)"},
			"pi":       {OutcomeFailed, ReasonHarnessError, 0, "400 fake: scripted error"},
		}},
		// claude's is_error fails a "success" result; codex recovers from an
		// error item and completes its turn; opencode's reply only talks of one.
		{"error reported as success", map[string]string{"FAKE_SCENARIO": "error_as_success"}, map[string]want{
			"claude":   {OutcomeFailed, ReasonHarnessError, 0, "API Error: 500"},
			"codex":    {OutcomeSucceeded, "", 0, ""},
			"opencode": {OutcomeSucceeded, "", 0, ""},
			"pi":       {OutcomeSucceeded, "", 0, ""},
		}},
		// codex's stream itself calls a stream without an end an error.
		{"non-zero exit without a stated error", crash, map[string]want{
			"claude":   {OutcomeFailed, ReasonExitStatus, 3, "exited with status 3: fake: crashing after 0 ms"},
			"codex":    {OutcomeFailed, ReasonHarnessError, 3, "the stream ended without turn.completed"},
			"opencode": {OutcomeFailed, ReasonExitStatus, 3, "exited with status 3: fake: crashing after 0 ms"},
			"pi":       {OutcomeFailed, ReasonExitStatus, 3, "exited with status 3: fake: crashing after 0 ms"},
		}},
		// opencode's stream counts EOF after the session started as the end
		// of its turn.
		{"exit 0 without the end event", map[string]string{"FAKE_SCENARIO": "truncated"}, map[string]want{
			"claude":   {OutcomeFailed, ReasonHarnessError, 0, ""},
			"codex":    {OutcomeFailed, ReasonHarnessError, 0, ""},
			"opencode": {OutcomeSucceeded, "", 0, ""},
			"pi":       {OutcomeFailed, ReasonHarnessError, 0, ""},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range testutil.Harnesses() {
				w, ok := tc.want[name]
				if !ok {
					continue
				}
				t.Run(name, func(t *testing.T) {
					g := newRig(t, name)
					// The scenario reaches the harness through the task's env:
					// only the process environment carries it.
					g.scope.Env = tc.env
					rec := g.wait(g.run(context.Background(), g.job()))
					wantOutcome(t, rec, w.outcome, w.reason)
					wantExit(t, rec, w.exit)
					if !strings.Contains(rec.Message, w.message) {
						t.Fatalf("message %q, want it to contain %q", rec.Message, w.message)
					}
					if err := check(&rec); err != nil {
						t.Fatalf("history would refuse the record: %v", err)
					}
				})
			}
		})
	}
}

func TestRunTimeoutKillsTheProcessGroup(t *testing.T) {
	forEachHarness(t, func(t *testing.T, g *rig) {
		g.scope.Timeout = 10 * time.Minute
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
	})
}

func TestRunResume(t *testing.T) {
	forEachHarness(t, func(t *testing.T, g *rig) {
		name := g.scope.HarnessName
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
		if argv := g.argvs()[1]; !testutil.IsResume(name, argv) || !slices.Contains(argv, first.SessionID) {
			t.Fatalf("second run %q does not resume %s", argv, first.SessionID)
		}
		if argv := g.argvs()[0]; testutil.IsResume(name, argv) {
			t.Fatalf("first run %q resumes", argv)
		}
	})
}

func TestRunVanishedSessionStartsFresh(t *testing.T) {
	forEachHarness(t, func(t *testing.T, g *rig) {
		name := g.scope.HarnessName
		// A conversation that did exist: its files are gone since.
		first := g.wait(g.run(context.Background(), g.job()))
		wantOutcome(t, first, OutcomeSucceeded, "")
		gone := first.SessionID
		home := filepath.Join(g.home, "moved")
		g.r.Environ = slices.DeleteFunc(slices.Clone(g.r.Environ), func(kv string) bool {
			return strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=") ||
				strings.HasPrefix(kv, "CODEX_HOME=") || strings.HasPrefix(kv, "XDG_")
		})
		g.r.Environ = append(g.r.Environ, "HOME="+home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
			"CODEX_HOME="+filepath.Join(home, ".codex"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"))

		g.clk.Advance(time.Minute)
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
		if argv := g.argvs()[1]; testutil.IsResume(name, argv) || slices.Contains(argv, gone) {
			t.Fatalf("run %q resumes the vanished session", argv)
		}
	})
}

// TestTaskEnvPATHIsTheRunsPATHNotTheLookup: a task's env: PATH is the PATH
// the harness process gets (and what it starts); the harness binary itself
// is found the way the daemon finds it, not through that PATH.
func TestTaskEnvPATHIsTheRunsPATHNotTheLookup(t *testing.T) {
	g := newRig(t, "claude")
	own := t.TempDir() // holds no harness
	g.scope.Env["PATH"] = own
	rec := g.wait(g.run(context.Background(), g.job()))
	wantOutcome(t, rec, OutcomeSucceeded, "")
	var launches []fakeEntry
	for _, e := range g.fakeEntries() {
		if len(e.Argv) > 0 {
			launches = append(launches, e)
		}
	}
	if len(launches) != 1 || launches[0].Path != own {
		t.Fatalf("launches %+v: want one, with PATH %q", launches, own)
	}
}
