package perf

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/claude"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// backToBack is how many messages each round sends at once.
const backToBack = 10

// BenchmarkBackToBack: backToBack messages sent at once to one agent whose
// fake TUI answers in 1 ms, through the real daemon, from the first send
// until the last reply shows on the pane — per message, next to the floor
// measured in the same run on the same tmux server: a raw pane of the same
// fake, each message pasted (load-buffer + paste-buffer -p), Enter sent and
// the reply polled for before the next (for codex, the documented minimal
// script: paste, wait 150 ms, Enter). Also the median gap between two
// deliveries' outcomes as the daemon recorded them. Target (issue 16): leo
// within 1.1× the floor for claude and opencode, whose records say when a
// turn ended (no settle wait after a turn shorter than a look).
func BenchmarkBackToBack(b *testing.B) {
	for _, h := range leoproc.Harnesses {
		b.Run(h, func(b *testing.B) {
			w := oneAgent(b, h, "    queue_max: 50\n")
			ctx := context.Background()
			panes, err := w.AgentPanes()
			if err != nil || len(panes["leo-"+h]) != 1 {
				b.Fatalf("panes %v: %v", panes, err)
			}
			pane := panes["leo-"+h][0].PaneID
			capture := func(target string) string {
				out, err := w.Tmux("capture-pane", "-p", "-J", "-t", target)
				if err != nil {
					b.Fatal(err)
				}
				return out
			}
			// A first exchange: the conversation exists (and its id is
			// known) before anything is measured.
			res, err := w.Client.Send(ctx, h, "warm up")
			if err != nil {
				b.Fatal(err)
			}
			if d := w.Delivery(h, res.ID, time.Minute); d == nil || d.Status != "delivered" {
				b.Fatalf("warm-up delivery: %+v", d)
			}
			raw := startRawPane(b, w, h)
			adapter, _ := harness.Lookup(h)
			// The floor waits out the adapter's own Enter delay (codex's
			// paste-burst window) once the paste shows, as leo must.
			var enterDelay time.Duration
			if pt, ok := adapter.(harness.PasteTiming); ok {
				enterDelay = pt.EnterDelay()
			}

			var leo, floor, queued time.Duration
			var gaps []time.Duration
			round := 0
			for b.Loop() {
				round++
				start := time.Now()
				ids := make([]string, backToBack)
				for i := range backToBack {
					res, err := w.Client.Send(ctx, h, fmt.Sprintf("b2b %d-%d", round, i))
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = res.ID
				}
				queued += time.Since(start)
				last := fmt.Sprintf("echo: b2b %d-%d", round, backToBack-1)
				testutil.WaitForEvery(b, 2*time.Minute, 2*time.Millisecond, func() bool {
					return strings.Contains(capture(pane), last)
				}, "the last reply")
				leo += time.Since(start)
				g := deliveryGaps(b, w, h, ids)
				gaps = append(gaps, g...)
				if round == 1 {
					b.Logf("%s: gaps between delivery outcomes, first round: %v", h, g)
				}

				start = time.Now()
				for i := range backToBack {
					rawExchange(b, w, raw, fmt.Sprintf("raw %d-%d", round, i), enterDelay)
				}
				floor += time.Since(start)
			}
			n := float64(round * backToBack)
			b.ReportMetric(ms(leo)/n, "leo-ms/msg")
			b.ReportMetric(ms(floor)/n, "raw-ms/msg")
			b.ReportMetric(float64(leo)/float64(floor), "leo/raw")
			b.ReportMetric(ms(queued)/n, "send-ms/msg")
			sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
			if len(gaps) > 0 {
				b.ReportMetric(ms(gaps[len(gaps)/2]), "delivery-gap-median-ms")
			}
			ratio := float64(leo) / float64(floor)
			verdict(b, ratio <= 1.1, "%s: %.1f ms per message back to back, raw floor %.1f ms (%.2f×; target ≤ 1.1×)", h, ms(leo)/n, ms(floor)/n, ratio)
		})
	}
}

// oneAgent is a daemon (its templates with extra) whose one agent, of
// the fake harness h answering in 1 ms, is running.
func oneAgent(b *testing.B, h, extra string) *leoproc.World {
	b.Helper()
	w := leoproc.New(b)
	w.WriteConfigExtra(extra, map[string]string{"FAKE_TURN_MS": "1"})
	_, _ = w.Start(60 * time.Second)
	if _, err := w.Client.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		b.Fatal(err)
	}
	w.WaitAll(time.Minute, h+" running", func(as []api.Agent) bool {
		return len(as) == 1 && as[0].State == api.StateRunning
	})
	return w
}

// startRawPane starts the fake harness h bare in a pane of the world's tmux
// server (its own workspace, the agents' env), answers its trust dialog and
// waits for its idle input line. It returns the pane's target.
func startRawPane(b *testing.B, w *leoproc.World, h string) string {
	b.Helper()
	dir := filepath.Join(w.Workspaces, "raw-"+h)
	// The env is set in the pane (-e, as leo's spawn sets it): no env(1)
	// in front of the fake, and no PATH but the world's.
	env := map[string]string{"FAKE_TURN_MS": "1", "FAKE_HARNESS_LOG": w.HarnessLog + ".raw"}
	for k, v := range w.UserEnv {
		env[k] = v
	}
	argv := []string{"new-session", "-d", "-s", "raw-" + h, "-x", "200", "-y", "50", "-c", dir}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		argv = append(argv, "-e", k+"="+env[k])
	}
	argv = append(append(argv, "--", filepath.Join(w.Bin, h)), testutil.FreshArgs(h)...)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	if out, err := w.Tmux(argv...); err != nil {
		b.Fatalf("raw pane: %v: %s", err, out)
	}
	target := "=raw-" + h + ":"
	adapter, _ := harness.Lookup(h)
	answered := false
	testutil.WaitForEvery(b, time.Minute, 20*time.Millisecond, func() bool {
		out, err := w.Tmux("capture-pane", "-p", "-J", "-t", target)
		if err != nil {
			return false
		}
		s := adapter.Screen().Classify(out)
		if s.State == harness.ScreenDialog && len(s.DialogKeys) > 0 {
			// Answered once: the dialog may still show while the
			// fake takes the keys, and a second answer would type
			// into its input line.
			if !answered {
				_, _ = w.Tmux(append([]string{"send-keys", "-t", target}, s.DialogKeys...)...)
				answered = true
			}
			return false
		}
		return s.State == harness.ScreenReady && s.Input == ""
	}, "the raw pane ready")
	return target
}

// rawExchange is the floor's one message: pasted into the raw pane
// (load-buffer + paste-buffer -p), Enter sent — for a harness with an
// Enter delay once the paste shows and the delay passed, as leo must — and
// the fake's reply polled for on the pane.
func rawExchange(b *testing.B, w *leoproc.World, raw, msg string, enterDelay time.Duration) {
	b.Helper()
	capture := func() string {
		out, err := w.Tmux("capture-pane", "-p", "-J", "-t", raw)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	if _, err := w.Tmux("set-buffer", "-b", "raw-floor", msg); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Tmux("paste-buffer", "-p", "-r", "-d", "-b", "raw-floor", "-t", raw); err != nil {
		b.Fatal(err)
	}
	if enterDelay > 0 {
		testutil.WaitForEvery(b, time.Minute, time.Millisecond, func() bool {
			return strings.Contains(capture(), msg)
		}, "the raw paste to show")
		<-time.After(enterDelay)
	}
	if _, err := w.Tmux("send-keys", "-t", raw, "Enter"); err != nil {
		b.Fatal(err)
	}
	testutil.WaitForEvery(b, time.Minute, time.Millisecond, func() bool {
		return strings.Contains(capture(), "echo: "+msg)
	}, "raw reply")
}

// deliveryGaps are the times between consecutive outcomes of ids.
func deliveryGaps(b *testing.B, w *leoproc.World, name string, ids []string) []time.Duration {
	b.Helper()
	at := make([]time.Time, len(ids))
	for i, id := range ids {
		d := w.Delivery(name, id, time.Minute)
		if d == nil || d.Status != "delivered" {
			b.Fatalf("message %s: %+v", id, d)
		}
		at[i] = d.At
	}
	var out []time.Duration
	for i := 1; i < len(at); i++ {
		out = append(out, at[i].Sub(at[i-1]))
	}
	return out
}
