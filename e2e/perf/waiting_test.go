package perf

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
)

const waitingAgents = 10

// BenchmarkDaemonWaiting10: the daemon's CPU (% of one core, schedstat)
// while 10 agents wait for their TUIs to become ready (fakes that stay on
// their start screen), next to the same daemon with 10 ready, idle agents
// measured in the same run. Readiness is waited for by looking at the
// screen with a backoff (10 looks at 10 ms, then doubling to 250 ms), not
// by polling every 10 ms. Target: well under 1% of a core per waiting agent.
func BenchmarkDaemonWaiting10(b *testing.B) {
	const window = 10 * time.Second
	measure := func(slowStart bool) (daemonPct, serverPct float64) {
		w := leoproc.New(b)
		knobs := map[string]string{}
		if slowStart {
			knobs["FAKE_SLOW_START_MS"] = "3600000"
		}
		w.WriteConfig(knobs)
		d, _ := w.Start(60 * time.Second)
		ctx := context.Background()
		for i := range waitingAgents {
			h := leoproc.Harnesses[i%len(leoproc.Harnesses)]
			if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h, Name: fmt.Sprintf("w-%02d", i)}); err != nil {
				b.Fatal(err)
			}
		}
		want := api.StateRunning
		if slowStart {
			want = api.StateStarting
		}
		w.WaitAll(2*time.Minute, "every agent "+string(want), func(as []api.Agent) bool {
			if len(as) < waitingAgents {
				return false
			}
			for _, a := range as {
				if a.State != want {
					return false
				}
			}
			return true
		})
		// Past the quick first looks: the waits are at their slowest pace
		// (and well inside the 60 s readiness limit).
		time.Sleep(5 * time.Second)
		serverPID := tmuxServerPID(b, w)
		n0, s0 := cpuNanos(b, d.PID), cpuTicks(b, serverPID)
		t0 := time.Now()
		time.Sleep(window) // the measured window
		n1, s1 := cpuNanos(b, d.PID), cpuTicks(b, serverPID)
		elapsed := time.Since(t0)
		return float64(n1-n0) / float64(elapsed) * 100, ticksPct(s1-s0, elapsed)
	}
	var waiting, idle, waitingServer, idleServer float64
	for b.Loop() {
		idle, idleServer = measure(false)
		waiting, waitingServer = measure(true)
	}
	b.ReportMetric(waiting, "waiting-cpu-%")
	b.ReportMetric(idle, "idle-cpu-%")
	b.ReportMetric((waiting-idle)/waitingAgents, "cpu-%/waiting-agent")
	b.ReportMetric(waitingServer, "tmux-server-waiting-cpu-%")
	b.ReportMetric(idleServer, "tmux-server-idle-cpu-%")
	verdict(b, (waiting-idle)/waitingAgents < 0.5, "daemon CPU per waiting agent %.3f%% of a core (10 waiting: %.2f%%, 10 idle: %.2f%%; target well under 1%%)", (waiting-idle)/waitingAgents, waiting, idle)
}
