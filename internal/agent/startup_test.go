package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/proc"
)

// A TUI that never becomes ready is a state with a reason, not a hang: the
// agent says why, the message waiting for it fails with that reason, and
// the TUI is relaunched with the restart backoff, like a crash.
func TestTUINeverReadyIsShownFailsItsMessagesAndIsRelaunched(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withEnv(map[string]string{"FAKE_SLOW_START_MS": "600000"}), withReadyTimeout(time.Second))
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			res, err := m.Send(context.Background(), h, "are you there?")
			if err != nil {
				t.Fatal(err)
			}
			var d api.Delivery
			waitFor(t, "the message's outcome", 20*time.Second, func() bool {
				for _, x := range mustGet(t, m, h).Deliveries {
					if x.ID == res.ID {
						d = x
						return true
					}
				}
				return false
			})
			if d.Status != "failed" || !strings.Contains(d.Error, "did not become ready") {
				t.Fatalf("delivery %+v; want failed because the TUI did not become ready", d)
			}
			waitFor(t, "a relaunch", 20*time.Second, func() bool { return len(e.launches(h)) >= 2 })
			a := mustGet(t, m, h)
			if a.State != api.StateStarting || !strings.Contains(a.LastError, "startup:") {
				t.Fatalf("agent %s state %s error %q; want starting with the startup reason", h, a.State, a.LastError)
			}
		})
	}
}

// queue_max bounds the messages waiting for an agent: past it, a send is
// refused with queue_full (the review saw five sends to a queue_max: 1
// agent with a blocked input all answered "queued").
func TestQueueMaxRefusesSendsPastIt(t *testing.T) {
	h := "codex"
	e := newEnv(t, withEnv(map[string]string{"FAKE_SLOW_START_MS": "600000"}), withReadyTimeout(time.Minute), withTemplateYAML("    queue_max: 1\n"))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	var accepted, full int
	for i := range 5 {
		_, err := m.Send(context.Background(), h, "message")
		switch {
		case err == nil:
			accepted++
		case api.CodeOf(err) == api.CodeQueueFull && strings.Contains(err.Error(), "queue_max 1"):
			full++
		default:
			t.Fatalf("send %d: %v", i, err)
		}
	}
	// One may already be in flight (not waiting); at most one waits.
	if accepted > 2 || full < 3 {
		t.Fatalf("accepted %d, refused %d; want at most 2 accepted with queue_max 1", accepted, full)
	}
}

// A workspace reached through a symlink is launched, trusted and looked up
// by its real path (claude checks trust on the real path; on macOS /tmp is
// a symlink), and a message still lands.
func TestWorkspaceThroughSymlinkRunsOnItsRealPath(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			real := e.workspace
			if err := os.MkdirAll(real, 0o755); err != nil {
				t.Fatal(err)
			}
			link := real + "-link"
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			e.workspace = link
			e.writeConfig()
			m := e.manager()
			a, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(real, h); a.Workspace != want {
				t.Fatalf("workspace %q, want the real path %q", a.Workspace, want)
			}
			e.waitState(m, h, api.StateRunning)
			res, err := m.Send(context.Background(), h, "through the link")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
		})
	}
}

// A TUI that ignores the hangup of its closed terminal (the real opencode
// does) must not outlive a stop or an idle suspend: leo ends the process
// the pane started.
func TestStoppedTUIThatIgnoresHangupIsEnded(t *testing.T) {
	h := "opencode"
	e := newEnv(t, withEnv(map[string]string{"FAKE_IGNORE_HUP": "1"}))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	a := e.waitState(m, h, api.StateRunning)
	pid := 0
	panes, err := e.tmux.ListPanes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range panes {
		if p.SessionName == a.TmuxSession {
			pid = p.PID
		}
	}
	if proc.Start(pid) == "" {
		t.Fatalf("no running pane process for %s (pid %d)", a.TmuxSession, pid)
	}
	if _, err := m.Stop(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the TUI process ended", 20*time.Second, func() bool { return proc.Start(pid) == "" })
}

// A message left in flight by an earlier daemon, whose finishing is
// cancelled before its turn (here: the agent is stopped while its TUI is
// still starting), has its outcome then: its in-flight record is dropped,
// so the next start does not finish it a second time. (Found in review.)
func TestCancelledFinishDropsItsInFlightRecord(t *testing.T) {
	h := "codex"
	e := newEnv(t, withEnv(map[string]string{"FAKE_SLOW_START_MS": "600000"}), withReadyTimeout(time.Minute))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	a, err := m.lookup(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.markInFlight("cut-1", "left by the last daemon", ""); err != nil {
		t.Fatal(err)
	}
	// Behind the startup probe, which waits for the slow TUI.
	if _, err := a.queue.Push(&delivery.Item{ID: "cut-1", Message: "left by the last daemon", Pasted: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stop(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the in-flight record dropped", 10*time.Second, func() bool { return e.inFlight(h) == nil })
}
