package perf

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

// BenchmarkEventsIdle200: 200 idle agents with 0, 1 and 100 readers on
// the event stream (GET /events over the socket): the daemon's CPU and
// RSS over a quiet window each, next to the same daemon with none (the
// floor, today's figure). Then, with 1 reader and again with 100, how soon
// an event reaches the slowest reader: a reload's config.reloaded and a
// send's message.queued, each from the daemon's publishing (the event's
// at, the same machine's clock) — the stream's own share — and from the
// request, next to the request's own round trip (the floor); and how late
// a bare 1 ms timer of the readers' process wakes meanwhile (the
// machine's floor). Targets: readers cost no idle CPU (heartbeats only),
// publish to read p99 < 50 ms.
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
	// arrival is an event as a reader read it, stamped then: the wait
	// measured ends when the reader has the event, not when the
	// benchmark's loop looks (after the request's answer).
	type arrival struct {
		e  api.Event
		at time.Time
	}
	type reader struct {
		cancel context.CancelFunc
		got    chan arrival
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
			r := reader{cancel: cancel, got: make(chan arrival, 64)}
			go func() {
				defer resp.Body.Close()
				_ = client.ReadEvents(resp.Body, func(e api.Event) error {
					if e.Type == api.EventConfigReloaded || e.Type == api.EventMessageQueued {
						r.got <- arrival{e: e, at: time.Now()}
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
	// slowest is how long after t0, and after its publishing, the last of
	// the readers got the event match picks.
	slowest := func(t0 time.Time, what string, match func(api.Event) bool) (fromRequest, fromPublish time.Duration) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, r := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				timeout := time.After(10 * time.Second)
				for {
					select {
					case a := <-r.got:
						if !match(a.e) {
							continue
						}
						mu.Lock()
						fromRequest = max(fromRequest, a.at.Sub(t0))
						fromPublish = max(fromPublish, a.at.Sub(a.e.At))
						mu.Unlock()
						return
					case <-timeout:
						b.Errorf("a reader did not get %s within 10s", what)
						return
					}
				}
			}()
		}
		wg.Wait()
		return fromRequest, fromPublish
	}
	// latency runs 100 reloads, then 100 sends to idle agents (spread
	// over 50, so no queue grows), and logs and reports their figures.
	latency := func(label string, round int) (reloadPub99, sendPub99 float64) {
		// The machine's floor meanwhile: how late a goroutine of this
		// process (where the readers run) wakes from a 1 ms timer.
		stop, done := make(chan struct{}), make(chan []time.Duration)
		go func() {
			var late []time.Duration
			for {
				select {
				case <-stop:
					done <- late
					return
				default:
				}
				t := time.Now()
				time.Sleep(time.Millisecond)
				late = append(late, time.Since(t)-time.Millisecond)
			}
		}()
		var reloadReq, reloadPub, reloadRTT, sendReq, sendPub, sendRTT []time.Duration
		for range 100 {
			t0 := time.Now()
			if _, err := f.w.Client.ReloadConfig(context.Background()); err != nil {
				b.Fatal(err)
			}
			reloadRTT = append(reloadRTT, time.Since(t0))
			req, pub := slowest(t0, "config.reloaded", func(e api.Event) bool { return e.Type == api.EventConfigReloaded })
			reloadReq, reloadPub = append(reloadReq, req), append(reloadPub, pub)
		}
		for i := range 100 {
			t0 := time.Now()
			res, err := f.w.Client.Send(context.Background(), fmt.Sprintf("bench-%03d", i%50), fmt.Sprintf("event latency probe %d.%d", round, i))
			if err != nil {
				b.Fatal(err)
			}
			sendRTT = append(sendRTT, time.Since(t0))
			req, pub := slowest(t0, "message.queued", func(e api.Event) bool {
				return e.Type == api.EventMessageQueued && e.MessageID == res.ID
			})
			sendReq, sendPub = append(sendReq, req), append(sendPub, pub)
		}
		close(stop)
		late := <-done
		b.Logf("%s, config.reloaded: publish to read p50 %.2f ms, p99 %.2f ms; from the request p50 %.2f ms, p99 %.2f ms; the reload's own round trip (floor) p50 %.2f ms, p99 %.2f ms",
			label, pct(reloadPub, 50), pct(reloadPub, 99), pct(reloadReq, 50), pct(reloadReq, 99), pct(reloadRTT, 50), pct(reloadRTT, 99))
		b.Logf("%s, message.queued (the deliveries' own events flowing meanwhile): publish to read p50 %.2f ms, p99 %.2f ms; from the send p50 %.2f ms, p99 %.2f ms; the send's own round trip (floor) p50 %.2f ms, p99 %.2f ms",
			label, pct(sendPub, 50), pct(sendPub, 99), pct(sendReq, 50), pct(sendReq, 99), pct(sendRTT, 50), pct(sendRTT, 99))
		b.Logf("%s, the machine's floor: a 1 ms timer of the readers' process late by p50 %.2f ms, p99 %.2f ms", label, pct(late, 50), pct(late, 99))
		n := strconv.Itoa(len(readers))
		b.ReportMetric(pct(reloadPub, 99), "reloaded-p99-ms-"+n)
		b.ReportMetric(pct(reloadRTT, 99), "reload-rtt-p99-ms-"+n)
		b.ReportMetric(pct(sendPub, 99), "queued-p99-ms-"+n)
		b.ReportMetric(pct(sendRTT, 99), "send-rtt-p99-ms-"+n)
		b.ReportMetric(pct(late, 99), "timer-late-p99-ms-"+n)
		return pct(reloadPub, 99), pct(sendPub, 99)
	}
	var cpu0, rss0, cpu1, rss1, cpu100, rss100, reload1, send1, reload100, send100 float64
	round := 0
	for b.Loop() {
		round++
		cpu0, rss0 = measure("200 idle agents, no reader (floor)")
		connect(1)
		cpu1, rss1 = measure("200 idle agents, 1 reader")
		connect(99)
		cpu100, rss100 = measure("200 idle agents, 100 readers")
		reload100, send100 = latency("the slowest of 100 readers", round)
		for _, r := range readers[1:] {
			r.cancel()
		}
		readers = readers[:1]
		reload1, send1 = latency("1 reader", round)
	}
	b.ReportMetric(cpu0, "cpu-%-0-readers")
	b.ReportMetric(cpu1, "cpu-%-1-reader")
	b.ReportMetric(cpu100, "cpu-%-100-readers")
	b.ReportMetric(rss0, "rss-MiB-0-readers")
	b.ReportMetric(rss1, "rss-MiB-1-reader")
	b.ReportMetric(rss100, "rss-MiB-100-readers")
	verdict(b, reload1 < 50 && send1 < 50, "1 reader: publish to read p99 %.2f ms (config.reloaded), %.2f ms (message.queued) (target < 50 ms)", reload1, send1)
	verdict(b, reload100 < 50 && send100 < 50, "the slowest of 100 readers: publish to read p99 %.2f ms (config.reloaded), %.2f ms (message.queued) (target < 50 ms)", reload100, send100)
	verdict(b, cpu100-cpu0 < 0.5, "100 idle readers add %.3f%% CPU (target < 0.5%%)", cpu100-cpu0)
}

// pct is the p-th percentile of ds in milliseconds.
func pct(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, (len(s)*p+99)/100-1)
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}
