package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
)

// captureExec replaces the exec of tmux for the test and records it.
type execCall struct {
	path       string
	argv, env  []string
	calledOnce bool
}

func captureExec(t *testing.T) *execCall {
	t.Helper()
	c := &execCall{}
	old := attachExec
	attachExec = func(path string, argv, env []string) error {
		c.path, c.argv, c.env, c.calledOnce = path, argv, env, true
		return nil
	}
	oldTerm := attachTerminal
	attachTerminal = func(*IOStreams) bool { return true } // as from a terminal
	t.Cleanup(func() { attachExec, attachTerminal = old, oldTerm })
	return c
}

func TestAttachExecsAPlainTmuxAttachToTheExactSession(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "bob", State: api.StateRunning})
	t.Setenv("TMUX", "/tmp/tmux-0/default,123,0")
	t.Setenv("TMUX_PANE", "%3")
	socket := h.TmuxSocket(home.DefaultRoot(e.getenv))

	for _, argv := range [][]string{{"attach", "bob"}, {"agent", "attach", "bob"}, {"attach"}} {
		call := captureExec(t)
		r := e.run(argv...)
		if r.code != ExitOK || !call.calledOnce {
			t.Fatalf("%v: %+v", argv, r)
		}
		want := []string{call.path, "-L", socket, "-f", "/dev/null", "attach-session", "-t", "=leo-bob"}
		if strings.Join(call.argv, " ") != strings.Join(want, " ") {
			t.Fatalf("%v: argv %q, want %q", argv, call.argv, want)
		}
		if !strings.HasSuffix(call.path, "/tmux") {
			t.Fatalf("exec path %q", call.path)
		}
		for _, kv := range call.env {
			if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") {
				t.Fatalf("tmux got %s: attaching from inside another tmux would be refused", kv)
			}
		}
	}
	if socket == "leo" {
		t.Fatalf("an isolated home attached to the default socket")
	}
}

func TestAttachRefusesStoppedAndUnknownAgents(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "zzz", State: api.StateStopped})
	call := captureExec(t)

	r := e.run("attach", "zzz")
	if r.code == ExitOK || !strings.Contains(r.stderr, "leo agent start zzz") {
		t.Fatalf("attach to a stopped agent: %+v", r)
	}
	r = e.run("attach", "ghost")
	if r.code == ExitOK || !strings.Contains(r.stderr, "not found") {
		t.Fatalf("attach to an unknown agent: %+v", r)
	}
	r = e.run("attach")
	if r.code == ExitOK || !strings.Contains(r.stderr, "every agent is stopped") {
		t.Fatalf("attach with only stopped agents: %+v", r)
	}
	if call.calledOnce {
		t.Fatal("tmux was run for an agent without a session")
	}
}

func TestAttachWithoutNameChoosesAmongSeveral(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "a1", Harness: "claude", State: api.StateRunning})
	fake.Put(api.Agent{Name: "b2", Harness: "codex", State: api.StateRunning})
	call := captureExec(t)

	r := e.run("attach")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "a1, b2") {
		t.Fatalf("attach with two agents and no terminal: %+v", r)
	}
	if call.calledOnce {
		t.Fatal("attached without a choice")
	}

	ios, in, _, errOut := TestStreams()
	in.WriteString("2\n")
	c := client.New(h)
	defer c.Close()
	err := runAttach(context.Background(), &AttachOptions{IO: ios, Client: c, Tmux: "/usr/bin/tmux", Socket: "s", CanPrompt: true, Terminal: true})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the list offered", errOut.String(), "1) a1 (claude, running)", "2) b2 (codex, running)")
	if got := call.argv[len(call.argv)-1]; got != "=leo-b2" {
		t.Fatalf("chose %q, want =leo-b2", got)
	}
}

func TestAttachByNameWorksWhileTheDaemonIsDown(t *testing.T) {
	// Agents keep running in tmux without the daemon; attaching by name
	// must not need it.
	e, _ := daemonEnv(t)
	call := captureExec(t)
	r := e.run("attach", "bob")
	if r.code != ExitOK || !call.calledOnce || call.argv[len(call.argv)-1] != "=leo-bob" {
		t.Fatalf("%+v %+v", r, call)
	}
	mustContain(t, "stderr", r.stderr, "not running", "attaching to tmux directly")
}

// TestAttachArgvAttachesARealClient runs the exact argv leo execs under a
// pty against a real tmux server: it attaches to the exact session, and
// never to a session that only shares the prefix.
func TestAttachArgvAttachesARealClient(t *testing.T) {
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is required")
	}
	socket := fmt.Sprintf("leo-e1-attach-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, tmuxPath, append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := tm("new-session", "-d", "-s", "leo-bobby", "-x", "80", "-y", "24", "cat"); err != nil {
		t.Fatalf("new-session: %v %s", err, out)
	}
	socketPath, _ := tm("display-message", "-p", "#{socket_path}")
	t.Cleanup(func() {
		tm("kill-server")
		if socketPath != "" {
			os.Remove(socketPath) // kill-server can leave the file behind
		}
	})

	run := func(name string) (*exec.Cmd, *os.File) {
		argv, env, err := attachCommandLine(tmuxPath, socket, name, append(os.Environ(), "TERM=xterm"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			buf := make([]byte, 4096)
			for {
				if _, err := f.Read(buf); err != nil {
					return
				}
			}
		}()
		t.Cleanup(func() { cmd.Process.Kill(); f.Close() })
		return cmd, f
	}

	// "bob" must not attach to "leo-bobby".
	cmd, _ := run("bob")
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err == nil {
			t.Fatal("attach to =leo-bob succeeded with only leo-bobby present")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("attach to a missing session did not fail")
	}

	cmd, _ = run("bobby")
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := tm("list-clients", "-t", "=leo-bobby", "-F", "#{client_session}")
		if out == "leo-bobby" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no client attached to leo-bobby (list-clients: %q)", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out, err := tm("detach-client", "-s", "=leo-bobby"); err != nil {
		t.Fatalf("detach: %v %s", err, out)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tmux attach exited with %v after a detach", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tmux attach did not exit after detach")
	}
}

// With no terminal on stdin, attach says so and gives the plain tmux
// command to run from one, instead of tmux's "open terminal failed".
func TestAttachWithoutATerminalSaysSoAndPrintsTheCommand(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "bob", State: api.StateRunning})
	old := attachExec
	attachExec = func(string, []string, []string) error {
		t.Error("tmux was run without a terminal")
		return nil
	}
	t.Cleanup(func() { attachExec = old })
	socket := h.TmuxSocket(home.DefaultRoot(e.getenv))
	for _, argv := range [][]string{{"attach", "bob"}, {"agent", "attach", "bob"}} {
		r := e.run(argv...)
		if r.code != ExitUsage {
			t.Fatalf("%v: exit %d, want %d: %+v", argv, r.code, ExitUsage, r)
		}
		mustContain(t, "stderr", r.stderr, "leo attach needs a terminal (stdin is not one)", "-L "+socket+" -f /dev/null attach-session -t '=leo-bob'")
		if strings.Contains(r.stderr, "open terminal failed") {
			t.Fatalf("tmux's own error: %q", r.stderr)
		}
	}
}

// attach --help shows the tmux command it runs for this home.
func TestAttachHelpPrintsTheTmuxCommand(t *testing.T) {
	e, h := daemonEnv(t)
	socket := h.TmuxSocket(home.DefaultRoot(e.getenv))
	for _, argv := range [][]string{{"attach", "--help"}, {"agent", "attach", "--help"}} {
		r := e.run(argv...)
		if r.code != ExitOK {
			t.Fatalf("%v: %+v", argv, r)
		}
		mustContain(t, strings.Join(argv, " "), r.stdout, "It runs this tmux command", "-L "+socket+" -f /dev/null attach-session -t '=leo-NAME'")
	}
}
