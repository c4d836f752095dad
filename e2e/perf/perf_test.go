// Package perf benchmarks the real leo daemon process with 200 live agents
// (fake TUIs in real tmux), each figure printed next to its floor measured
// in the same run. They run only with -bench; each does its work once per
// b.Loop iteration, so -benchtime=1x gives every figure:
//
//	go test -run '^$' -bench . -benchtime 1x ./e2e/perf/
package perf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) {
	code := hermetic.Main(m)
	leoproc.Cleanup()
	os.Exit(code)
}

const fleetSize = 200

// fleet is a world whose daemon runs fleetSize idle agents, spread over
// claude, codex and opencode.
type fleet struct {
	w *leoproc.World
	d *leoproc.Daemon
	// shimLog counts the daemon's tmux commands when the fleet was made
	// with the counting stand-in ("" otherwise).
	shimLog string
}

func newFleet(b *testing.B, countTmux bool) *fleet {
	b.Helper()
	w := leoproc.New(b)
	f := &fleet{w: w}
	if countTmux {
		realTmux, err := exec.LookPath("tmux")
		if err != nil {
			b.Fatal(err)
		}
		f.shimLog = filepath.Join(w.UserEnv["HOME"], "tmux-commands.log")
		w.PathPrefix = filepath.Dir(leoproc.Build(b, "github.com/blackpaw-studio/leo/e2e/perf/tmuxshim", "tmux"))
		w.ExtraEnv = map[string]string{"LEO_SHIM_TMUX": realTmux, "LEO_SHIM_LOG": f.shimLog}
	}
	w.WriteConfig(nil)
	f.d, _ = w.Start(60 * time.Second)
	t0 := time.Now()
	w.SpawnMany(context.Background(), "bench", fleetSize, 8, 5*time.Minute)
	b.Logf("%d agents spawned and running in %v", fleetSize, time.Since(t0).Round(time.Millisecond))
	return f
}

// timed runs cmd and returns its wall time and CPU time (user + system).
func timed(b *testing.B, cmd *exec.Cmd) (wall, cpu time.Duration, out []byte) {
	b.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v: %s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	wall = time.Since(t0)
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return wall, cpu, stdout.Bytes()
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkAgentListJSON200: the whole `leo agent list --json` process
// with 200 agents against `tmux list-sessions` exec'd on the same server,
// alternating, 25 of each per iteration (medians reported). Target: leo
// no slower than the floor — it answers from the daemon's own state.
func BenchmarkAgentListJSON200(b *testing.B) {
	f := newFleet(b, false)
	const perIter = 25
	leo := leoproc.Binary(b)
	var leoWall, leoCPU, tmWall, tmCPU []time.Duration
	round := func() {
		for i := 0; i < perIter; i++ {
			cmd := exec.Command(leo, "agent", "list", "--json")
			cmd.Env = f.w.Env()
			wall, cpu, out := timed(b, cmd)
			leoWall, leoCPU = append(leoWall, wall), append(leoCPU, cpu)
			if i == 0 {
				var got struct {
					Agents []api.Agent `json:"agents"`
				}
				if err := json.Unmarshal(out, &got); err != nil || len(got.Agents) != fleetSize {
					b.Fatalf("leo agent list --json: %d agents, err %v", len(got.Agents), err)
				}
			}

			cmd = exec.Command("tmux", f.w.TmuxArgs("list-sessions", "-F", "#{session_name}\t#{session_attached}\t#{session_activity}")...)
			cmd.Env = f.w.Env()
			wall, cpu, out = timed(b, cmd)
			tmWall, tmCPU = append(tmWall, wall), append(tmCPU, cpu)
			if i == 0 && bytes.Count(out, []byte("\n")) < fleetSize {
				b.Fatalf("tmux list-sessions listed %d sessions", bytes.Count(out, []byte("\n")))
			}
		}
	}
	// The work is in a func: the compiler's b.Loop keep-alive rewrite
	// crashes (go1.26.8) on this body inline.
	for b.Loop() {
		round()
	}
	lw, tw := median(leoWall), median(tmWall)
	b.ReportMetric(ms(lw), "leo-ms")
	b.ReportMetric(ms(median(leoCPU)), "leo-cpu-ms")
	b.ReportMetric(ms(tw), "tmux-ms")
	b.ReportMetric(ms(median(tmCPU)), "tmux-cpu-ms")
	b.ReportMetric(float64(lw)/float64(tw), "leo/tmux")
	verdict(b, lw <= tw, "leo agent list --json %.1f ms vs tmux list-sessions %.1f ms (target: no slower)", ms(lw), ms(tw))
}

// BenchmarkDaemonIdle200: with 200 idle agents, over a 10 s window, the
// daemon's CPU (as % of one core: /proc/<pid>/task/*/schedstat, with
// utime+stime from /proc/<pid>/stat logged beside it), its
// RSS (VmRSS) and the tmux commands it issued (counted by a stand-in tmux
// that logs every process start and every control-mode command line),
// per supervisor sweep (one list-panes each). The tmux server's CPU over
// the window is shown too: leo's commands cost it work. Targets: RSS <
// 64 MiB, idle CPU < 1% of a core, a constant number of tmux commands per
// sweep.
func BenchmarkDaemonIdle200(b *testing.B) {
	f := newFleet(b, true)
	serverPID := tmuxServerPID(b, f.w)
	const window = 10 * time.Second
	var cpuPct, serverPct, rss, hwm, perSweep, sweeps, execs float64
	measure := func() {
		// Let the fleet go quiet: the spawns' startup probes and saves.
		quiet(b, f.d.PID, 3*time.Second, 60*time.Second)
		log0 := shimLines(b, f.shimLog)
		c0, s0 := cpuTicks(b, f.d.PID), cpuTicks(b, serverPID)
		n0 := cpuNanos(b, f.d.PID)
		t0 := time.Now()
		time.Sleep(window) // the measured window
		c1, s1 := cpuTicks(b, f.d.PID), cpuTicks(b, serverPID)
		n1 := cpuNanos(b, f.d.PID)
		elapsed := time.Since(t0)
		lines := shimLines(b, f.shimLog)[len(log0):]

		// schedstat (ns, per thread) is finer than utime+stime (10 ms
		// ticks); both are logged, the finer one reported.
		cpuPct = float64(n1-n0) / float64(elapsed) * 100
		serverPct = ticksPct(s1-s0, elapsed)
		b.Logf("daemon CPU over the window: %.3f ms by schedstat, %d ticks of 10 ms by /proc/%d/stat", float64(n1-n0)/1e6, c1-c0, f.d.PID)
		rss, hwm = statusKiB(b, f.d.PID, "VmRSS"), statusKiB(b, f.d.PID, "VmHWM")
		var ctl, ex, lists int
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "ctl "):
				ctl++
			case strings.HasPrefix(l, "exec "):
				ex++
			}
			if l == "ctl list-panes" || l == "exec list-panes" {
				lists++
			}
		}
		sweeps, execs = float64(lists), float64(ex)
		if lists > 0 {
			perSweep = float64(ctl+ex) / float64(lists)
		}
		b.Logf("window %v: %d tmux commands (%d over control mode, %d processes), %d sweeps", elapsed.Round(time.Millisecond), ctl+ex, ctl, ex, lists)
	}
	for b.Loop() {
		measure()
	}
	b.ReportMetric(cpuPct, "idle-cpu-%")
	b.ReportMetric(rss/1024, "rss-MiB")
	b.ReportMetric(hwm/1024, "peak-rss-MiB")
	b.ReportMetric(perSweep, "tmux-cmds/sweep")
	b.ReportMetric(sweeps, "sweeps")
	b.ReportMetric(execs, "tmux-procs")
	b.ReportMetric(serverPct, "tmux-server-cpu-%")
	verdict(b, rss/1024 < 64, "daemon RSS %.1f MiB (target < 64 MiB)", rss/1024)
	verdict(b, cpuPct < 1, "daemon idle CPU %.2f%% of a core (target < 1%%)", cpuPct)
	verdict(b, sweeps > 0 && perSweep <= 1.0001, "%.2f tmux commands per sweep over %v sweeps (target: constant, 1 list-panes)", perSweep, sweeps)
}

// BenchmarkBootRestore200: SIGKILL the daemon with 200 live agents, start
// a new one, time from its start to /health ready; three cycles per
// iteration (median and worst reported). Every pane must be adopted: same
// pane and pid before and after, in tmux and in the record. Floor: the
// least any restore pays, starting the binary (`leo version`) plus one
// `tmux list-panes -a` of the 200 panes. Target: < 2 s, zero relaunches.
func BenchmarkBootRestore200(b *testing.B) {
	f := newFleet(b, false)
	const cycles = 3
	var took, floors []time.Duration
	relaunched := 0
	cycle := func() {
		for c := 0; c < cycles; c++ {
			before, err := f.w.AgentPanes()
			if err != nil || len(before) != fleetSize {
				b.Fatalf("%d agent sessions before the kill (%v)", len(before), err)
			}
			f.d.Kill(syscall.SIGKILL)
			f.w.Client.Close()
			var d time.Duration
			f.d, d = f.w.Start(60 * time.Second)
			took = append(took, d)
			b.Logf("restore %d: ready %v after the new daemon's start", len(took), d.Round(time.Millisecond))

			after, err := f.w.AgentPanes()
			if err != nil {
				b.Fatal(err)
			}
			recs, err := f.w.ReadAgentsFile()
			if err != nil {
				b.Fatal(err)
			}
			byName := map[string]leoproc.StateRecord{}
			for _, r := range recs {
				byName[r.Name] = r
			}
			for s, ps := range before {
				a, ok := after[s]
				r := byName[strings.TrimPrefix(s, "leo-")]
				if !ok || a[0].PID != ps[0].PID || a[0].PaneID != ps[0].PaneID || r.PanePID != ps[0].PID || r.PaneID != ps[0].PaneID {
					relaunched++
					b.Errorf("%s not adopted: before %+v, after %+v, record %+v", s, ps[0], a, r)
				}
			}
			if len(after) != len(before) {
				b.Errorf("%d agent sessions after the restore, %d before", len(after), len(before))
			}
			floors = append(floors, restoreFloor(b, f.w))
		}
	}
	for b.Loop() {
		cycle()
	}
	b.ReportMetric(ms(median(took)), "restore-ms")
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(ms(took[len(took)-1]), "worst-restore-ms")
	b.ReportMetric(ms(median(floors)), "floor-ms")
	b.ReportMetric(float64(relaunched), "relaunches")
	verdict(b, took[len(took)-1] < 2*time.Second && relaunched == 0, "restore of %d agents: median %.0f ms, worst %.0f ms, %d relaunched (target < 2 s, none)", fleetSize, ms(median(took)), ms(took[len(took)-1]), relaunched)
}

// restoreFloor is `leo version` plus `tmux list-panes -a` on the same server.
func restoreFloor(b *testing.B, w *leoproc.World) time.Duration {
	cmd := exec.Command(leoproc.Binary(b), "version")
	cmd.Env = w.Env()
	v, _, _ := timed(b, cmd)
	cmd = exec.Command("tmux", w.TmuxArgs("list-panes", "-a", "-F", "#{session_name} #{pane_id} #{pane_pid} #{pane_dead}")...)
	cmd.Env = w.Env()
	l, _, _ := timed(b, cmd)
	return v + l
}

// verdict logs whether a target was met; a benchmark reports, it does not
// fail on speed.
func verdict(b *testing.B, ok bool, format string, a ...any) {
	mark := "target met"
	if !ok {
		mark = "TARGET MISSED"
	}
	b.Logf("%s: "+format, append([]any{mark}, a...)...)
}

func tmuxServerPID(b *testing.B, w *leoproc.World) int {
	out, err := w.Tmux("display-message", "-p", "#{pid}")
	if err != nil {
		b.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		b.Fatal(err)
	}
	return pid
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clockTicks = 100

// cpuTicks is utime+stime of pid (all its threads) from /proc/<pid>/stat.
func cpuTicks(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime 14, stime 15.
	rest := string(data[bytes.LastIndexByte(data, ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// cpuNanos is the CPU time of pid's live threads in ns, summed from
// /proc/<pid>/task/*/schedstat (first field: time spent on a CPU).
func cpuNanos(b *testing.B, pid int) int64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no schedstat for pid %d (%v)", pid, err)
	}
	var sum int64
	for _, p := range tasks {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := strings.Fields(string(data))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += n
		}
	}
	return sum
}

func ticksPct(ticks int64, over time.Duration) float64 {
	return float64(ticks) / clockTicks / over.Seconds() * 100
}

// statusKiB reads a kB field of /proc/<pid>/status.
func statusKiB(b *testing.B, pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == field {
			n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// quiet waits until pid used no CPU tick for a whole quiet period (the
// fleet's spawn work is over), or fails after limit.
func quiet(b *testing.B, pid int, period, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		c0 := cpuTicks(b, pid)
		time.Sleep(period)
		c1 := cpuTicks(b, pid)
		if ticksPct(c1-c0, period) < 1 {
			return
		}
		if time.Now().After(deadline) {
			b.Logf("daemon still busy after %v (%.1f%% of a core over the last %v); measuring anyway", limit, ticksPct(c1-c0, period), period)
			return
		}
	}
}

func shimLines(b *testing.B, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}
