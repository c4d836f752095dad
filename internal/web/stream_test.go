package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// standInStream is a socket handler whose GET /events serves the stream's
// contract (docs/api.md, "The event stream": id: seq, event: type, data:
// one api.Event; Last-Event-ID or ?since=, ?agent=) from an events.Bus,
// and whose other routes are rest's.
type standInStream struct {
	bus  *events.Bus
	rest http.Handler

	mu sync.Mutex
	// seen are the stream requests as the socket handler got them.
	seen []streamRequest
	// open counts streams being served; ended collects why each ended.
	open  int
	ended []error
}

type streamRequest struct {
	path, query, lastEventID, cookie string
}

func newStandIn(rest http.Handler) *standInStream {
	return &standInStream{bus: events.New(100, 0, 0, nil), rest: rest}
}

func (h *standInStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/events":
		h.stream(w, r)
	default:
		h.rest.ServeHTTP(w, r)
	}
}

func (h *standInStream) stream(w http.ResponseWriter, r *http.Request) {
	var since uint64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		since, _ = strconv.ParseUint(v, 10, 64)
	} else if v := r.URL.Query().Get("since"); v != "" {
		since, _ = strconv.ParseUint(v, 10, 64)
	}
	agent := r.URL.Query().Get("agent")
	sub := h.bus.Subscribe(since, func(e api.Event) bool { return agent == "" || e.Agent == agent })
	defer sub.Close()
	h.mu.Lock()
	h.seen = append(h.seen, streamRequest{r.URL.Path, r.URL.RawQuery, r.Header.Get("Last-Event-ID"), r.Header.Get("Cookie")})
	h.open++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.open--
		h.ended = append(h.ended, r.Context().Err())
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	flush()
	for {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				return
			}
			data, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data)
			flush()
		case <-r.Context().Done():
			return
		}
	}
}

func (h *standInStream) streamsOpen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}

func (h *standInStream) requests() []streamRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]streamRequest(nil), h.seen...)
}

// sse is a client's open stream: its events as they arrive.
type sse struct {
	resp   *http.Response
	events chan api.Event
	done   chan struct{} // closed when the body ends
}

// openStream GETs path with the site's client (its cookie) and headers,
// expecting a stream.
func (s *testSite) openStream(path string, headers map[string]string) *sse {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.base+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		s.t.Fatalf("GET %s = %d %s, want a stream", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	st := &sse{resp: resp, events: make(chan api.Event, 100), done: make(chan struct{})}
	s.t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(st.done)
		sc := bufio.NewScanner(resp.Body)
		var data string
		for sc.Scan() {
			line := sc.Text()
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
			if line == "" && data != "" {
				var e api.Event
				if json.Unmarshal([]byte(data), &e) == nil {
					st.events <- e
				}
				data = ""
			}
		}
	}()
	return st
}

// next is the stream's next event, within a deadline.
func (st *sse) next(t *testing.T, what string) api.Event {
	t.Helper()
	select {
	case e := <-st.events:
		return e
	case <-st.done:
		t.Fatalf("%s: the stream ended", what)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no event within 10s", what)
	}
	return api.Event{}
}

// ends waits for the stream's body to end.
func (st *sse) ends(t *testing.T, what string) {
	t.Helper()
	select {
	case <-st.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the stream still runs after 10s", what)
	}
}

func streamSite(t *testing.T, tune func(*Server)) (*testSite, *standInStream, *fakeDaemon) {
	t.Helper()
	f := newFakeDaemon()
	h := newStandIn(f)
	s := newTestSiteTuned(t, pagesYAML, h, maxConns, tune)
	return s, h, f
}

// A page's stream is the socket's own GET /events, opened with the login
// cookie: its query and Last-Event-ID reach the socket route unchanged,
// and each event arrives as it is published.
func TestPageStreamIsTheSocketStream(t *testing.T) {
	s, h, _ := streamSite(t, nil)

	// Logged out: the login page, and nothing reaches the socket.
	status, hdr, _ := s.do("GET", "/web/events", nil, nil)
	if status != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/login") {
		t.Fatalf("GET /web/events logged out = %d %q", status, hdr.Get("Location"))
	}
	// The token opens the API, never the pages' stream.
	if status, _, _ := s.do("GET", "/web/events", nil, s.bearer()); status != http.StatusSeeOther {
		t.Fatalf("GET /web/events with the bearer token = %d, want the login page", status)
	}
	if n := len(h.requests()); n != 0 {
		t.Fatalf("a stream reached the socket before a login: %+v", h.requests())
	}

	s.login()
	// Another site's page may not read it (the guard's Origin pinning).
	if status, _, _ := s.do("GET", "/web/events", nil, map[string]string{"Origin": "http://evil.example"}); status != http.StatusForbidden {
		t.Fatalf("GET /web/events from a foreign origin = %d, want 403", status)
	}

	first := h.bus.Publish(api.Event{Type: api.EventAgentState, Agent: "coder", State: "running"})
	h.bus.Publish(api.Event{Type: api.EventAgentState, Agent: "other", State: "running"})
	st := s.openStream("/web/events?agent=coder", map[string]string{"Last-Event-ID": strconv.FormatUint(first.Seq-1, 10)})
	if e := st.next(t, "the replayed event"); e.Seq != first.Seq || e.Agent != "coder" {
		t.Fatalf("replayed %+v, want seq %d of coder", e, first.Seq)
	}
	reqs := h.requests()
	if len(reqs) != 1 || reqs[0].path != "/events" || reqs[0].query != "agent=coder" || reqs[0].lastEventID != strconv.FormatUint(first.Seq-1, 10) {
		t.Fatalf("the socket got %+v", reqs)
	}
	if st.resp.Header.Get("X-Accel-Buffering") != "no" || st.resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("stream headers: %v", st.resp.Header)
	}
	// Live: an event published now arrives now.
	h.bus.Publish(api.Event{Type: api.EventAgentAttention, Agent: "coder",
		Attention: &api.Attention{State: api.AttentionNeedsInput, Prompt: &api.Prompt{ID: "p-1", Kind: api.PromptPermission, Text: "Bash command\n  touch x"}}})
	if e := st.next(t, "the live event"); e.Type != api.EventAgentAttention || e.Attention == nil || e.Attention.Prompt.Text != "Bash command\n  touch x" {
		t.Fatalf("live event %+v", e)
	}
}

// A stream outlives the server's whole-request deadline (readTimeout):
// the control, a login whose body never arrives whole, is cut off by that
// deadline, and the stream, opened before it, still delivers afterwards.
func TestStreamOutlivesTheReadTimeout(t *testing.T) {
	s, h, _ := streamSite(t, func(srv *Server) { srv.readTimeout = 300 * time.Millisecond })
	s.login()
	st := s.openStream("/web/events", nil)
	h.bus.Publish(api.Event{Type: api.EventConfigReloaded})
	st.next(t, "the first event")

	u, _ := url.Parse(s.base)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ntoken=", u.Host)
	_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("the control was not cut off by the read deadline: %v", err)
	}

	// The stream began before the control: its deadline has passed too.
	h.bus.Publish(api.Event{Type: api.EventAgentState, Agent: "coder", State: "stopped"})
	if e := st.next(t, "an event after the read deadline"); e.Agent != "coder" {
		t.Fatalf("got %+v", e)
	}
	if n := h.streamsOpen(); n != 1 {
		t.Fatalf("%d streams open, want 1", n)
	}
}

// Shutdown ends the streams at once rather than waiting its grace period
// for them.
func TestShutdownEndsStreams(t *testing.T) {
	s, h, _ := streamSite(t, nil)
	s.login()
	st := s.openStream("/web/events", nil)
	h.bus.Publish(api.Event{Type: api.EventConfigReloaded})
	st.next(t, "the first event")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.ts.Config.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a stream open: %v", err)
	}
	st.ends(t, "the stream at shutdown")
	if n := h.streamsOpen(); n != 0 {
		t.Fatalf("%d streams still served", n)
	}
}

// A session that ends ends its streams: a logout elsewhere, or a new token
// (which ends every session).
func TestStreamEndsWithItsSession(t *testing.T) {
	s, h, _ := streamSite(t, nil)
	s.login()
	st := s.openStream("/web/events", nil)
	h.bus.Publish(api.Event{Type: api.EventConfigReloaded})
	st.next(t, "the first event")

	// Another browser's login and logout leave this one's stream alone.
	other := *s
	other.client = &http.Client{Jar: newJar(), CheckRedirect: s.client.CheckRedirect}
	other.t = t
	other.login()
	other.postForm("/logout", nil)
	h.bus.Publish(api.Event{Type: api.EventConfigReloaded})
	st.next(t, "an event after another session ended")

	// This session's logout ends its stream.
	s.postForm("/logout", nil)
	st.ends(t, "the stream after its logout")

	// A new token ends every session's streams.
	s.login()
	st = s.openStream("/web/events", nil)
	h.bus.Publish(api.Event{Type: api.EventConfigReloaded})
	st.next(t, "the first event of the new session")
	if err := os.WriteFile(s.home.TokenPath(), []byte("a-new-token-0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.srv.loadToken(); err != nil {
		t.Fatal(err)
	}
	st.ends(t, "the stream after a new token")
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.streamsOpen() == 0 }, "no stream served")
}

func newJar() http.CookieJar {
	jar, _ := cookiejar.New(nil)
	return jar
}

// The tasks list alone, fetched on its events.
func TestTasksPartialIsTheList(t *testing.T) {
	s, f := pagesSite(t, pagesYAML)
	f.tasks["report"] = api.Task{Name: "report", Harness: "claude", Enabled: true}
	page := s.get("/web/tasks", http.StatusOK)
	mustHave(t, "tasks page", page, `data-live="/web/partials/tasks"`, `task.run.ended`)
	frag := s.get("/web/partials/tasks", http.StatusOK)
	mustHave(t, "tasks fragment", frag, `<div id="tasks-list"`, `data-task="report"`, `name="csrf" value="`+s.csrf()+`"`)
	mustLack(t, "tasks fragment", frag, "<html", "<header")
}
