package fault

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// An exit is counted once (issue 15 item 4): a TUI killed once, then its
// daemon SIGKILLed and started four times before the restart is due. The
// one "agent exited; restarting" is logged once over all five daemons,
// with the first backoff (5 s), and the agent is running again about when
// that restart was due, restarted once.
func TestDaemonKillsWhileARestartIsPendingCountTheExitOnce(t *testing.T) {
	w := leoproc.New(t)
	w.WriteConfig(map[string]string{"FAKE_TURN_MS": "30"})
	d, _ := w.Start(readyDeadline)
	ctx := context.Background()
	a, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	w.WaitAll(time.Minute, "the agent running", func(as []api.Agent) bool {
		return len(as) == 1 && as[0].State == api.StateRunning
	})
	panes, err := w.AgentPanes()
	if err != nil || len(panes["leo-"+a.Name]) != 1 {
		t.Fatalf("panes %v (%v)", panes, err)
	}
	killedAt := time.Now()
	if err := syscall.Kill(panes["leo-"+a.Name][0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	const exited = "agent exited; restarting"
	testutil.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(d.Stderr(), exited) }, "the exit counted")
	logs := d.Stderr()
	for i := 0; i < 4; i++ {
		d.Kill(syscall.SIGKILL)
		w.Client.Close()
		d = w.StartProcess()
		if err := w.WaitReady(d, readyDeadline); err != nil {
			t.Fatalf("restart %d: %v", i+1, err)
		}
		logs += d.Stderr()
	}
	restartedBy := time.Since(killedAt)
	as := w.WaitAll(30*time.Second, "the agent running again", func(as []api.Agent) bool {
		return len(as) == 1 && as[0].State == api.StateRunning && as[0].Restarts >= 1
	})
	back := time.Since(killedAt)
	logs += d.Stderr()
	if n := strings.Count(logs, exited); n != 1 {
		t.Fatalf("%q logged %d times for one exit (daemons restarted within %v):\n%s", exited, n, restartedBy, logs)
	}
	if !strings.Contains(logs, "restart_in=5s") {
		t.Fatalf("the exit's restart is not the first backoff (5 s):\n%s", logs)
	}
	if as[0].Restarts != 1 {
		t.Fatalf("restarts %d, want 1", as[0].Restarts)
	}
	// Due 5 s after the exit (the log count above is the proof; this
	// bound only catches a restart left for the doubled backoffs, 10 s
	// and more after the last daemon's start).
	if back > 20*time.Second {
		t.Fatalf("running again %v after the exit, want about 5 s", back)
	}
	t.Logf("four daemon restarts in %v; the agent was running again %v after its TUI was killed", restartedBy.Round(time.Millisecond), back.Round(time.Millisecond))
}
