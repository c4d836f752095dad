package e2e

import (
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/service"
)

// unitCommand builds the daemon's command exactly as the systemd unit
// `leo service install` writes for this world would run it: ExecStart's
// argv and the unit's Environment= lines over the user manager's
// environment, in a process group of its own (the unit's cgroup stands
// apart from the test). It returns the unit too.
func unitCommand(t *testing.T, w world) (*exec.Cmd, service.Unit) {
	t.Helper()
	env := map[string]string{}
	for _, kv := range w.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	s, err := service.NewSystemd(service.Options{
		Home:        w.Home,
		DefaultRoot: home.DefaultRoot(func(k string) string { return env[k] }),
		Program:     leoproc.Binary(t),
		Env:         map[string]string{"PATH": env["PATH"]},
		UserHome:    env["HOME"],
		UID:         os.Getuid(),
	})
	if err != nil {
		t.Fatal(err)
	}
	unit := s.Unit()
	// The user manager's environment: HOME and the like, not LEO_HOME —
	// the unit must carry that itself.
	delete(env, "LEO_HOME")
	delete(env, "PATH")
	var argv []string
	for _, sec := range unit.Sections {
		for _, e := range sec.Entries {
			switch e.Key {
			case "ExecStart":
				if strings.ContainsAny(e.Value, `"\%$`) {
					t.Fatalf("ExecStart %q needs unquoting this test does not do", e.Value)
				}
				argv = strings.Fields(e.Value)
			case "Environment":
				k, v, _ := strings.Cut(e.Value, "=")
				env[k] = v
			}
		}
	}
	if env["LEO_HOME"] != w.Home.Root {
		t.Fatalf("the unit does not pass the home: %+v", unit)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, unit
}

func unitValue(u service.Unit, section, key string) string {
	for _, s := range u.Sections {
		if s.Name != section {
			continue
		}
		for _, e := range s.Entries {
			if e.Key == key {
				return e.Value
			}
		}
	}
	return ""
}

func tmuxServerPID(t *testing.T, w world) int {
	t.Helper()
	out, err := w.Tmux("display-message", "-p", "#{pid}")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("tmux server pid %q: %v", out, err)
	}
	return pid
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// The daemon runs the way the unit runs it and is stopped the way systemd
// stops it under the unit's KillMode=process: SIGTERM to the main process
// alone (SIGKILL to it alone after TimeoutStopSec). The tmux server and the
// agent's TUI live on, and the next daemon (Restart=always) adopts the
// agent without relaunching it.
func TestUnitStopLeavesTmuxAndAgentsForTheNextDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude")
	w.WriteConfig(nil)
	cmd, unit := unitCommand(t, w)
	if got := unitValue(unit, "Service", "KillMode"); got != "process" {
		t.Fatalf("KillMode=%q: with systemd's default (control-group) a stop kills tmux and every agent", got)
	}
	if got := unitValue(unit, "Service", "Restart"); got != "always" {
		t.Fatalf("Restart=%q", got)
	}
	d1 := w.StartCommand(cmd)
	if err := w.WaitReady(d1, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	sid := w.firstSession("claude")
	before := w.sessions()
	server := tmuxServerPID(t, w)
	if len(before) != 1 || !alive(before["leo-claude"]) || !alive(server) {
		t.Fatalf("sessions %v, tmux server %d", before, server)
	}
	// --supervised, as in ExecStart: the log is the home's service.log.
	if data, err := os.ReadFile(w.Home.ServiceLogPath()); err != nil || !strings.Contains(string(data), "ready") {
		t.Fatalf("service.log: %v %q", err, data)
	}

	// systemctl --user stop (or the stop half of restart) with KillMode=process.
	d1.Kill(syscall.SIGTERM)
	if !alive(server) || tmuxServerPID(t, w) != server {
		t.Fatal("stopping the daemon took the tmux server down")
	}
	if after := w.sessions(); !maps.Equal(after, before) || !alive(after["leo-claude"]) {
		t.Fatalf("sessions after the stop %v, want %v alive", after, before)
	}

	// Restart=always: the next daemon, run the same way, adopts the agent.
	next, _ := unitCommand(t, w)
	d2 := w.StartCommand(next)
	if err := w.WaitReady(d2, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if after := w.sessions(); !maps.Equal(after, before) {
		t.Fatalf("sessions %v after the next daemon, want %v (adopted, not relaunched)", after, before)
	}
	if n := len(w.Launches("claude")); n != 1 {
		t.Fatalf("%d launches of the TUI, want 1: the next daemon relaunched it", n)
	}
	if a := w.get("claude"); a.State != api.StateRunning || a.SessionID != sid {
		t.Fatalf("adopted agent %+v", a)
	}
	w.waitDelivered("claude", w.send("claude", "after the restart"))
}
