package tmux_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

func waitPane(t *testing.T, s *tmux.Server, paneID string, cond func(tmux.PaneInfo) bool, msg string) tmux.PaneInfo {
	t.Helper()
	var last tmux.PaneInfo
	testutil.WaitFor(t, 10*time.Second, func() bool {
		p, err := s.PaneInfo(ctx(t), paneID)
		if err != nil {
			t.Fatalf("PaneInfo(%s): %v", paneID, err)
		}
		last = p
		return cond(p)
	}, msg)
	return last
}

func TestRemainOnExitKeepsExitStatus(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		c := ctx(t)
		// The very first session of a fresh server must already have
		// remain-on-exit, so this one goes first.
		p, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-seven", Argv: []string{"sh", "-c", "exit 7"}})
		if err != nil {
			t.Fatal(err)
		}
		info := waitPane(t, s, p.PaneID, func(p tmux.PaneInfo) bool { return p.ExitKnown() }, "pane of `exit 7` to be dead")
		if !info.HasStatus || info.DeadStatus != 7 || info.DeadSignal != 0 {
			t.Fatalf("dead pane: status=%d has=%v signal=%d, want status 7", info.DeadStatus, info.HasStatus, info.DeadSignal)
		}
		if info.SessionName != "leo-seven" || info.PaneID != p.PaneID {
			t.Fatalf("PaneInfo names %q %q", info.SessionName, info.PaneID)
		}

		p2, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-term", Argv: []string{"sleep", "600"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(p2.PID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		info = waitPane(t, s, p2.PaneID, func(p tmux.PaneInfo) bool { return p.ExitKnown() }, "SIGTERMed pane to be dead")
		if info.DeadSignal != int(syscall.SIGTERM) || info.HasStatus {
			t.Fatalf("signalled pane: signal=%d status=%d has=%v, want signal 15", info.DeadSignal, info.DeadStatus, info.HasStatus)
		}
		// The session outlives its process, so leo can read this later.
		if ok, _ := s.HasSession(c, "leo-term"); !ok {
			t.Fatal("session gone after its process died")
		}

		// respawn-pane restarts in place: same pane id, new process.
		if err := s.RespawnPane(c, p.PaneID, tmux.SessionSpec{Name: "leo-seven", Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
		info = waitPane(t, s, p.PaneID, func(p tmux.PaneInfo) bool { return !p.Dead }, "respawned pane to live")
		if info.PID == p.PID || info.PID == 0 {
			t.Fatalf("respawned pid %d (old %d)", info.PID, p.PID)
		}
	})
}

func TestPanePATHFromOptions(t *testing.T) {
	for _, transport := range []string{"control", "exec"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			bin := t.TempDir()
			// A program only findable through the configured PATH.
			script := filepath.Join(bin, "only-here")
			if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$PATH\" > \"$1\"\nexec sleep 600\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			path := testutil.ToolPATH(t, bin)
			opts := []func(*tmux.Options){testutil.WithPATH(path)}
			if transport == "exec" {
				opts = append(opts, testutil.WithoutControl())
			}
			s := testutil.NewTmux(t, opts...)
			out := filepath.Join(t.TempDir(), "path.out")
			if _, err := s.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-path", Argv: []string{"only-here", out}}); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 5*time.Second, func() bool {
				b, _ := os.ReadFile(out)
				return strings.HasSuffix(string(b), "\n")
			}, "only-here to run and report its PATH")
			b, _ := os.ReadFile(out)
			if got := strings.TrimSpace(string(b)); got != path {
				t.Fatalf("pane PATH = %q, want %q", got, path)
			}
		})
	}
}

func TestSessionEnvPATHAppliedByEnv(t *testing.T) {
	s := testutil.NewTmux(t)
	bin := t.TempDir()
	out := filepath.Join(bin, "path.out")
	if err := os.WriteFile(filepath.Join(bin, "mine"), []byte("#!/bin/sh\necho \"$PATH\" > \"$1\"\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := testutil.ToolPATH(t, bin)
	if _, err := s.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-p2", Argv: []string{"mine", out}, Env: map[string]string{"PATH": want}}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { b, _ := os.ReadFile(out); return len(b) > 0 }, "mine to run")
	b, _ := os.ReadFile(out)
	if got := strings.TrimSpace(string(b)); got != want {
		t.Fatalf("PATH = %q, want %q", got, want)
	}
}

func TestControlModeSurvivesClientKill(t *testing.T) {
	s := testutil.NewTmux(t)
	c := ctx(t)
	if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-a", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	pid := tmux.ControlPID(s)
	if pid == 0 {
		t.Fatal("no control client after NewSession")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return tmux.ControlPID(s) != pid }, "the dead client to be noticed")
	// Commands keep working (by exec meanwhile), and a new client attaches.
	testutil.WaitFor(t, 5*time.Second, func() bool {
		ok, err := s.HasSession(c, "leo-a")
		if err != nil || !ok {
			t.Fatalf("HasSession after client kill: %v %v", ok, err)
		}
		return tmux.ControlPID(s) != 0
	}, "a new control client")
	if tmux.ControlPID(s) == pid {
		t.Fatal("same client pid")
	}
	_, ctl0 := s.Calls()
	if _, err := s.ListPanes(c); err != nil {
		t.Fatal(err)
	}
	if _, ctl := s.Calls(); ctl != ctl0+1 {
		t.Fatalf("ListPanes went by exec after reconnecting (control calls %d → %d)", ctl0, ctl)
	}
}

func TestControlModeEndsWithServer(t *testing.T) {
	s := testutil.NewTmux(t)
	c := ctx(t)
	if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-a", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	if up, err := s.Running(c); !up || err != nil {
		t.Fatalf("Running = %v, %v", up, err)
	}
	if err := s.KillServer(c); err != nil {
		t.Fatal(err)
	}
	if up, err := s.Running(c); up || err != nil {
		t.Fatalf("Running after KillServer = %v, %v", up, err)
	}
	// A new session starts a new server, with a control client again.
	if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-b", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool {
		_, _ = s.HasSession(c, "leo-b")
		return tmux.ControlPID(s) != 0
	}, "control client on the new server")
}

// TestExitStatusNeverLost: tmux 3.3a now and then misses a pane process's
// SIGCHLD (a zombie stays, pane_dead_status stays empty); PaneInfo must
// still come up with the status. Ten fresh servers with three short-lived
// panes each made the race show in most runs before the fix.
func TestExitStatusNeverLost(t *testing.T) {
	for i := 0; i < 10; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			s := testutil.NewTmux(t)
			c := ctx(t)
			var panes []tmux.Pane
			for j := 0; j < 3; j++ {
				p, err := s.NewSession(c, tmux.SessionSpec{Name: fmt.Sprintf("leo-x%d", j), Argv: []string{"sh", "-c", "sleep 0.2; exit 3"}})
				if err != nil {
					t.Fatal(err)
				}
				panes = append(panes, p)
			}
			for _, p := range panes {
				info := waitPane(t, s, p.PaneID, func(p tmux.PaneInfo) bool { return p.ExitKnown() }, "exit status of "+p.PaneID)
				if info.DeadStatus != 3 {
					t.Fatalf("%s: status %d, want 3", p.PaneID, info.DeadStatus)
				}
			}
		})
	}
}

func TestNudgeReap(t *testing.T) {
	s := testutil.NewTmux(t)
	if err := s.NudgeReap(ctx(t)); err != nil {
		t.Fatalf("NudgeReap without a server: %v", err)
	}
	if _, err := s.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-n", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	k := s.Kicks()
	if err := s.NudgeReap(ctx(t)); err != nil || s.Kicks() != k+1 {
		t.Fatalf("NudgeReap: %v (kicks %d → %d)", err, k, s.Kicks())
	}
	if up, _ := s.Running(ctx(t)); !up {
		t.Fatal("SIGCHLD hurt the server")
	}
}
