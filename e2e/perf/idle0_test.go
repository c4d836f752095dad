package perf

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
)

// BenchmarkDaemonIdle0: the daemon with no agents over a 10 s window: the
// tmux commands it issued (counted by the stand-in tmux, processes and
// control-mode commands alike) and its CPU (% of one core, schedstat).
// Floor: zero — an empty fleet has nothing to look at. Target: no tmux
// command at all, CPU < 1% of a core.
func BenchmarkDaemonIdle0(b *testing.B) {
	realTmux, err := exec.LookPath("tmux")
	if err != nil {
		b.Fatal(err)
	}
	w := leoproc.New(b)
	shimLog := filepath.Join(w.UserEnv["HOME"], "tmux-commands.log")
	w.PathPrefix = filepath.Dir(leoproc.Build(b, "github.com/blackpaw-studio/leo/e2e/perf/tmuxshim", "tmux"))
	w.ExtraEnv = map[string]string{"LEO_SHIM_TMUX": realTmux, "LEO_SHIM_LOG": shimLog}
	w.WriteConfig(nil)
	d, _ := w.Start(60 * time.Second)
	const window = 10 * time.Second
	var cpuPct float64
	var cmds []string
	measure := func() {
		quiet(b, d.PID, 3*time.Second, 60*time.Second)
		before := readLines(b, shimLog)
		n0, t0 := cpuNanos(b, d.PID), time.Now()
		time.Sleep(window) // the measured window
		n1, elapsed := cpuNanos(b, d.PID), time.Since(t0)
		cmds = readLines(b, shimLog)[len(before):]
		cpuPct = float64(n1-n0) / float64(elapsed) * 100
	}
	for b.Loop() {
		measure()
	}
	b.ReportMetric(float64(len(cmds)), "tmux-cmds")
	b.ReportMetric(float64(len(cmds))*float64(time.Minute)/float64(window), "tmux-cmds/min")
	b.ReportMetric(cpuPct, "idle-cpu-%")
	if len(cmds) > 0 {
		b.Logf("tmux commands in the window: %s", strings.Join(cmds[:min(len(cmds), 10)], "; "))
	}
	verdict(b, len(cmds) == 0, "no agents: %d tmux commands over %v (floor and target: 0)", len(cmds), window)
	verdict(b, cpuPct < 1, "no agents: daemon idle CPU %.3f%% of a core (target < 1%%)", cpuPct)
}

// readLines is the shim's log so far; none before the first command.
func readLines(b *testing.B, path string) []string {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		b.Fatal(err)
	}
	if s := strings.TrimRight(string(data), "\n"); s != "" {
		return strings.Split(s, "\n")
	}
	return nil
}
