package e2e

// The leo CLI as a user runs it: the built binary as its own process,
// against a real daemon process over its real socket, with stdout, stderr
// and the exit code checked, in text and in --json.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// cliResult is one finished leo process.
type cliResult struct {
	args           []string
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r cliResult) String() string {
	return fmt.Sprintf("leo %q: exit %d after %v\nstdout: %s\nstderr: %s", r.args, r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// leo runs the built leo binary with args in the world's environment
// (env overrides single variables) and stdin not a terminal. The binary
// must be built already when leo runs on a goroutine of the test.
func leo(t testing.TB, w world, env map[string]string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, leoproc.Binary(t), args...)
	for _, kv := range w.Env() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := env[k]; !ok {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	r := cliResult{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(t0)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		r.code = exit.ExitCode()
	default:
		// Errorf, not Fatalf: leo may run on a goroutine of the test.
		t.Errorf("leo %q did not run to an exit: %v\nstderr: %s", args, err, r.stderr)
		r.code = -1
	}
	return r
}

// ok fails the test unless r exited 0 with nothing on stderr.
func (r cliResult) ok(t testing.TB) cliResult {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and an empty stderr; %s", r)
	}
	return r
}

// object is r's stdout as exactly one JSON object (the JSON rule).
func (r cliResult) object(t testing.TB) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not a JSON object (%v); %s", err, r)
	}
	if rest := strings.TrimSpace(r.stdout[dec.InputOffset():]); rest != "" {
		t.Fatalf("stdout has more than one JSON object; %s", r)
	}
	return obj
}

// success checks a --json success: exit 0, one object on stdout without
// an "error" key, nothing on stderr.
func (r cliResult) success(t testing.TB) map[string]any {
	t.Helper()
	r.ok(t)
	obj := r.object(t)
	if _, has := obj["error"]; has {
		t.Fatalf("a successful --json answer carries \"error\"; %s", r)
	}
	return obj
}

// failure checks a --json failure: exit code, {"error": code, "message"}
// on stdout, nothing on stderr. It returns the message.
func (r cliResult) failure(t testing.TB, code string, exit int) string {
	t.Helper()
	if r.code != exit || r.stderr != "" {
		t.Fatalf("want exit %d, %s on stdout and an empty stderr; %s", exit, code, r)
	}
	obj := r.object(t)
	msg, _ := obj["message"].(string)
	if obj["error"] != code || msg == "" {
		t.Fatalf("want {\"error\": %q, \"message\": …}; %s", code, r)
	}
	return msg
}

// fails checks a text failure: exit code, nothing on stdout, and stderr
// starting "leo: " and holding every want.
func (r cliResult) fails(t testing.TB, exit int, want ...string) {
	t.Helper()
	if r.code != exit || r.stdout != "" || !strings.HasPrefix(r.stderr, "leo: ") {
		t.Fatalf("want exit %d, an empty stdout and \"leo: …\" on stderr; %s", exit, r)
	}
	for _, s := range want {
		if !strings.Contains(r.stderr, s) {
			t.Fatalf("stderr lacks %q; %s", s, r)
		}
	}
}

func hasLines(t testing.TB, r cliResult, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(r.stdout) {
			t.Fatalf("stdout has no line matching %q; %s", p, r)
		}
	}
}

// spawn, list, status, send, logs, stop and delete, each in text and in
// --json, through the leo binary against a real daemon.
func TestCLIAgentCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	w.startDaemon()
	run := func(args ...string) cliResult { t.Helper(); return leo(t, w, nil, args...) }

	// spawn
	r := run("agent", "spawn", "codex", "--name", "c1").ok(t)
	hasLines(t, r, `^spawned c1 \(codex, (starting|running)\) in tmux session leo-c1 — attach: leo attach c1$`)
	a := run("agent", "spawn", "claude", "--name", "k1", "--json").success(t)
	if a["name"] != "k1" || a["harness"] != "claude" || a["tmux_session"] != "leo-k1" {
		t.Fatalf("spawn --json: %v", a)
	}
	run("agent", "spawn", "nope").fails(t, 1, "nope")
	run("agent", "spawn", "nope", "--json").failure(t, "not_found", 1)
	w.WaitAll(60*time.Second, "both agents running", func(as []api.Agent) bool {
		return len(as) == 2 && as[0].State == api.StateRunning && as[1].State == api.StateRunning
	})

	// list
	r = run("agent", "list").ok(t)
	hasLines(t, r, `^NAME\s+HARNESS\s+STATE\s+ATTENTION\s+BRANCH\s+SESSION\s+RESTARTS\s+LAST EXIT\s+USAGE TODAY\s+ENV$`,
		`^c1\s+codex\s+running\s+idle\s`, `^k1\s+claude\s+running\s+idle\s`)
	list := run("agent", "ls", "--json").success(t)
	agents, _ := list["agents"].([]any)
	if len(agents) != 2 {
		t.Fatalf("list --json: %v", list)
	}
	for _, x := range agents {
		if _, has := x.(map[string]any)["error"]; has {
			t.Fatalf("an agent in list --json carries \"error\": %v", x)
		}
	}

	// status
	r = run("agent", "status", "c1").ok(t)
	hasLines(t, r, `^name:\s+c1$`, `^harness:\s+codex$`, `^state:\s+running$`, `^tmux session:\s+leo-c1 \(leo attach c1\)$`)
	st := run("agent", "status", "k1", "--json").success(t)
	if st["name"] != "k1" || st["state"] != "running" {
		t.Fatalf("status --json: %v", st)
	}
	run("agent", "status", "ghost").fails(t, 1, `agent "ghost" not found`)
	run("agent", "status", "ghost", "--json").failure(t, "not_found", 1)

	// send: text, then --json (whose id tells when it landed)
	r = run("agent", "send", "c1", "hello", "from", "the", "cli").ok(t)
	hasLines(t, r, `^queued for c1 \(1 message in queue\); the daemon delivers it when the input line is idle$`)
	res := run("agent", "send", "c1", "second message", "--json").success(t)
	id, _ := res["id"].(string)
	if res["agent"] != "c1" || id == "" || (res["delivery"] != "queued" && res["delivery"] != "delivered") {
		t.Fatalf("send --json: %v", res)
	}
	w.waitDelivered("c1", id)
	run("agent", "send", "ghost", "hi").fails(t, 1, `agent "ghost" not found`)
	run("agent", "send", "c1", " ", "--json").failure(t, "invalid_args", 2)

	// logs: what the pane shows
	testutil.WaitFor(t, 30*time.Second, func() bool {
		r = run("agent", "logs", "c1")
		return r.code == 0 && strings.Contains(r.stdout, "echo: hello from the cli") && strings.Contains(r.stdout, "echo: second message")
	}, "both messages echoed in c1's pane, as leo agent logs shows it")
	r.ok(t)
	l := run("agent", "logs", "c1", "--lines", "200", "--json").success(t)
	if l["agent"] != "c1" || !strings.Contains(fmt.Sprint(l["text"]), "echo: second message") {
		t.Fatalf("logs --json: %v", l)
	}
	run("agent", "logs", "c1", "--lines", "0").fails(t, 2, "--lines must be at least 1")

	// delete: refused while running, asked for --yes off a terminal
	run("agent", "delete", "c1", "--yes").fails(t, 1, "leo agent stop c1")
	run("agent", "delete", "c1", "--yes", "--json").failure(t, "agent_running", 1)
	run("agent", "delete", "c1").fails(t, 2, "without --yes")

	// stop, then delete
	r = run("agent", "stop", "c1").ok(t)
	hasLines(t, r, `^c1: stopped$`)
	if s := run("agent", "stop", "k1", "--json").success(t); s["state"] != "stopped" {
		t.Fatalf("stop --json: %v", s)
	}
	hasLines(t, run("agent", "delete", "c1", "--yes").ok(t), `^deleted c1$`)
	if d := run("agent", "delete", "k1", "--yes", "--json").success(t); d["ok"] != true || d["agent"] != "k1" {
		t.Fatalf("delete --json: %v", d)
	}
	hasLines(t, run("agent", "list").ok(t), `^no agents — spawn one with: leo agent spawn <template>$`)
	if list := run("agent", "list", "--json").success(t); fmt.Sprint(list["agents"]) != "[]" {
		t.Fatalf("empty list --json: %v", list)
	}
	run("agent", "status", "c1", "--json").failure(t, "not_found", 1)
}

// A malformed name is invalid_args (exit 2) from every command, whether a
// daemon runs or not; `leo agent logs "" --json` printed the agent named
// "logs" (the daemon redirected /agents//logs to /agents/logs).
func TestCLIBadAgentNames(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "opencode")
	w.WriteConfig(nil)
	d := w.startDaemon()
	for _, n := range []string{"logs", "stop"} {
		leo(t, w, nil, "agent", "spawn", "opencode", "--name", n).ok(t)
	}
	check := func(names ...string) {
		for _, name := range names {
			for _, args := range [][]string{
				{"agent", "logs", name},
				{"agent", "status", name},
				{"agent", "stop", name},
				{"agent", "start", name},
				{"agent", "restart", name},
				{"agent", "reset", name},
				{"agent", "delete", name, "--yes"},
				{"agent", "send", name, "hello"},
				{"agent", "spawn", "opencode", "--name", name},
			} {
				if args[1] == "spawn" && name == "" {
					continue // no --name: leo picks one
				}
				want := fmt.Sprintf("invalid agent name %q: use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit", name)
				leo(t, w, nil, args...).fails(t, 2, want, "Run 'leo agent "+args[1]+" --help' for usage.")
				if msg := leo(t, w, nil, append(args, "--json")...).failure(t, "invalid_args", 2); msg != want {
					t.Fatalf("leo %q --json: message %q, want %q", args, msg, want)
				}
			}
		}
		leo(t, w, nil, "attach", "..").fails(t, 2, `invalid agent name ".."`)
	}
	check("", ".", "..", "../health", "Logs", "a_b", strings.Repeat("a", 64))
	// Nothing was stopped, started or spawned by the bad names.
	as := w.WaitAll(10*time.Second, "the two agents, untouched", func(as []api.Agent) bool { return len(as) == 2 })
	for _, a := range as {
		if a.State != api.StateRunning || a.Restarts != 0 {
			t.Fatalf("agent %s after the bad names: %s, %d restarts", a.Name, a.State, a.Restarts)
		}
	}
	d.Kill(syscall.SIGTERM)
	check("", "..") // no daemon: still invalid_args, not daemon_down
}

// With no daemon, every daemon command exits 4 (daemon_down) and says why,
// in text on stderr and in JSON on stdout.
func TestCLIDaemonDown(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	sock := w.Home.SocketPath()
	want := "leo daemon is not running (no socket at " + sock + "); " + client.StartHint
	cmds := [][]string{
		{"agent", "status", "a1"},
		{"agent", "spawn", "codex"},
		{"agent", "send", "a1", "hello"},
		{"agent", "logs", "a1"},
		{"agent", "stop", "a1"},
		{"agent", "delete", "a1", "--yes"},
		{"service", "status"},
		{"service", "reload"},
	}
	for _, args := range cmds {
		leo(t, w, nil, args...).fails(t, 4, want)
		if msg := leo(t, w, nil, append(args, "--json")...).failure(t, "daemon_down", 4); msg != want {
			t.Fatalf("leo %q --json: %q, want %q", args, msg, want)
		}
	}

	// A daemon that was SIGKILLed leaves its socket file behind.
	d := w.startDaemon()
	d.Kill(syscall.SIGKILL)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("a SIGKILLed daemon left no socket to test against: %v", err)
	}
	leo(t, w, nil, "agent", "status", "a1").fails(t, 4, "leo daemon is not running (stale socket at "+sock, client.StartHint)
	leo(t, w, nil, "service", "status", "--json").failure(t, "daemon_down", 4)
}

// A daemon that holds the socket but does not answer (SIGSTOPped) costs a
// read a few seconds, not minutes, and the answer names it by pid; once it
// runs again the same commands work.
func TestCLIStoppedDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	w.WriteConfig(nil)
	d := w.startDaemon()
	leo(t, w, nil, "agent", "spawn", "codex", "--name", "c1").ok(t)
	// Registered after the daemon's own cleanup, so it runs first: a
	// stopped daemon would not obey the SIGTERM that ends it.
	t.Cleanup(func() { _ = syscall.Kill(d.PID, syscall.SIGCONT) })
	if err := syscall.Kill(d.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return processState(d.PID) == "T" }, "the daemon stopped")

	cases := []struct {
		args []string
		call string
	}{
		{[]string{"agent", "list", "--json"}, "GET /agents"},
		{[]string{"service", "status", "--json"}, "GET /health"},
		{[]string{"agent", "status", "c1"}, "GET /agents/c1"},
	}
	// The three wait out their deadlines side by side.
	results := make([]chan cliResult, len(cases))
	for i, tc := range cases {
		results[i] = make(chan cliResult, 1)
		go func() { results[i] <- leo(t, w, nil, tc.args...) }()
	}
	// A send is another matter (issue 15 item 14): the stopped daemon's
	// kernel took it, and the daemon will carry it out. Not daemon_down but
	// outcome_unknown (exit 5), after the send's own 60 s bound.
	sent := make(chan cliResult, 1)
	go func() {
		sent <- leo(t, w, nil, "agent", "send", "c1", "sent while stopped", "--id", "while-stopped", "--json")
	}()
	for i, tc := range cases {
		r := <-results[i]
		want := fmt.Sprintf("leo daemon (pid %d) holds the socket but does not answer: no reply to %s within 5s", d.PID, tc.call)
		if strings.HasSuffix(tc.args[len(tc.args)-1], "--json") {
			if msg := r.failure(t, "daemon_down", 4); !strings.HasPrefix(msg, want) {
				t.Fatalf("message %q, want %q…", msg, want)
			}
		} else {
			r.fails(t, 4, want)
		}
		// Bounded by the read deadline (5 s), with room for a busy machine;
		// before, it was 2 minutes ending in "context canceled".
		if r.took > 30*time.Second {
			t.Fatalf("leo %q took %v against a stopped daemon", tc.args, r.took)
		}
	}

	r := <-sent
	if msg := r.failure(t, "outcome_unknown", 5); !strings.Contains(msg, "got the request but no answer within 1m0s") || !strings.Contains(msg, "send it again with --id while-stopped") {
		t.Fatalf("send to a stopped daemon: %q", msg)
	}
	if r.took > 90*time.Second {
		t.Fatalf("leo agent send took %v against a stopped daemon", r.took)
	}

	if err := syscall.Kill(d.PID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// It was queued after all; the retry is answered, not queued again.
	w.waitDelivered("c1", "while-stopped")
	if res := leo(t, w, nil, "agent", "send", "c1", "sent while stopped", "--id", "while-stopped", "--json").success(t); res["id"] != "while-stopped" {
		t.Fatalf("retry after SIGCONT: %v", res)
	}
	if n := w.SubmittedCounts()["sent while stopped"]; n != 1 {
		t.Fatalf("the TUI got the message %d times, want once", n)
	}
	hasLines(t, leo(t, w, nil, "agent", "list").ok(t), `^c1\s+codex\s`)
	if h := leo(t, w, nil, "service", "status", "--json").success(t); h["pid"] != float64(d.PID) {
		t.Fatalf("service status after SIGCONT: %v", h)
	}
}

// processState is the state letter of pid in /proc (T: stopped).
func processState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// leo validate as a process: a valid file, an invalid one, text and JSON.
func TestCLIValidate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	cfg := w.Home.ConfigPath

	// WriteConfig writes a template for each harness.
	hasLines(t, leo(t, w, nil, "validate").ok(t), `^`+regexp.QuoteMeta(cfg)+fmt.Sprintf(`: valid \(%d templates, 0 tasks\)$`, len(leoproc.Harnesses)))
	v := leo(t, w, nil, "validate", "--json").success(t)
	if v["ok"] != true || v["config"] != cfg {
		t.Fatalf("validate --json: %v", v)
	}

	bad := filepath.Join(w.Home.Root, "bad", "leo.yaml")
	if err := os.MkdirAll(filepath.Dir(bad), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("templates:\n  a:\n    harness: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The findings are the output (stdout); the summary is the failure (stderr).
	r := leo(t, w, nil, "validate", "-c", bad)
	if r.code != 3 || r.stderr != "leo: "+bad+": 1 error\n" {
		t.Fatalf("invalid config: %s", r)
	}
	hasLines(t, r, `^`+regexp.QuoteMeta(bad)+`:3:5: error: templates\.a\.harness "nope" is not a registered harness`)
	r = leo(t, w, nil, "validate", "-c", bad, "--json")
	if r.code != 3 || r.stderr != "" {
		t.Fatalf("invalid config --json: %s", r)
	}
	obj := r.object(t)
	findings, _ := obj["findings"].([]any)
	if obj["error"] != "config_error" || obj["ok"] != false || len(findings) != 1 {
		t.Fatalf("invalid config --json: %v", obj)
	}

	missing := filepath.Join(w.Home.Root, "none", "leo.yaml")
	leo(t, w, nil, "validate", "-c", missing, "--json").failure(t, "config_error", 3)
	leo(t, w, nil, "validate", "--bogus").fails(t, 2, "unknown flag: --bogus", "Run 'leo validate --help' for usage.")
}

// leo setup as a process: --defaults writes a config that validates, a
// second run leaves it alone, and off a terminal it will not ask.
func TestCLISetup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	root := filepath.Join(w.Home.Root, "fresh")
	env := map[string]string{"LEO_HOME": root}
	cfg := filepath.Join(root, "leo.yaml")

	leo(t, w, env, "setup").fails(t, 2, "use --defaults")
	leo(t, w, env, "setup", "--json").failure(t, "invalid_args", 2)
	if _, err := os.Stat(cfg); err == nil {
		t.Fatal("setup wrote a config without --defaults off a terminal")
	}

	r := leo(t, w, env, "setup", "--defaults").ok(t)
	hasLines(t, r, `^wrote `+regexp.QuoteMeta(cfg)+`$`, `^next: leo service`)
	fi, err := os.Stat(cfg)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("leo.yaml: %v %v", fi, err)
	}
	data, _ := os.ReadFile(cfg)
	if !strings.Contains(string(data), "web:") {
		t.Fatalf("the default config lost its web: block (docs/managed-install.md):\n%s", data)
	}
	hasLines(t, leo(t, w, env, "validate").ok(t), `^`+regexp.QuoteMeta(cfg)+`: valid`)

	s := leo(t, w, env, "setup", "--defaults", "--json").success(t)
	if s["ok"] != true || s["created"] != false || s["config"] != cfg {
		t.Fatalf("second setup --json: %v", s)
	}
	if again, _ := os.ReadFile(cfg); !bytes.Equal(again, data) {
		t.Fatal("a second setup changed leo.yaml")
	}
	hasLines(t, leo(t, w, env, "setup", "--defaults").ok(t), `already exists; leaving it as it is`)

	h := leo(t, w, env, "setup", "--help").ok(t)
	if !strings.Contains(h.stdout, "web UI on 127.0.0.1:8370") || !strings.Contains(h.stdout, "state/api.token") {
		t.Fatalf("setup --help does not say what web: serves and how it is guarded: %s", h)
	}
}
