package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// Benchmarks print their figure next to the floor measured in the same run
// (docs/agents.md, "Each delivery"): each raw floor is the tmux CLI run one
// process per command, as a script would.

// BenchmarkSend: a message to an idle fake TUI, from Send until the reply
// shows (landed, submitted, echoed), against load-buffer + paste-buffer -p
// + send-keys Enter + polling capture-pane on a second pane of the same
// fake in the same server.
func BenchmarkSend(b *testing.B) {
	for _, h := range harnesses {
		b.Run(h, func(b *testing.B) {
			e := newEnv(b, withEnv(map[string]string{"FAKE_TURN_MS": "1"}))
			m := e.manager()
			ctx := context.Background()
			adapter, _ := harness.Lookup(h)
			if _, err := m.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
				b.Fatal(err)
			}
			e.waitState(m, h, api.StateRunning)
			paneID := e.paneID(h)

			raw := testutil.NewRawTmux(e.tmux)
			rawName := "raw-" + h
			dir := filepath.Join(e.workspace, h)
			rawEnv, rawArgv := e.rawLaunch(h)
			raw.NewSessionWithEnv(b, rawName, dir, rawEnv, rawArgv...)
			waitFor(b, "raw fake ready", 20*time.Second, func() bool {
				return adapter.Screen().Classify(raw.Capture(b, "="+rawName+":")).State == harness.ScreenReady
			})

			var leo, floor time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				msg := fmt.Sprintf("bench %d", i)
				start := time.Now()
				res, err := m.Send(ctx, h, msg)
				if err != nil {
					b.Fatal(err)
				}
				testutil.WaitForEvery(b, 20*time.Second, time.Millisecond, func() bool {
					out, _ := e.tmux.Capture(ctx, paneID)
					return strings.Contains(out, "echo: "+msg)
				}, "echo")
				leo += time.Since(start)
				waitDelivered(b, m, h, res.ID)

				rawMsg := fmt.Sprintf("raw %d", i)
				start = time.Now()
				if pt, ok := adapter.(harness.PasteTiming); ok && pt.EnterDelay() > 0 {
					// An Enter right after the paste is a newline in codex
					// (paste-burst window); the floor is the documented
					// minimal script: paste, wait 150 ms, Enter.
					rawPasteWaitEnter(b, raw, "="+rawName+":", rawMsg, 150*time.Millisecond)
				} else {
					raw.PasteAndSubmit(b, "="+rawName+":", rawMsg, "echo: "+rawMsg)
				}
				floor += time.Since(start)
				// Let both TUIs settle before the next round.
				time.Sleep(20 * time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(ms(leo)/float64(b.N), "leo-ms/send")
			b.ReportMetric(ms(floor)/float64(b.N), "raw-ms/send")
			b.ReportMetric(float64(leo)/float64(floor), "leo/raw")
			if t, ok := m.agents[h].target(); ok {
				b.ReportMetric(ms(t.EnterDelay), "adapter-enter-delay-ms")
			}
		})
	}
}

func rawPasteWaitEnter(b *testing.B, raw testutil.RawTmux, target, text string, wait time.Duration) {
	b.Helper()
	if _, err := raw.Exec([]byte(text), "load-buffer", "-b", "raw-floor", "-"); err != nil {
		b.Fatal(err)
	}
	raw.Run(b, "paste-buffer", "-p", "-r", "-d", "-b", "raw-floor", "-t", target)
	time.Sleep(wait)
	raw.Run(b, "send-keys", "-t", target, "Enter")
	testutil.WaitForEvery(b, 10*time.Second, time.Millisecond, func() bool { return strings.Contains(raw.Capture(b, target), "echo: "+text) }, "raw delivery")
}

// rawLaunch is the fake harness launched bare, with the template's env, for
// the floor's pane: the env to set in the pane and the program's argv.
func (e *testEnv) rawLaunch(h string) (map[string]string, []string) {
	env := map[string]string{"FAKE_TURN_MS": "1", "FAKE_HARNESS_LOG": e.harnLog + ".raw"}
	for k, v := range e.userHome {
		env[k] = v
	}
	return env, append([]string{filepath.Join(e.fakeDir, h)}, testutil.FreshArgs(h)...)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkSpawn100: spawning 100 agents one after another, each spawn
// followed by a raw new-session of the same program on the same server
// (killed at once, so the raw session meets the same fleet leo's spawn
// met). Reported for the whole run and for each half: a spawn costs the
// same at 50 agents as at 1 when leo's second half grows no more than
// raw's does.
func BenchmarkSpawn100(b *testing.B) {
	const n = 100
	var leo, floor [2]time.Duration
	var writes atomic.Int64
	for i := 0; i < b.N; i++ {
		e := newEnv(b)
		// Counts the writes of agents.json (the guard runs before each).
		e.tuneOpts = func(o *Options) { o.SaveGuard = func() error { writes.Add(1); return nil } }
		m := e.manager()
		ctx := context.Background()
		raw := testutil.NewRawTmux(e.tmux)
		dir := filepath.Join(e.workspace, "codex")
		rawEnv, argv := e.rawLaunch("codex")
		for j := 0; j < n; j++ {
			half := j * 2 / n
			start := time.Now()
			if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
				b.Fatal(err)
			}
			leo[half] += time.Since(start)

			start = time.Now()
			raw.NewSessionWithEnv(b, "raw", dir, rawEnv, argv...)
			floor[half] += time.Since(start)
			b.StopTimer()
			raw.Run(b, "kill-session", "-t", "=raw")
			b.StartTimer()
		}
		b.StopTimer()
		m.Close()
		e.tmux.KillServer(ctx)
		b.StartTimer()
	}
	per := func(d time.Duration, count int) float64 { return ms(d) / float64(b.N*count) }
	b.ReportMetric(per(leo[0]+leo[1], n), "leo-ms/agent")
	b.ReportMetric(per(floor[0]+floor[1], n), "raw-ms/agent")
	b.ReportMetric(float64(leo[0]+leo[1])/float64(floor[0]+floor[1]), "leo/raw")
	b.ReportMetric(per(leo[0], n/2), "leo-ms/agent-first50")
	b.ReportMetric(per(leo[1], n/2), "leo-ms/agent-second50")
	b.ReportMetric(per(floor[0], n/2), "raw-ms/agent-first50")
	b.ReportMetric(per(floor[1], n/2), "raw-ms/agent-second50")
	b.ReportMetric(float64(writes.Load())/float64(b.N*n), "writes/agent")
	b.ReportMetric(float64(leo[1])/float64(leo[0]), "leo-second/first")
	b.ReportMetric(float64(floor[1])/float64(floor[0]), "raw-second/first")
}

// BenchmarkSpawnIntoFleet: one spawn into a fleet of 0 and of 400 live
// agents (adopted by restore, no supervision loop running), each against a
// raw new-session on the same server right after it (then killed). A spawn
// must cost as much more at 400 as raw's does: nothing leo does per spawn
// may grow with the fleet.
func BenchmarkSpawnIntoFleet(b *testing.B) {
	for _, n := range []int{0, 400} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			e := newEnv(b)
			liveFleet(b, e, n)
			m := e.newManager()
			ctx := context.Background()
			if _, err := m.restore(ctx); err != nil {
				b.Fatal(err)
			}
			raw := testutil.NewRawTmux(e.tmux)
			dir := filepath.Join(e.workspace, "codex")
			rawEnv, argv := e.rawLaunch("codex")
			var leo, floor time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
					b.Fatal(err)
				}
				leo += time.Since(start)
				start = time.Now()
				raw.NewSessionWithEnv(b, "raw", dir, rawEnv, argv...)
				floor += time.Since(start)
				b.StopTimer()
				raw.Run(b, "kill-session", "-t", "=raw")
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(ms(leo)/float64(b.N), "leo-ms/spawn")
			b.ReportMetric(ms(floor)/float64(b.N), "raw-ms/spawn")
			b.ReportMetric(float64(leo)/float64(floor), "leo/raw")
		})
	}
}

// BenchmarkRecordChange: one change to one agent's record (saved, then in
// memory) with 1 and with 1,000 agents in the manager, against two floors
// measured in the same run and directory: an atomic write of a file
// holding that one record (the change must cost the same at both sizes),
// and an atomic write of agents.json's own bytes (what a file holding
// every record costs to write at that size, whoever encodes it).
func BenchmarkRecordChange(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			e := newEnv(b)
			m := e.newManager()
			now := time.Now()
			var last *agent
			for i := 0; i < n; i++ {
				r := &Record{Name: fmt.Sprintf("codex-%d", i), Template: "codex", Harness: "codex", Workspace: e.workspace,
					State: api.StateRunning, PaneID: fmt.Sprintf("%%%d", i), PanePID: 10000 + i, CreatedAt: now, StartedAt: &now,
					SessionID: "0198a7c2-1111-2222-3333-444455556666", EnvKeys: []string{"API_KEY", "HOME"}}
				last = m.newAgent(r)
				m.agents[r.Name] = last
			}
			if err := m.save(); err != nil {
				b.Fatal(err)
			}
			one, err := json.MarshalIndent(storeFile{Version: storeVersion, Agents: []*Record{last.rec}}, "", "  ")
			if err != nil {
				b.Fatal(err)
			}
			whole, err := os.ReadFile(e.home.AgentsPath())
			if err != nil {
				b.Fatal(err)
			}
			dir := filepath.Dir(e.home.AgentsPath())
			var leo, floor, file time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := m.commit(last, func(r *Record) { r.Restarts++ }, false); err != nil {
					b.Fatal(err)
				}
				leo += time.Since(start)
				start = time.Now()
				if err := statefile.Write(filepath.Join(dir, "floor-one.json"), one, 0o600); err != nil {
					b.Fatal(err)
				}
				floor += time.Since(start)
				start = time.Now()
				if err := statefile.Write(filepath.Join(dir, "floor-file.json"), whole, 0o600); err != nil {
					b.Fatal(err)
				}
				file += time.Since(start)
			}
			b.StopTimer()
			if last.rec.Restarts != b.N {
				b.Fatalf("restarts %d after %d changes", last.rec.Restarts, b.N)
			}
			b.ReportMetric(float64(leo.Microseconds())/float64(b.N), "leo-µs/change")
			b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "one-record-µs/write")
			b.ReportMetric(float64(file.Microseconds())/float64(b.N), "whole-file-µs/write")
			b.ReportMetric(float64(leo)/float64(floor), "leo/one-record")
			b.ReportMetric(float64(len(whole))/1024, "file-KiB")
		})
	}
}

// BenchmarkRecordChangeConcurrent: 16 agents of 1,000 each changed at
// once, against the same 16 changes one after another: saves of different
// agents that meet share one write (writes/change below 1).
func BenchmarkRecordChangeConcurrent(b *testing.B) {
	const n, together = 1000, 16
	e := newEnv(b)
	var writes atomic.Int64
	e.tuneOpts = func(o *Options) { o.SaveGuard = func() error { writes.Add(1); return nil } }
	m := e.newManager()
	now := time.Now()
	var some []*agent
	for i := 0; i < n; i++ {
		r := &Record{Name: fmt.Sprintf("codex-%d", i), Template: "codex", Harness: "codex", Workspace: e.workspace,
			State: api.StateRunning, CreatedAt: now, StartedAt: &now}
		a := m.newAgent(r)
		m.agents[r.Name] = a
		if i%(n/together) == 0 {
			some = append(some, a)
		}
	}
	if err := m.save(); err != nil {
		b.Fatal(err)
	}
	bump := func(r *Record) { r.Restarts++ }
	var leo, serial time.Duration
	var leoWrites int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w0 := writes.Load()
		start := time.Now()
		var wg sync.WaitGroup
		for _, a := range some {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := m.commit(a, bump, false); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		leo += time.Since(start)
		leoWrites += writes.Load() - w0
		start = time.Now()
		for _, a := range some {
			if err := m.commit(a, bump, false); err != nil {
				b.Fatal(err)
			}
		}
		serial += time.Since(start)
	}
	b.StopTimer()
	for _, a := range some {
		if a.rec.Restarts != 2*b.N {
			b.Fatalf("%s: restarts %d after %d changes", a.rec.Name, a.rec.Restarts, 2*b.N)
		}
	}
	changes := float64(b.N * together)
	b.ReportMetric(float64(leo.Microseconds())/changes, "together-µs/change")
	b.ReportMetric(float64(serial.Microseconds())/changes, "one-by-one-µs/change")
	b.ReportMetric(float64(leoWrites)/changes, "together-writes/change")
}

// liveFleet makes n agents whose tmux sessions run (a tiny stand-in
// program) and whose records say running, as a daemon leaves them.
func liveFleet(tb testing.TB, e *testEnv, n int) {
	tb.Helper()
	ctx := context.Background()
	recs := make([]*Record, 0, n)
	now := time.Now()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("a%03d", i)
		p, err := e.tmux.NewSession(ctx, tmux.SessionSpec{Name: TmuxSession(name), Dir: e.workspace, Argv: []string{"/bin/cat"}, Width: 80, Height: 24})
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, &Record{Name: name, Template: "codex", Harness: "codex", Workspace: e.workspace,
			State: api.StateRunning, PaneID: p.PaneID, PanePID: p.PID, CreatedAt: now, StartedAt: &now})
	}
	if err := os.MkdirAll(e.workspace, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := NewStore(e.home.AgentsPath()).Save(func() []*Record { return recs }); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkRestore200: a new daemon adopting 200 live agents. Target:
// under 2 s, no relaunch.
func BenchmarkRestore200(b *testing.B) {
	e := newEnv(b)
	liveFleet(b, e, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := e.newManager()
		st, err := m.restore(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if st.Adopted != 200 || st.Relaunched != 0 {
			b.Fatalf("restore %+v, want 200 adopted and none relaunched", st)
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/restore")
}

// BenchmarkSweep: one supervision sweep over n idle agents. Its tmux calls
// must not grow with n (one list-panes), and at 200 it must take < 5 ms.
func BenchmarkSweep(b *testing.B) {
	for _, n := range []int{10, 200} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			e := newEnv(b)
			liveFleet(b, e, n)
			m := e.newManager()
			if _, err := m.restore(context.Background()); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			m.Sweep(ctx) // warm: connects the control client
			var calls int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := m.Sweep(ctx)
				calls += st.TmuxCalls
				if st.Actions != 0 {
					b.Fatalf("idle sweep took %d actions", st.Actions)
				}
			}
			b.ReportMetric(float64(calls)/float64(b.N), "tmux-calls/sweep")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/sweep")
		})
	}
}

// BenchmarkList200: listing 200 agents from the manager's own state,
// against `tmux list-sessions` on the same server.
func BenchmarkList200(b *testing.B) {
	e := newEnv(b)
	liveFleet(b, e, 200)
	m := e.newManager()
	if _, err := m.restore(context.Background()); err != nil {
		b.Fatal(err)
	}
	raw := testutil.NewRawTmux(e.tmux)
	var leo, floor time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if got := len(m.List()); got != 200 {
			b.Fatalf("listed %d", got)
		}
		leo += time.Since(start)
		start = time.Now()
		raw.ListSessions(b)
		floor += time.Since(start)
	}
	b.ReportMetric(float64(leo.Microseconds())/float64(b.N), "leo-µs/list")
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "raw-µs/list")
}
