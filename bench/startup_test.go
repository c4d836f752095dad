package bench

import (
	"context"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
)

// BenchmarkCLIStartup: `leo agent list --json` as a whole process, with a
// daemon running 100 agents (spread over the harnesses), against two floors run
// alternately in the same loop: `tmux ls` on the daemon's tmux server, and
// a hello-world Go binary built the same way (bench/hello); `leo version`
// runs beside them to split start-up from the command's own work. Medians of wall
// and CPU (user + system) time; on a busy machine compare the CPU figures.
// Targets: leo no slower than `tmux ls`; `leo version` near hello.
//
//	go test -run '^$' -bench CLIStartup -benchtime 40x ./bench/
func BenchmarkCLIStartup(b *testing.B) {
	w := leoproc.New(b)
	w.WriteConfig(nil)
	w.Start(60 * time.Second)
	ctx := context.Background()
	w.SpawnMany(ctx, "bench", startupAgents, 8, 5*time.Minute)
	out, err := w.Leo(ctx, "agent", "list", "--json")
	if err != nil {
		b.Fatal(err)
	}
	var list struct {
		Agents []api.Agent `json:"agents"`
	}
	if err := json.Unmarshal(out, &list); err != nil || len(list.Agents) != startupAgents {
		b.Fatalf("leo agent list --json: %v\n%s", err, out)
	}
	b.ReportMetric(float64(len(out)), "list-bytes")

	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		b.Fatal(err)
	}
	runs := []struct {
		name string
		argv []string
	}{
		{"leo", []string{leoproc.Binary(b), "agent", "list", "--json"}},
		// leo's own start-up without the command's work: what every
		// command pays.
		{"leo-version", []string{leoproc.Binary(b), "version"}},
		{"tmux", append([]string{tmuxPath}, w.TmuxArgs("ls")...)},
		{"hello", []string{leoproc.Build(b, "github.com/blackpaw-studio/leo/bench/hello", "hello")}},
	}
	wall := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	// One iteration runs each program once, in turn, so every figure is a
	// median over the same stretch of time; -benchtime 40x gives 40 of each.
	round := func() {
		for _, r := range runs {
			cmd := exec.Command(r.argv[0], r.argv[1:]...)
			cmd.Env = w.Env()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v: %s", strings.Join(r.argv, " "), err, stderr.String())
			}
			wall[r.name] = append(wall[r.name], time.Since(t0))
			cpu[r.name] = append(cpu[r.name], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	// The work is in a func, as in e2e/perf: the compiler's b.Loop
	// keep-alive rewrite has crashed (go1.26.8) on bodies like this inline.
	for b.Loop() {
		round()
	}
	for _, r := range runs {
		b.ReportMetric(ms(median(wall[r.name])), r.name+"-ms")
		b.ReportMetric(ms(median(cpu[r.name])), r.name+"-cpu-ms")
	}
	lw, tw, hw := median(wall["leo"]), median(wall["tmux"]), median(wall["hello"])
	lc, tc := median(cpu["leo"]), median(cpu["tmux"])
	b.ReportMetric(float64(lw)/float64(tw), "leo/tmux")
	b.ReportMetric(float64(lc)/float64(tc), "leo/tmux-cpu")
	b.ReportMetric(float64(hw)/float64(tw), "hello/tmux")
	vw, vc, hc := median(wall["leo-version"]), median(cpu["leo-version"]), median(cpu["hello"])
	b.ReportMetric(float64(vw)/float64(hw), "version/hello")
	b.Logf("%d agents: leo agent list --json %.2f ms (cpu %.2f, %d bytes), tmux ls %.2f ms (cpu %.2f): leo/tmux %.2f× wall, %.2f× cpu; target ≤ 1.0×",
		startupAgents, ms(lw), ms(lc), len(out), ms(tw), ms(tc), float64(lw)/float64(tw), float64(lc)/float64(tc))
	b.Logf("leo version %.2f ms (cpu %.2f), hello %.2f ms (cpu %.2f): %.2f× wall, %.2f× cpu",
		ms(vw), ms(vc), ms(hw), ms(hc), float64(vw)/float64(hw), float64(vc)/float64(hc))
}

// startupAgents is the fleet `leo agent list --json` lists.
const startupAgents = 100

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
