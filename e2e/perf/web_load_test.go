package perf

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
)

// webSite is a daemon serving its web UI and API on a free loopback port,
// with its token.
type webSite struct {
	w     *leoproc.World
	d     *leoproc.Daemon
	base  string
	token string
}

func newWebSite(tb testing.TB) *webSite {
	tb.Helper()
	w := leoproc.New(tb)
	w.WriteConfig(nil)
	base := w.EnableWeb()
	d, _ := w.Start(60 * time.Second)
	return &webSite{w: w, d: d, base: base, token: w.Token()}
}

// loadResult is what one load run measured.
type loadResult struct {
	api, page, static []time.Duration
	errors            []string
	churn             int // spawns and sends made meanwhile
	rssBefore         int // KiB
	rssAfter          int
}

// loadRun drives clients concurrent clients for d against the agent list
// API and the Agents page (half each), plus the floor — a static asset of
// the same server, which touches none of the daemon's state — while one
// more client spawns agents and messages them through the API. Every
// request's status is checked; the run stops by itself after d.
func loadRun(tb testing.TB, s *webSite, clients int, d time.Duration) loadResult {
	tb.Helper()
	res := loadResult{rssBefore: rssKiB(tb, s.d.PID)}
	transport := &http.Transport{MaxIdleConnsPerHost: clients + 2}
	defer transport.CloseIdleConnections()
	newClient := func(login bool) *http.Client {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Transport: transport, Jar: jar, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if login {
			resp, err := c.PostForm(s.base+"/login", url.Values{"token": {s.token}, "next": {"/web/agents"}})
			if err != nil || resp.StatusCode != http.StatusSeeOther {
				tb.Fatalf("login: %v %v", resp, err)
			}
			resp.Body.Close()
		}
		return c
	}
	var (
		mu   sync.Mutex
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	record := func(kind string, dur time.Duration, err string) {
		mu.Lock()
		defer mu.Unlock()
		if err != "" {
			if len(res.errors) < 20 {
				res.errors = append(res.errors, kind+": "+err)
			} else {
				res.errors = append(res.errors[:20], "…")
			}
			return
		}
		switch kind {
		case "api":
			res.api = append(res.api, dur)
		case "page":
			res.page = append(res.page, dur)
		case "static":
			res.static = append(res.static, dur)
		}
	}
	get := func(c *http.Client, kind, path string, auth bool, want string) {
		req, _ := http.NewRequest("GET", s.base+path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		t0 := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			record(kind, 0, err.Error())
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		dur := time.Since(t0)
		switch {
		case err != nil:
			record(kind, 0, err.Error())
		case resp.StatusCode != 200:
			record(kind, 0, fmt.Sprintf("%s: %d %.200s", path, resp.StatusCode, body))
		case !strings.Contains(string(body), want):
			record(kind, 0, fmt.Sprintf("%s: answer lacks %q", path, want))
		default:
			record(kind, dur, "")
		}
	}
	// The churn: spawn an agent, message it, now and then.
	churnClient := newClient(false)
	post := func(path, body string) {
		req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := churnClient.Do(req)
		if err != nil {
			record("churn", 0, err.Error())
			return
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			record("churn", 0, fmt.Sprintf("%s: %d %.200s", path, resp.StatusCode, data))
			return
		}
		mu.Lock()
		res.churn++
		mu.Unlock()
	}
	// load-0 exists before the first read: every answer must list an agent.
	post("/api/agent/spawn", `{"template":"codex","name":"load-0"}`)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			page := i%2 == 1
			c := newClient(page)
			for n := 0; !stop.Load(); n++ {
				if page {
					get(c, "page", "/web/agents", false, "load-")
				} else {
					get(c, "api", "/api/agent/list", true, `"load-`)
				}
				if n%10 == 0 {
					get(c, "static", "/static/leo.css", false, "{")
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A spawn every fourth beat, a message to the agents in turn
		// otherwise: each agent gets at most one message a second, well
		// inside its queue (queue_max) even when its TUI is slow to take
		// them on a loaded machine.
		pace := time.NewTicker(250 * time.Millisecond)
		defer pace.Stop()
		agents := []string{"load-0"}
		for n := 1; !stop.Load(); n++ {
			if n%4 == 0 {
				name := fmt.Sprintf("load-%d", n)
				post("/api/agent/spawn", fmt.Sprintf(`{"template":"%s","name":"%s"}`, leoproc.Harnesses[n%len(leoproc.Harnesses)], name))
				agents = append(agents, name)
			} else {
				post("/api/agent/"+agents[n%len(agents)]+"/send", fmt.Sprintf(`{"message":"load message %d"}`, n))
			}
			<-pace.C
		}
	}()
	time.AfterFunc(d, func() { stop.Store(true) })
	wg.Wait()
	res.rssAfter = rssKiB(tb, s.d.PID)
	return res
}

// rssKiB is a process's resident set (VmRSS) in KiB.
func rssKiB(tb testing.TB, pid int) int {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb
		}
	}
	tb.Fatalf("no VmRSS for pid %d", pid)
	return 0
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

// TestWebUnderLoad is the short form run by make test: 20 clients for 5 s
// against the API and the Agents page while agents are spawned and
// messaged — not one error.
func TestWebUnderLoad(t *testing.T) {
	s := newWebSite(t)
	res := loadRun(t, s, 20, 5*time.Second)
	if len(res.errors) > 0 {
		t.Fatalf("%d errors under load, first: %v", len(res.errors), res.errors)
	}
	if len(res.api) == 0 || len(res.page) == 0 || res.churn == 0 {
		t.Fatalf("the load did not run: %d API, %d page requests, %d churn", len(res.api), len(res.page), res.churn)
	}
	t.Logf("API p50 %v p99 %v (%d), page p50 %v p99 %v (%d), churn %d, RSS %d → %d KiB",
		quantile(res.api, .5), quantile(res.api, .99), len(res.api), quantile(res.page, .5), quantile(res.page, .99), len(res.page),
		res.churn, res.rssBefore, res.rssAfter)
}

// BenchmarkWebLoad50: 50 concurrent clients for 30 s (LEO_LOAD_SECONDS to
// change it) against GET /api/agent/list (bearer) and GET /web/agents
// (cookie), half each, while agents are spawned and messaged through the
// API; the floor is a static asset of the same server, fetched by the same
// clients in the same run. Reports p50/p99 of each, the request count, the
// daemon's RSS before and after, and fails on any error.
//
//	go test -run '^$' -bench WebLoad50 -benchtime 1x ./e2e/perf/
func BenchmarkWebLoad50(b *testing.B) {
	secs := 30
	if v, err := strconv.Atoi(os.Getenv("LEO_LOAD_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	s := newWebSite(b)
	var res loadResult
	for b.Loop() {
		res = loadRun(b, s, 50, time.Duration(secs)*time.Second)
	}
	if len(res.errors) > 0 {
		b.Fatalf("%d errors under load, first: %v", len(res.errors), res.errors)
	}
	b.ReportMetric(ms(quantile(res.api, .5)), "api-p50-ms")
	b.ReportMetric(ms(quantile(res.api, .99)), "api-p99-ms")
	b.ReportMetric(ms(quantile(res.page, .5)), "page-p50-ms")
	b.ReportMetric(ms(quantile(res.page, .99)), "page-p99-ms")
	b.ReportMetric(ms(quantile(res.static, .5)), "floor-p50-ms")
	b.ReportMetric(ms(quantile(res.static, .99)), "floor-p99-ms")
	b.ReportMetric(float64(len(res.api)+len(res.page))/float64(secs), "req/s")
	b.ReportMetric(float64(res.rssBefore)/1024, "rss-before-MiB")
	b.ReportMetric(float64(res.rssAfter)/1024, "rss-after-MiB")
	b.Logf("%d API + %d page requests in %ds, %d spawns/sends meanwhile, 0 errors", len(res.api), len(res.page), secs, res.churn)
}
