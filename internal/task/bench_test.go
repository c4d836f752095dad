package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
)

// BenchmarkFiring1000 plans 1,000 enabled tasks that are all due at the
// next minute, on the real clock, with the default cap on concurrent runs,
// and measures the delay from the due time to each firing being taken up
// (its goroutine runs the service's firing: the run is live, listed as
// running, and waits for its run slot in due order): p50 and p99, next to
// two floors measured in the same run: a bare Go timer set for the same
// instant, and, once the runs are over, a bare burst — a timer that starts
// 1,000 goroutines, each noting when it runs (what Go and the machine cost
// for that many goroutines at once, with no scheduler). The one-shot
// runner is a no-op. Target: p99 < 100 ms. One iteration waits for the
// next minute boundary (up to a minute).
func BenchmarkFiring1000(b *testing.B) {
	const tasks = 1000
	dir := b.TempDir()
	var y strings.Builder
	y.WriteString("tasks:\n")
	for i := range tasks {
		fmt.Fprintf(&y, "  t%04d:\n    schedule: \"* * * * *\"\n    prompt_file: p.md\n", i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workspace", "p.md"), []byte("x"), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Parse([]byte(y.String()), filepath.Join(dir, "leo.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	hist, err := OpenHistory(filepath.Join(dir, "history"), 0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var mu sync.Mutex
		var fired []time.Duration
		ran := 0
		all := make(chan struct{})
		svc := NewService(ServiceOptions{
			Config:        func() *config.Config { return cfg },
			History:       hist,
			MaxConcurrent: func() int { return config.DefaultMaxConcurrentRuns },
			Oneshot: func(_ context.Context, j Job) Record {
				mu.Lock()
				if ran++; ran == tasks {
					close(all)
				}
				mu.Unlock()
				return Record{Outcome: OutcomeSucceeded}
			},
		})
		svc.sched = NewScheduler(svc.opts.Clock, func(ctx context.Context, f Firing) {
			d := time.Since(f.Due)
			mu.Lock()
			fired = append(fired, d)
			mu.Unlock()
			svc.fire(ctx, f)
		}, svc.skipped)
		next := time.Now().Truncate(time.Minute).Add(time.Minute)
		if time.Until(next) < 2*time.Second {
			next = next.Add(time.Minute) // plan before the boundary, not during it
		}
		floor := make(chan time.Duration, 1)
		time.AfterFunc(time.Until(next), func() { floor <- time.Since(next) })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { svc.Run(ctx); close(done) }()
		select {
		case <-all:
		case <-time.After(time.Until(next) + 30*time.Second):
			b.Fatalf("only %d of %d tasks ran", ran, tasks)
		}
		cancel()
		<-done
		burst := bareBurst(tasks)
		slices.Sort(fired)
		p := func(ds []time.Duration, q float64) float64 {
			return float64(ds[int(q*float64(len(ds)-1))]) / float64(time.Millisecond)
		}
		fl := float64(<-floor) / float64(time.Millisecond)
		b.ReportMetric(p(fired, 0.5), "fired-p50-ms")
		b.ReportMetric(p(fired, 0.99), "fired-p99-ms")
		b.ReportMetric(fl, "floor-timer-ms")
		b.ReportMetric(p(burst, 0.99), "floor-burst-p99-ms")
		b.Logf("1000 tasks due at %s, %d runs at a time: fired p50 %.1f ms, p99 %.1f ms (target p99 < 100 ms); a bare timer for the same instant: %.1f ms late; a bare burst of 1000 goroutines: p50 %.1f ms, p99 %.1f ms",
			next.Format("15:04:05"), config.DefaultMaxConcurrentRuns, p(fired, 0.5), p(fired, 0.99), fl, p(burst, 0.5), p(burst, 0.99))
	}
}

// bareBurst is the floor of a firing of n goroutines at once: a timer
// 100 ms out starts n goroutines, and each notes how late after the
// timer's instant it runs (sorted).
func bareBurst(n int) []time.Duration {
	at := time.Now().Add(100 * time.Millisecond)
	var mu sync.Mutex
	var wg sync.WaitGroup
	late := make([]time.Duration, 0, n)
	wg.Add(n)
	time.AfterFunc(time.Until(at), func() {
		for range n {
			go func() {
				defer wg.Done()
				d := time.Since(at)
				mu.Lock()
				late = append(late, d)
				mu.Unlock()
			}()
		}
	})
	wg.Wait()
	slices.Sort(late)
	return late
}
