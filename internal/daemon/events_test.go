package daemon_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
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

// nextEvent skips heartbeats and the opening comment.
func (c *sseConn) nextEvent(t *testing.T) (uint64, string, string) {
	t.Helper()
	for {
		id, typ, data, _ := c.frame(t)
		if id == "" {
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
