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
	"github.com/blackpaw-studio/leo/internal/testutil"
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

// fakeSystemctl is a stand-in for `systemctl --user` that runs the unit's
// daemon as systemd would under KillMode=process: restart sends SIGTERM to
// the daemon alone, waits for it to go, and starts the next one in a
// session of its own (the unit's cgroup). show reports the home's daemon
// as the unit's main process.
const fakeSystemctl = `#!/bin/sh
echo "$*" >> "$FAKE_SYSTEMCTL_LOG"
shift
case "$1" in
show)
	pid=$(head -n1 "$LEO_HOME/state/daemon.lock" 2>/dev/null)
	printf 'LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=%s\nUnitFileState=enabled\n' "${pid:-0}" ;;
restart)
	pid=$(head -n1 "$LEO_HOME/state/daemon.lock" 2>/dev/null)
	if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
		while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	fi
	setsid "$FAKE_LEO" service --supervised </dev/null >>"$FAKE_SYSTEMCTL_LOG.daemon" 2>&1 &
	echo $! > "$FAKE_SYSTEMCTL_PIDFILE" ;;
*)
	exit 1 ;;
esac
`

// leo service restart --json end to end, through a fake systemctl: the
// busy agent's turn holds the restart until it ends, the new daemon (new
// pid) adopts the agent without a relaunch; a daemon that is down is
// started with drained: false.
func TestServiceRestartThroughSystemctl(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude")
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/systemctl", []byte(fakeSystemctl), 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := dir + "/daemon.pid"
	w.PathPrefix = dir
	w.ExtraEnv = map[string]string{
		"FAKE_SYSTEMCTL_LOG":     dir + "/calls",
		"FAKE_SYSTEMCTL_PIDFILE": pidFile,
		"FAKE_LEO":               leoproc.Binary(t),
	}
	// The daemons the fake starts are no children of this test: stop the
	// last one before the tmux server goes (cleanups run last-in first-out).
	t.Cleanup(func() { stopPIDFile(t, pidFile) })
	w.WriteConfig(map[string]string{"FAKE_TURN_MS": "3000"})
	d1 := w.startDaemon()
	w.firstSession("claude")
	before := w.sessions()

	id := w.send("claude", "a long turn")
	w.waitDelivered("claude", id)
	start := time.Now()
	out, err := w.Leo(t.Context(), "service", "restart", "--json")
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) != `{"ok":true,"drained":true,"restarted":true}` {
		t.Fatalf("restart --json printed %q", out)
	}
	if took < time.Second {
		t.Fatalf("restart took %v: it did not wait for the 3 s turn in flight", took)
	}
	if !d1.Exited() {
		t.Fatal("the old daemon still runs")
	}
	hl, err := w.Client.Health(t.Context())
	if err != nil || hl.PID == d1.PID || !hl.Ready {
		t.Fatalf("after restart: %+v %v (old pid %d)", hl, err, d1.PID)
	}
	if after := w.sessions(); !maps.Equal(after, before) || len(w.Launches("claude")) != 1 {
		t.Fatalf("sessions %v (want %v), %d launches: the agent was not adopted", after, before, len(w.Launches("claude")))
	}
	w.waitDelivered("claude", w.send("claude", "to the new daemon"))

	// Down but loaded: a plain start.
	stopPIDFile(t, pidFile)
	out, err = w.Leo(t.Context(), "service", "restart", "--json")
	if err != nil || strings.TrimSpace(string(out)) != `{"ok":true,"drained":false,"restarted":true}` {
		t.Fatalf("restart of a down daemon: %q %v", out, err)
	}
	calls, _ := os.ReadFile(dir + "/calls")
	if got := strings.Count(string(calls), "--user restart leo-"); got != 2 {
		t.Fatalf("systemctl calls:\n%s", calls)
	}
}

// stopPIDFile sends SIGTERM to the daemon whose pid the fake systemctl
// wrote, and waits until it is gone.
func stopPIDFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	testutil.WaitFor(t, 20*time.Second, func() bool { return !alive(pid) || zombie(pid) }, "the fake systemctl's daemon to stop")
}

// zombie: exited, not yet reaped by its parent (init, for setsid's child).
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}
