package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
)

// BenchmarkDaemonTasks1000: the daemon's idle CPU (% of one core,
// schedstat) over a 10 s window and its RSS with 1,000 enabled tasks
// planned (each on its own daily slot, none due in the window), next to the
// same daemon with no tasks, measured in the same run. The scheduler sleeps
// until the next due time (at most a minute), so 1,000 planned tasks cost
// no more CPU at idle than none. Targets: idle CPU < 1% of a core.
// (The firing delay of 1,000 tasks due at once is BenchmarkFiring1000 in
// internal/task.)
func BenchmarkDaemonTasks1000(b *testing.B) {
	const tasks = 1000
	const window = 10 * time.Second
	measure := func(n int) (cpuPct, rssMiB float64) {
		w := leoproc.New(b)
		ws := filepath.Join(w.Workspaces, "tasks")
		if err := os.MkdirAll(ws, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("report\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		var y strings.Builder
		fmt.Fprintf(&y, "defaults:\n  harness: claude\n  workspace: %s\ntasks:\n", ws)
		now := time.Now()
		for i := range n {
			// A daily slot at least an hour away: planned, never due here.
			at := now.Add(time.Hour + time.Duration(i)*time.Minute)
			fmt.Fprintf(&y, "  t%04d:\n    schedule: \"%d %d * * *\"\n    prompt_file: p.md\n", i, at.Minute(), at.Hour())
		}
		if err := os.WriteFile(w.Home.ConfigPath, []byte(y.String()), 0o600); err != nil {
			b.Fatal(err)
		}
		d, _ := w.Start(60 * time.Second)
		quiet(b, d.PID, 3*time.Second, 60*time.Second)
		n0, t0 := cpuNanos(b, d.PID), time.Now()
		time.Sleep(window) // the measured window
		n1, elapsed := cpuNanos(b, d.PID), time.Since(t0)
		return float64(n1-n0) / float64(elapsed) * 100, statusKiB(b, d.PID, "VmRSS") / 1024
	}
	var cpu, cpu0, rss, rss0 float64
	for b.Loop() {
		cpu0, rss0 = measure(0)
		cpu, rss = measure(tasks)
	}
	b.ReportMetric(cpu, "idle-cpu-%")
	b.ReportMetric(cpu0, "no-tasks-idle-cpu-%")
	b.ReportMetric(rss, "rss-MiB")
	b.ReportMetric(rss0, "no-tasks-rss-MiB")
	verdict(b, cpu < 1, "daemon idle CPU with %d tasks planned %.3f%% of a core (no tasks: %.3f%%; target < 1%%); RSS %.1f MiB (no tasks: %.1f MiB)", tasks, cpu, cpu0, rss, rss0)
}
