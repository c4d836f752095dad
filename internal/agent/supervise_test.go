package agent

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// resumeArgs is what a resume launch of harness h must carry, as its
// adapter writes it.
func resumeArgs(h, id string) []string { return testutil.ResumeArgs(h, id) }

func isResume(h string, argv []string) bool { return testutil.IsResume(h, argv) }

// spawnWithSession spawns the harness's agent and, for harnesses that pick
// their own ids, delivers a first turn and waits for leo to discover it.
func spawnWithSession(t *testing.T, e *testEnv, m *Manager, h string) string {
	t.Helper()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	a := e.waitState(m, h, api.StateRunning)
	if testutil.PinsID(h) {
		if a.SessionID == "" {
			t.Fatalf("%s agent has no pinned session id", h)
		}
		first := e.launches(h)[0]
		if !testutil.HasSeq(first, testutil.PinArgs(h, a.SessionID)) {
			t.Fatalf("first %s launch %q does not pin %s", h, first, a.SessionID)
		}
		return a.SessionID
	}
	if a.SessionID != "" {
		t.Fatalf("%s agent has a session id %q before its first turn", h, a.SessionID)
	}
	res, err := m.Send(context.Background(), h, "hello "+h)
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, h, res.ID)
	var id string
	waitFor(t, h+" session id discovered", 20*time.Second, func() bool {
		id = mustGet(t, m, h).SessionID
		return id != ""
	})
	return id
}

func TestCrashedTUIRestartsAndResumesSameConversation(t *testing.T) {
	for _, h := range harnesses {
		for _, how := range []string{"exit 3", "SIGKILL"} {
			t.Run(h+"/"+how, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				m := e.manager()
				id := spawnWithSession(t, e, m, h)
				pid1 := e.panePID(h)
				paneID := e.paneID(h)

				if how == "exit 3" {
					res, err := m.Send(context.Background(), h, "fake-exit 3")
					if err != nil {
						t.Fatal(err)
					}
					waitDelivered(t, m, h, res.ID)
				} else if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "restart", 20*time.Second, func() bool {
					a := mustGet(t, m, h)
					return a.Restarts == 1 && a.State == api.StateRunning
				})
				a := mustGet(t, m, h)
				switch {
				case a.LastExit == nil:
					t.Fatal("no last exit recorded")
				case how == "exit 3" && (a.LastExit.Status != 3 || !strings.Contains(a.LastExit.StderrTail, "fake: exiting 3")):
					t.Fatalf("last exit %+v, want status 3 and the stderr line", a.LastExit)
				case how == "SIGKILL" && a.LastExit.Signal != "SIGKILL":
					t.Fatalf("last exit %+v, want SIGKILL", a.LastExit)
				}
				if a.SessionID != id {
					t.Fatalf("session id %q after restart, want %q", a.SessionID, id)
				}
				launches := e.launches(h)
				if len(launches) != 2 {
					t.Fatalf("launches %q, want 2", launches)
				}
				if want := resumeArgs(h, id); !testutil.HasSeq(launches[1], want) {
					t.Fatalf("restart argv %q lacks %q", launches[1], want)
				}
				if e.panePID(h) == pid1 {
					t.Fatal("pane pid unchanged after restart")
				}
				if got := e.paneID(h); got != paneID {
					t.Fatalf("pane id %s after restart, want %s (respawned in place)", got, paneID)
				}
				// The resumed TUI takes messages.
				res, err := m.Send(context.Background(), h, "after restart")
				if err != nil {
					t.Fatal(err)
				}
				waitDelivered(t, m, h, res.ID)
			})
		}
	}
}

func TestQuickExitOnResumeStartsFresh(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withEnv(map[string]string{"FAKE_EXIT_ON_RESUME": "7"}))
			m := e.manager()
			id := spawnWithSession(t, e, m, h)

			res, err := m.Send(context.Background(), h, "fake-exit 3")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
			// exit 3 → resume launch → exits 7 at once → fresh launch.
			waitFor(t, "fresh launch after the poisoned resume", 20*time.Second, func() bool {
				l := e.launches(h)
				return len(l) >= 3 && mustGet(t, m, h).State == api.StateRunning
			})
			launches := e.launches(h)
			if len(launches) != 3 {
				t.Fatalf("launches %q, want exactly 3 (no crash loop)", launches)
			}
			if !testutil.HasSeq(launches[1], resumeArgs(h, id)) {
				t.Fatalf("second launch %q should resume %s", launches[1], id)
			}
			if isResume(h, launches[2]) {
				t.Fatalf("third launch %q should be fresh", launches[2])
			}
			a := mustGet(t, m, h)
			if a.LastExit == nil || a.LastExit.Status != 7 {
				t.Fatalf("last exit %+v, want status 7", a.LastExit)
			}
			if testutil.PinsID(h) {
				if a.SessionID == "" || a.SessionID == id {
					t.Fatalf("%s session id %q, want a new pinned id (old %s)", h, a.SessionID, id)
				}
				if !testutil.HasSeq(launches[2], testutil.PinArgs(h, a.SessionID)) {
					t.Fatalf("fresh %s launch %q does not pin %s", h, launches[2], a.SessionID)
				}
			} else if a.SessionID != "" {
				t.Fatalf("%s session id %q kept after the poisoned resume; want it cleared", h, a.SessionID)
			}
			// And the fresh TUI works.
			res, err = m.Send(context.Background(), h, "fresh start")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
		})
	}
}

// A TUI that keeps crashing is restarted with a growing delay: 100, 200,
// 400, 400 ms under the test policy (5, 10, 20, 40, 60 s by default).
func TestCrashLoopBacksOff(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_CRASH_AFTER_MS": "150"}))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	var gaps []time.Duration
	var lastExit time.Time
	waitFor(t, "four restarts", 30*time.Second, func() bool {
		a := mustGet(t, m, "codex")
		if a.LastExit != nil && !a.LastExit.At.Equal(lastExit) {
			lastExit = a.LastExit.At
		}
		if a.StartedAt != nil && !lastExit.IsZero() && a.StartedAt.After(lastExit) {
			gap := a.StartedAt.Sub(lastExit)
			if len(gaps) == 0 || gaps[len(gaps)-1] != gap {
				gaps = append(gaps, gap)
			}
		}
		return a.Restarts >= 4
	})
	want := []time.Duration{100, 200, 400, 400}
	if len(gaps) < 3 {
		t.Fatalf("saw gaps %v", gaps)
	}
	for i, g := range gaps {
		if i >= len(want) {
			break
		}
		if g < want[i]*time.Millisecond {
			t.Fatalf("restart %d came %v after the exit, want at least %v (gaps %v)", i+1, g, want[i]*time.Millisecond, gaps)
		}
	}
	a := mustGet(t, m, "codex")
	if a.LastExit == nil || a.LastExit.Status != 3 || !strings.Contains(a.LastExit.StderrTail, "crashing") {
		t.Fatalf("last exit %+v", a.LastExit)
	}
}

// A stored conversation leo cannot check (opencode's `session list` does
// not answer) is resumed, not dropped: dropping it would start the agent
// fresh behind the user's back, while a resume of a conversation that
// really is gone exits at once and the quick-exit rule starts fresh.
func TestUncheckableConversationIsResumed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	id := spawnWithSession(t, e, m, "opencode")
	e.extraEnv["FAKE_SESSION_LIST_FAIL"] = "1"
	e.writeConfig()
	m.ConfigChanged()
	if err := syscall.Kill(e.panePID("opencode"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "restart", 20*time.Second, func() bool {
		a := mustGet(t, m, "opencode")
		return a.Restarts == 1 && a.State == api.StateRunning
	})
	launches := e.launches("opencode")
	if want := resumeArgs("opencode", id); len(launches) != 2 || !testutil.HasSeq(launches[1], want) {
		t.Fatalf("relaunch %q does not resume %s", launches, id)
	}
	if a := mustGet(t, m, "opencode"); a.SessionID != id {
		t.Fatalf("session %q after the restart, want %q", a.SessionID, id)
	}
}
