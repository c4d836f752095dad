// Command fakeharness impersonates the claude, codex, opencode and pi CLIs for
// leo's tests, choosing its role from the name it was run as. As a TUI it
// draws the screens leo's screen readers know, takes bracketed pastes and
// echoes what is submitted; headless it prints the event streams of the
// real tools, with their events' fields and nesting (checked against the
// real captures by TestFakeHeadlessStreamsMatchReal). It writes session
// files where the real tools do, so resume logic can be tested end to end.
//
// Knobs (environment):
//
//	FAKE_ROLE            the role when the binary runs under another name
//	FAKE_SCENARIO        what a run does (below); default success
//	FAKE_SESSION_LIST_FAIL  opencode: `session list` fails (as one that cannot answer)
//	FAKE_TURN_MS         how long a turn takes (default 50)
//	FAKE_RETRIES         retry events of the reconnecting and
//	                     error_as_success scenarios (default 2)
//	FAKE_HUGE_LINE_BYTES size of huge_line's one big event (default 8 MiB)
//	FAKE_HARNESS_LOG     append argv, messages and exits here as JSON lines
//	FAKE_RAW_LOG         append the raw bytes the TUI read here
//	FAKE_EXIT_ON_RESUME  a resume exits with this code at once
//	FAKE_CRASH_AFTER_MS  exit after this long, with FAKE_CRASH_CODE (default 3)
//	FAKE_LIMIT_RESETS_IN headless limited: the limit resets in this many
//	                     seconds, said the harness's way (unset: no time)
//	FAKE_LIMIT_ONCE      headless limited: only the run that creates this
//	                     file is limited; later ones succeed
//	FAKE_HANG_CHILD      "1": hang starts a copy of itself that hangs too,
//	                     sharing stdout (a tool or MCP server the run left)
//	FAKE_IGNORE_HUP      ignore SIGHUP (as opencode does)
//	FAKE_SLOW_START_MS   TUI: draw nothing and drop input for this long
//	FAKE_TRUST_DIALOG    TUI: show the trust dialog (claude: "1"; codex:
//	                     shown unless "0"); FAKE_TRUST_ANSWER_MS how long
//	                     the answered dialog stays
//	FAKE_SUBMIT_LAG_MS   claude TUI: lag after Enter
//	FAKE_PERMISSION_NOTIFY_MS  claude TUI: how long a permission prompt
//	                     waits unanswered before its Notification hook
//	                     (default 6000); a message holding "fake-ask" asks
//	                     one (claude_permission.go); opencode's asks too,
//	                     when the launch's permission says ask
//	                     (opencode_permission.go)
//	FAKE_CODEX_LOADING_MS, FAKE_CODEX_STARTUP_MS, FAKE_CODEX_SUBMIT_GAP_MS
//	                     codex TUI: startup phases and the gap after Enter
//	FAKE_OPENCODE_FIRST_SUBMIT_GAP_MS
//	                     opencode TUI: the first turn's gap after Enter
//
// Headless scenarios (FAKE_SCENARIO), with what the adapter's stream
// parser makes of them (TestFakeHeadlessScenarios):
//
//	success             the turn answered "echo: <prompt>"; exit 0
//	turn_failed         the harness's failure event; exit 1
//	not_logged_in       the failure a missing login gives; exit 1
//	error_as_success    claude: retries, then result subtype success with
//	                    is_error true, exit 0 (fails); codex: an error item
//	                    and turn.completed (succeeds); opencode: the error
//	                    told as text (succeeds)
//	stream_error_exit0  a failure event, then exit 0 (fails)
//	reconnecting        claude: api_retry events, codex: "Reconnecting...
//	                    n/5" error events, then the answer (succeeds, with
//	                    warnings); opencode retries silently: as success
//	truncated           the stream stops before its end event, exit 0:
//	                    claude no result (not succeeded), codex no
//	                    turn.completed (fails), opencode no step_finish
//	                    (succeeds: EOF ends an opencode turn)
//	huge_line           one event of FAKE_HUGE_LINE_BYTES (a tool's
//	                    output), then success
//	banner_noise        non-JSON lines and unknown events around success
//	hang                the first event, then nothing, forever; with
//	                    FAKE_HANG_CHILD=1 a child that hangs too and
//	                    holds stdout (killing only the leader is not enough)
//	limited             the harness's usage/rate limit as the real one
//	                    states it when it gives up (the captures
//	                    limited_*), exit 1: limited, with a reset when
//	                    FAKE_LIMIT_RESETS_IN is set
//	claude only: max_turns (error_max_turns result, exit 1)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"
)

type role string

const (
	roleClaude   role = "claude"
	roleCodex    role = "codex"
	roleOpencode role = "opencode"
	rolePi       role = "pi"
)

func main() {
	r := role(filepath.Base(os.Args[0]))
	switch r {
	case roleClaude, roleCodex, roleOpencode, rolePi:
	default:
		// FAKE_ROLE lets the binary run under any name (e.g. in go run).
		r = role(os.Getenv("FAKE_ROLE"))
		if r != roleClaude && r != roleCodex && r != roleOpencode && r != rolePi {
			fmt.Fprintf(os.Stderr, "fakeharness: run me as claude, codex, opencode or pi (not %q)\n", os.Args[0])
			os.Exit(2)
		}
	}
	logArgv(os.Args)
	if os.Getenv("FAKE_IGNORE_HUP") != "" {
		signal.Ignore(syscall.SIGHUP)
	}
	startCrashTimer()
	os.Exit(run(r, os.Args[1:]))
}

func run(r role, args []string) int {
	switch r {
	case roleClaude:
		return runClaude(args)
	case roleCodex:
		return runCodex(args)
	case rolePi:
		return runPi(args)
	default:
		return runOpencode(args)
	}
}

// ---- knobs -----------------------------------------------------------------

func envMS(name string, def int) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return time.Duration(def) * time.Millisecond
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return time.Duration(def) * time.Millisecond
	}
	return time.Duration(n) * time.Millisecond
}

func envInt(name string, def int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		return def
	}
	return n
}

// hugeText is the huge_line scenario's payload: FAKE_HUGE_LINE_BYTES
// (default 8 MiB) of command output, lines and all, carried by one event.
func hugeText() string {
	n := envInt("FAKE_HUGE_LINE_BYTES", 8<<20)
	var b strings.Builder
	b.Grow(n + 64)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "-rw-r--r-- 1 user user %8d Jan  1 00:00 \"file %d\"\n", i, i)
	}
	return b.String()[:n]
}

func turnDuration() time.Duration { return envMS("FAKE_TURN_MS", 50) }

func scenario() string {
	if s := os.Getenv("FAKE_SCENARIO"); s != "" {
		if s == "limited" && !limitedThisRun() {
			return "success"
		}
		return s
	}
	return "success"
}

// limitedThisRun: scenario limited limits every run; with
// FAKE_LIMIT_ONCE=<file>, only the run that makes the file (the limit is
// over by the retry). Decided once per process.
var limitedThisRun = sync.OnceValue(func() bool {
	flag := os.Getenv("FAKE_LIMIT_ONCE")
	if flag == "" {
		return true
	}
	f, err := os.OpenFile(flag, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
})

// limitResetsIn is FAKE_LIMIT_RESETS_IN (seconds until a limit resets);
// false when unset: the limit names no reset.
func limitResetsIn() (time.Duration, bool) {
	n, err := strconv.Atoi(os.Getenv("FAKE_LIMIT_RESETS_IN"))
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// exitOnResume is called on a launch that resumes: when
// FAKE_EXIT_ON_RESUME=<code> is set it reports the exit (stderr, log) and
// returns the code to exit with, and ok.
func exitOnResume() (code int, ok bool) {
	n, err := strconv.Atoi(os.Getenv("FAKE_EXIT_ON_RESUME"))
	if err != nil {
		return 0, false
	}
	return fail(n, "fake: exiting %d on resume", n), true
}

// startCrashTimer makes the process exit after FAKE_CRASH_AFTER_MS, with
// FAKE_CRASH_CODE (default 3; 0 gives a headless run that ends without a
// result yet exits 0).
func startCrashTimer() {
	if os.Getenv("FAKE_CRASH_AFTER_MS") == "" {
		return
	}
	d := envMS("FAKE_CRASH_AFTER_MS", 0)
	code := 3
	if n, err := strconv.Atoi(os.Getenv("FAKE_CRASH_CODE")); err == nil {
		code = n
	}
	time.AfterFunc(d, func() {
		restoreTerminal()
		fmt.Fprintf(os.Stderr, "fake: crashing after %d ms\n", d.Milliseconds())
		logEvent(map[string]any{"event": "exit", "code": code, "reason": "crash"})
		lingerForTmux()
		os.Exit(code)
	})
}

// ---- FAKE_HARNESS_LOG -----------------------------------------------------

// logLine appends one JSON object to $FAKE_HARNESS_LOG. O_APPEND writes of
// one line are atomic enough for the several processes a test may run.
func logLine(v any) {
	path := os.Getenv("FAKE_HARNESS_LOG")
	if path == "" {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func logArgv(argv []string) {
	// LEO_TASK and LEO_AGENT are what leo marks its own processes with.
	logLine(map[string]any{"argv": argv, "pid": os.Getpid(), "leo_task": os.Getenv("LEO_TASK"), "leo_agent": os.Getenv("LEO_AGENT"), "path": os.Getenv("PATH")})
}

func logEvent(fields map[string]any) {
	fields["pid"] = os.Getpid()
	logLine(fields)
}

// fail prints msg on stderr and returns code (for `return fail(...)`).
func fail(code int, format string, a ...any) int {
	restoreTerminal()
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintln(os.Stderr, msg)
	logEvent(map[string]any{"event": "exit", "code": code, "stderr": msg})
	lingerForTmux()
	return code
}

// lingerForTmux waits a moment before exiting when stderr is a terminal:
// tmux 3.3a loses the last output of a process that exits right after
// writing it (about 1 in 20 here), and tests read these lines from the
// pane. Headless runs (pipes) exit at once.
func lingerForTmux() {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		time.Sleep(100 * time.Millisecond)
	}
}

func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return d
}

func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func nonAlnumToDash(s string) string {
	var b strings.Builder
	for _, c := range s {
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// hangForever blocks without tripping the runtime's deadlock detector
// (a bare select{} with nothing else running is a fatal error, exit 2).
// With FAKE_HANG_CHILD=1 it first starts a copy of itself that hangs too
// and shares its stdout (as a harness's tool or MCP server would): killing
// only the leader leaves the child and the open pipe behind.
func hangForever() {
	if os.Getenv("FAKE_HANG_CHILD") == "1" {
		child := exec.Command(os.Args[0], os.Args[1:]...)
		child.Env = append(os.Environ(), "FAKE_HANG_CHILD=0")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err == nil {
			logEvent(map[string]any{"event": "hang_child", "child": child.Process.Pid})
		}
	}
	for {
		time.Sleep(time.Hour)
	}
}
