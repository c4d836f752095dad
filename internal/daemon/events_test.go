package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
)

// sseConn is one open GET /events over the socket, read line by line.
type sseConn struct {
	resp *http.Response
	rd   *bufio.Reader
}

func openEvents(t *testing.T, h home.Home, path string, header http.Header) *sseConn {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", h.SocketPath())
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://leo"+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, ct)
	}
	return &sseConn{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// frame reads up to the next blank line; comments are returned as they
// are ("" type) so heartbeats can be seen.
func (c *sseConn) frame(t *testing.T) (id, typ, data string, comments []string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			line, err := c.rd.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if id != "" || len(comments) > 0 {
					return
				}
			case strings.HasPrefix(line, ":"):
				comments = append(comments, line)
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no event frame within 20s")
	}
	return id, typ, data, comments
}

// nextEvent skips heartbeats and the opening frame (an id, no event).
func (c *sseConn) nextEvent(t *testing.T) (uint64, string, string) {
	t.Helper()
	for {
		id, typ, data, _ := c.frame(t)
		if id == "" || data == "" {
			continue
		}
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			t.Fatalf("id %q", id)
		}
		return n, typ, data
	}
}

// The stream is SSE framed: the daemon's start is kept for a reader that
// comes later, a reload arrives live with its sequence number as id, and
// a reader that reconnects with Last-Event-ID gets what it missed.
func TestEventStreamFramingReplayAndReconnect(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	ctx := context.Background()

	kept, err := r.Client.RecentEvents(ctx, client.EventsQuery{})
	if err != nil || len(kept) == 0 || kept[0].Type != api.EventDaemonStarting {
		t.Fatalf("kept events %+v, %v; want daemon.starting first", kept, err)
	}
	first := kept[0].Seq
	if first < uint64(time.Now().Add(-time.Hour).UnixMicro()) {
		t.Fatalf("first seq %d is not numbered from the start time", first)
	}

	live := openEvents(t, h, "/events", nil)
	if _, err := r.Client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	seq, typ, data := live.nextEvent(t)
	if typ != api.EventConfigReloaded || seq <= first || !strings.Contains(data, `"type":"config.reloaded"`) || !strings.Contains(data, `"seq":`+strconv.FormatUint(seq, 10)) {
		t.Fatalf("live event %d %s %s", seq, typ, data)
	}

	// Reconnect from the start event: the reload is replayed.
	again := openEvents(t, h, "/events", http.Header{"Last-Event-ID": {strconv.FormatUint(first, 10)}})
	if s2, typ2, _ := again.nextEvent(t); s2 != seq || typ2 != api.EventConfigReloaded {
		t.Fatalf("replayed %d %s, want %d config.reloaded", s2, typ2, seq)
	}
	// Last-Event-ID wins over since (the newer of the two, after a tab
	// came back).
	both := openEvents(t, h, "/events?since=1", http.Header{"Last-Event-ID": {strconv.FormatUint(first, 10)}})
	if s3, _, _ := both.nextEvent(t); s3 != seq {
		t.Fatalf("with since=1 and Last-Event-ID: first replayed %d, want %d", s3, seq)
	}
	// From long ago: the reader is told it fell behind.
	behind := openEvents(t, h, "/events?since=1", nil)
	if _, typ4, data4 := behind.nextEvent(t); typ4 != api.EventStreamBehind || !strings.Contains(data4, `"missed":`) {
		t.Fatalf("since=1: %s %s, want stream.behind", typ4, data4)
	}
}

func TestEventStreamRefusesBadQueries(t *testing.T) {
	h := newHome(t)
	startReady(t, h)
	for _, path := range []string{"/events?agent=Bob", "/events?since=x", "/events?follow=maybe"} {
		status, body := raw(t, h, "GET", path, "")
		if status != 400 || decodeErr(t, body).Code != api.CodeInvalidArgs {
			t.Errorf("GET %s: %d %s, want 400 invalid_args", path, status, body)
		}
	}
}

// An idle stream gets heartbeats; the agent filter keeps one agent's
// events; a shutdown's daemon.stopping reaches the open stream.
func TestEventStreamHeartbeatFilterAndShutdown(t *testing.T) {
	h := newHome(t)
	fake := daemontest.New()
	var deps syncDeps
	opts := options(t, h, fake, nil)
	opts.EventsHeartbeat = 20 * time.Millisecond
	inner := opts.NewAgents
	opts.NewAgents = func(d daemon.AgentDeps) (daemon.Agents, error) {
		deps.set(d)
		return inner(d)
	}
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)

	s := openEvents(t, h, "/events?agent=bob", nil)
	sawPing := false
	for range 5 {
		if _, _, _, comments := s.frame(t); len(comments) > 0 && comments[len(comments)-1] == ": ping" {
			sawPing = true
			break
		}
	}
	if !sawPing {
		t.Fatal("no heartbeat on an idle stream")
	}
	bus := deps.get().Events
	bus.Publish(api.Event{Type: api.EventAgentState, Agent: "alice", State: "running"})
	bus.Publish(api.Event{Type: api.EventAgentState, Agent: "bob", State: "running"})
	if _, _, data := s.nextEvent(t); !strings.Contains(data, `"agent":"bob"`) {
		t.Fatalf("filtered stream gave %s, want bob's only", data)
	}

	all := openEvents(t, h, "/events", nil)
	r.Stop(t)
	for {
		_, typ, _ := all.nextEvent(t)
		if typ == api.EventDaemonStopping {
			break
		}
	}
}

type syncDeps struct {
	mu sync.Mutex
	d  daemon.AgentDeps
}

func (s *syncDeps) set(d daemon.AgentDeps) { s.mu.Lock(); s.d = d; s.mu.Unlock() }
func (s *syncDeps) get() daemon.AgentDeps  { s.mu.Lock(); defer s.mu.Unlock(); return s.d }

// The stream opens with an id and no event: where a reader that gets no
// event before the stream ends takes up (an EventSource keeps it as its
// last event id). Events published after the stream opened come after it.
func TestEventStreamOpensWithWhereToTakeUp(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	ctx := context.Background()
	kept, err := r.Client.RecentEvents(ctx, client.EventsQuery{})
	if err != nil || len(kept) == 0 {
		t.Fatalf("kept: %v %v", kept, err)
	}
	newest := kept[len(kept)-1].Seq

	s := openEvents(t, h, "/events", nil)
	id, typ, data, _ := s.frame(t)
	if id != strconv.FormatUint(newest, 10) || typ != "" || data != "" {
		t.Fatalf("opening frame id %q event %q data %q, want id %d alone", id, typ, data, newest)
	}
	if _, err := r.Client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	// A reader that reconnects with the opening id gets the reload.
	again := openEvents(t, h, "/events", http.Header{"Last-Event-ID": {id}})
	if id2, _, _, _ := again.frame(t); id2 != id {
		t.Fatalf("opening id with Last-Event-ID %s: %q", id, id2)
	}
	if _, typ, _ := again.nextEvent(t); typ != api.EventConfigReloaded {
		t.Fatalf("after the opening id: %s, want config.reloaded", typ)
	}
	// ?follow=0 with ?agent: that agent's kept events only.
	bus := r.deps.Load().Events
	bus.Publish(api.Event{Type: api.EventAgentState, Agent: "alice", State: "running"})
	bus.Publish(api.Event{Type: api.EventAgentState, Agent: "bob", State: "running"})
	list, err := r.Client.RecentEvents(ctx, client.EventsQuery{Agent: "bob"})
	if err != nil || len(list) != 1 || list[0].Agent != "bob" {
		t.Fatalf("bob's kept events: %+v %v", list, err)
	}
}

// A reader that does not read is dropped: publishing never waits for it
// (the daemon does not slow), and what it gets when it reads at last is
// its buffer, then stream.dropped, then the end of the response. Taking
// up from the drop's seq gets the rest, none twice.
func TestEventStreamDropsASlowReaderWithoutSlowingTheDaemon(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	bus := r.deps.Load().Events
	readers := bus.(interface{ Readers() int }).Readers // the daemon's own (notifiers) too
	others := readers()
	s := openEvents(t, h, "/events", nil)
	// Far more than the reader's buffer (1024 events) and the socket's
	// (a few hundred KiB) hold.
	const n = 4000
	words := strings.Repeat("x", 2048)
	published := make(chan uint64)
	go func() {
		var last uint64
		for range n {
			last = bus.Publish(api.Event{Type: api.EventProblem, Reason: words}).Seq
		}
		published <- last
	}()
	var last uint64
	select {
	case last = <-published:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing blocked on a reader that does not read")
	}
	var got []api.Event
	if err := client.ReadEvents(s.rd, func(e api.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatalf("reading the dropped stream: %v", err)
	}
	if len(got) == 0 || len(got) >= n {
		t.Fatalf("a slow reader got %d of %d events", len(got), n)
	}
	end := got[len(got)-1]
	if end.Type != api.EventStreamDropped || end.Seq != got[len(got)-2].Seq {
		t.Fatalf("last of the slow reader's events: %+v after %d, want stream.dropped numbered as the last it got", end, got[len(got)-2].Seq)
	}
	if n := readers(); n != others {
		t.Fatalf("%d readers after the drop, want the %d there before the stream", n, others)
	}
	rest, err := r.Client.RecentEvents(context.Background(), client.EventsQuery{Since: end.Seq})
	if err != nil || len(rest) == 0 || rest[0].Seq != end.Seq+1 || rest[len(rest)-1].Seq != last {
		t.Fatalf("taking up after the drop: %d events from %v, want %d..%d (%v)", len(rest), rest[:min(len(rest), 1)], end.Seq+1, last, err)
	}
}

// Reloads are on the stream, done (the scopes they changed) or refused
// (the error, and state error), whether asked for or seen by the
// watcher; a problem is published when first met, once, and again only
// when it went away and came back.
func TestEventStreamReloadsAndProblems(t *testing.T) {
	h := newHome(t)
	fake := daemontest.New()
	deps := &atomic.Pointer[daemon.AgentDeps]{}
	opts := options(t, h, fake, deps)
	opts.OwnerCheck = 20 * time.Millisecond
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)
	ctx := context.Background()
	s := openEvents(t, h, "/events", nil)
	next := func(want string) api.Event {
		t.Helper()
		_, typ, data := s.nextEvent(t)
		var e api.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil || typ != want || e.Type != want {
			t.Fatalf("event %s %s (%v), want %s", typ, data, err, want)
		}
		return e
	}

	writeFile(t, h.ConfigPath, validConfig+"  coder:\n    harness: codex\n")
	if _, err := r.Client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if e := next(api.EventConfigReloaded); e.State != "ok" || strings.Join(e.Changed, ",") != "templates.coder" || e.Reason != "leo.yaml reloaded: templates.coder added" {
		t.Fatalf("done reload: %+v", e)
	}

	// A bad edit the watcher finds: the refused reload, then the problem
	// /health reports, once however many checks see it.
	writeFile(t, h.ConfigPath, "templates:\n  assistant:\n    harness: nosuch\n")
	e := next(api.EventConfigReloaded)
	if e.State != "error" || !strings.Contains(e.Reason, `templates.assistant.harness "nosuch" is not a registered harness`) || len(e.Changed) != 0 {
		t.Fatalf("refused reload: %+v", e)
	}
	p := next(api.EventProblem)
	if !strings.HasPrefix(p.Reason, "leo.yaml on disk is not loaded, the running config is kept: ") {
		t.Fatalf("problem: %+v", p)
	}
	// Three more owner checks see it: each takes the lock file again
	// after it was removed, and publishes problems after that.
	for range 3 {
		if err := os.Remove(h.LockPath()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "an owner check to take the lock file again", func() bool {
			_, err := os.Stat(h.LockPath())
			return err == nil
		})
	}

	// Fixed, then broken again: the problem went away and is met anew.
	writeFile(t, h.ConfigPath, validConfig)
	if e := next(api.EventConfigReloaded); e.State != "ok" || strings.Join(e.Changed, ",") != "templates.coder" || !strings.Contains(e.Reason, "templates.coder removed") {
		t.Fatalf("reload after the fix: %+v (a second problem event before it means it was published twice)", e)
	}
	writeFile(t, h.ConfigPath, "templates: [\n")
	next(api.EventConfigReloaded)
	if p2 := next(api.EventProblem); !strings.HasPrefix(p2.Reason, "leo.yaml on disk is not loaded") {
		t.Fatalf("problem met again: %+v", p2)
	}
}
