package perf

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

// BenchmarkEventsIdle200: 200 idle agents with 0, 1 and 100 readers on
// the event stream (GET /events over the socket): the daemon's CPU and
// RSS over a quiet window each, next to the same daemon with none (the
// floor). Then how soon an event reaches a reader: a reload's
// config.reloaded, timed from the request to its arrival at the slowest
// of 100 readers, next to the request's own round trip (the floor).
// Targets: readers cost no idle CPU (heartbeats only), p99 < 50 ms.
func BenchmarkEventsIdle200(b *testing.B) {
	f := newFleet(b, false)
	const window = 5 * time.Second
	sockClient := &http.Client{Transport: &http.Transport{
		MaxConnsPerHost: 0,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", f.w.Home.SocketPath())
		},
	}}
	type reader struct {
		cancel context.CancelFunc
		got    chan api.Event
	}
	var readers []reader
	connect := func(n int) {
		for range n {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://leo/events", nil)
			resp, err := sockClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("open a reader: %v", err)
			}
			r := reader{cancel: cancel, got: make(chan api.Event, 64)}
			go func() {
				defer resp.Body.Close()
				_ = client.ReadEvents(resp.Body, func(e api.Event) error {
					if e.Type == api.EventConfigReloaded {
						r.got <- e
					}
					return nil
				})
			}()
			readers = append(readers, r)
		}
	}
	defer func() {
		for _, r := range readers {
			r.cancel()
		}
	}()
	measure := func(label string) (cpu, rss float64) {
		quiet(b, f.d.PID, 2*time.Second, 60*time.Second)
		n0, t0 := cpuNanos(b, f.d.PID), time.Now()
		time.Sleep(window) // the measured window
		cpu = float64(cpuNanos(b, f.d.PID)-n0) / float64(time.Since(t0)) * 100
		rss = statusKiB(b, f.d.PID, "VmRSS") / 1024
		b.Logf("%s: daemon CPU %.3f%% of a core, RSS %.1f MiB", label, cpu, rss)
		return cpu, rss
	}
	var cpu0, rss0, cpu1, rss1, cpu100, rss100, p50, p99, floor50, floor99 float64
	for b.Loop() {
		cpu0, rss0 = measure("200 idle agents, no reader (floor)")
		connect(1)
		cpu1, rss1 = measure("200 idle agents, 1 reader")
		connect(99)
		cpu100, rss100 = measure("200 idle agents, 100 readers")

		var lat, rtt []time.Duration
		for range 100 {
			t0 := time.Now()
			if _, err := f.w.Client.ReloadConfig(context.Background()); err != nil {
				b.Fatal(err)
			}
			rtt = append(rtt, time.Since(t0))
			var wg sync.WaitGroup
			var mu sync.Mutex
			var slowest time.Duration
			for _, r := range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					select {
					case <-r.got:
						mu.Lock()
						slowest = max(slowest, time.Since(t0))
						mu.Unlock()
					case <-time.After(10 * time.Second):
						b.Error("a reader did not get config.reloaded within 10s")
					}
				}()
			}
			wg.Wait()
			lat = append(lat, slowest)
		}
		p50, p99 = pct(lat, 50), pct(lat, 99)
		floor50, floor99 = pct(rtt, 50), pct(rtt, 99)
	}
	b.ReportMetric(cpu0, "cpu-%-0-readers")
	b.ReportMetric(cpu1, "cpu-%-1-reader")
	b.ReportMetric(cpu100, "cpu-%-100-readers")
	b.ReportMetric(rss0, "rss-MiB-0-readers")
	b.ReportMetric(rss1, "rss-MiB-1-reader")
	b.ReportMetric(rss100, "rss-MiB-100-readers")
	b.ReportMetric(p50, "event-p50-ms")
	b.ReportMetric(p99, "event-p99-ms")
	b.ReportMetric(floor50, "reload-rtt-p50-ms")
	b.ReportMetric(floor99, "reload-rtt-p99-ms")
	b.Logf("event to the slowest of 100 readers: p50 %.2f ms, p99 %.2f ms; the reload's own round trip (floor): p50 %.2f ms, p99 %.2f ms", p50, p99, floor50, floor99)
	verdict(b, p99 < 50, "event p99 %.2f ms (target < 50 ms)", p99)
	verdict(b, cpu100-cpu0 < 0.5, "100 idle readers add %.3f%% CPU (target < 0.5%%)", cpu100-cpu0)
}

// pct is the p-th percentile of ds in milliseconds.
func pct(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, (len(s)*p+99)/100-1)
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}
