package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// lockedBuffer is a process's stdout the test reads while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A template spawned twice: the second agent's answer says it shares the
// first one's checkout. Then `leo agent logs -f` follows a real pane: a
// message sent meanwhile shows up, and Ctrl-C ends it with exit 0.
func TestCLISpawnTwiceSharesAWorkspaceAndLogsFollow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	w.startDaemon()
	run := func(args ...string) cliResult { t.Helper(); return leo(t, w, nil, args...) }

	first := run("agent", "spawn", "codex", "--json").success(t)
	if _, has := first["shares_workspace_with"]; has {
		t.Fatalf("the first agent shares with nobody: %v", first)
	}
	second := run("agent", "spawn", "codex", "--json").success(t)
	if second["name"] != "codex-2" || fmt.Sprint(second["shares_workspace_with"]) != "[codex]" {
		t.Fatalf("second spawn: %v", second)
	}
	w.WaitAll(60*time.Second, "both agents running", func(as []api.Agent) bool {
		return len(as) == 2 && as[0].State == api.StateRunning && as[1].State == api.StateRunning
	})

	cmd := exec.Command(leoproc.Binary(t), "agent", "logs", "codex", "-f")
	cmd.Env = w.Env()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	run("agent", "send", "codex", "follow me").ok(t)
	testutil.WaitFor(t, 30*time.Second, func() bool { return strings.Contains(out.String(), "echo: follow me") },
		"the message echoed in the followed pane")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("logs -f after Ctrl-C: %v (stderr %q)", err, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not end on Ctrl-C")
	}
	if n := strings.Count(out.String(), "echo: follow me"); n != 1 {
		t.Errorf("the echo was printed %d times:\n%s", n, out.String())
	}
}

// The issue's case: a task added to leo.yaml by hand shows in `leo task
// list` without a reload; a bad edit then shows in `leo service status`
// (the daemon's problems) and keeps the task list as it ran.
func TestCLIEditedConfigReachesTheDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	w.startDaemon()
	run := func(args ...string) cliResult { t.Helper(); return leo(t, w, nil, args...) }
	hasLines(t, run("task", "list").ok(t), `^no tasks`)

	good, err := os.ReadFile(w.Home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.Home.Workspace(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Home.Workspace(), "p.md"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	task := "tasks:\n  nightly:\n    schedule: \"0 3 1 1 *\"\n    prompt_file: p.md\n    enabled: false\n"
	if err := os.WriteFile(w.Home.ConfigPath, append(good, task...), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, func() bool {
		r := run("task", "list")
		return r.code == 0 && strings.Contains(r.stdout, "nightly")
	}, "the task added to leo.yaml listed by the daemon")

	if err := os.WriteFile(w.Home.ConfigPath, append(good, "tasks:\n  nightly:\n    schedule: \"0 3 1 1 *\"\n    prompt_file: p.md\n    harness: nope\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, func() bool {
		r := run("service", "status")
		return strings.Contains(r.stdout, "leo.yaml on disk is not loaded")
	}, "the bad edit named in leo service status")
	// leo status reads leo.yaml itself, so it names the broken file too.
	if r := run("status"); r.code != 3 || !strings.Contains(r.stderr, `"nope" is not a registered harness`) {
		t.Errorf("leo status on the bad edit: %s", r)
	}
	hasLines(t, run("task", "list").ok(t), `^nightly\s`)
}
