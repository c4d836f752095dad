package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
)

// completions runs cobra's completion request for argv and returns the
// names it offers (without the directive line) and stderr.
func completions(t *testing.T, e *testEnv, argv ...string) ([]string, string) {
	t.Helper()
	r := e.run(append([]string{"__complete"}, argv...)...)
	if r.code != ExitOK {
		t.Fatalf("__complete %q: %+v", argv, r)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line != "" && !strings.HasPrefix(line, ":") {
			names = append(names, line)
		}
	}
	return names, r.stderr
}

// onlyDirective: completion adds nothing of its own to stderr (cobra's
// own debug line, which the shell scripts discard, is all there is).
func onlyDirective(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !strings.HasPrefix(line, "Completion ended with directive:") {
			t.Errorf("completion wrote to stderr: %q", stderr)
		}
	}
}

// Agent, template and task names complete from the running daemon.
func TestCompletionOfNamesFromTheDaemon(t *testing.T) {
	e, h := jsonRuleHome(t)
	fake := daemontest.New()
	for _, n := range []string{"bob", "alice"} {
		fake.Put(api.Agent{Name: n, Template: "assistant", Harness: "claude", State: api.StateRunning})
	}
	startFakeDaemonWith(t, e, h, fake)
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"agent", "status", ""}, "alice bob"},
		{[]string{"agent", "stop", "b"}, "bob"},
		{[]string{"agent", "rm", ""}, "alice bob"},
		{[]string{"attach", "a"}, "alice"},
		{[]string{"agent", "send", "bob", ""}, ""},
		{[]string{"agent", "spawn", ""}, "assistant"},
		{[]string{"template", "show", "as"}, "assistant"},
		{[]string{"task", "logs", ""}, "nightly"},
		{[]string{"run", "n"}, "nightly"},
		{[]string{"task", "run", "x"}, ""},
	} {
		names, stderr := completions(t, e, tc.argv...)
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("complete %q = %q, want %q", tc.argv, got, tc.want)
		}
		onlyDirective(t, stderr)
	}
}

// With no daemon, completion is quick and quiet: names from leo.yaml and
// state/agents.json, read only (a corrupt agents.json offers nothing and
// stays where it is).
func TestCompletionWithTheDaemonDown(t *testing.T) {
	e, h := jsonRuleHome(t)
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	records := `{"version": 1, "agents": [{"name": "carol", "template": "assistant"}, {"name": "../x"}]}`
	if err := os.WriteFile(h.AgentsPath(), []byte(records), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	names, stderr := completions(t, e, "agent", "logs", "")
	if strings.Join(names, " ") != "carol" {
		t.Errorf("agents with the daemon down = %q, want carol (from agents.json)", names)
	}
	onlyDirective(t, stderr)
	if names, _ := completions(t, e, "agent", "spawn", ""); strings.Join(names, " ") != "assistant" {
		t.Errorf("templates with the daemon down = %q", names)
	}
	if names, _ := completions(t, e, "task", "enable", ""); strings.Join(names, " ") != "nightly" {
		t.Errorf("tasks with the daemon down = %q", names)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("three completions with the daemon down took %v", d)
	}

	if err := os.WriteFile(h.AgentsPath(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	names, stderr = completions(t, e, "agent", "stop", "")
	if len(names) != 0 {
		t.Errorf("corrupt agents.json offered %q", names)
	}
	onlyDirective(t, stderr)
	if data, err := os.ReadFile(h.AgentsPath()); err != nil || string(data) != "{not json" {
		t.Errorf("completion touched agents.json: %q, %v", data, err)
	}
	if aside, _ := filepath.Glob(h.AgentsPath() + ".*"); len(aside) != 0 {
		t.Errorf("completion kept agents.json aside: %v", aside)
	}
}

// A daemon that holds the socket but does not answer costs a <Tab> about
// completionTimeout; the names then come from the files.
func TestCompletionWithAStuckDaemon(t *testing.T) {
	e, h := jsonRuleHome(t)
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	t.Cleanup(func() {
		ln.Close()
		for len(conns) > 0 {
			(<-conns).Close()
		}
	})
	go func() { // accept, never answer
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c:
			default:
				c.Close()
			}
		}
	}()
	start := time.Now()
	names, stderr := completions(t, e, "agent", "spawn", "")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("completion against a stuck daemon took %v", d)
	}
	if strings.Join(names, " ") != "assistant" {
		t.Errorf("templates = %q, want assistant from leo.yaml", names)
	}
	onlyDirective(t, stderr)
}
