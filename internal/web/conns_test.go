package web

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawGet sends one request on conn and reads the whole answer (bounded:
// a server that never answers fails the test instead of hanging it).
func rawGet(t *testing.T, conn net.Conn, br *bufio.Reader, host, path, auth string) int {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
	if auth != "" {
		req += "Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s: no answer: %v", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = conn.SetDeadline(time.Time{})
	return resp.StatusCode
}

// TestIdleConnectionsDoNotShutOutAnAuthorisedRequest (issue 15 item 13):
// more than maxConns connections that each sent one GET /login and stay
// open (what made an authorised GET /api/health wait 87 s) do not keep an
// authorised request out: a newcomer evicts the oldest unauthorised idle
// connection, and an authorised keep-alive connection is left alone.
func TestIdleConnectionsDoNotShutOutAnAuthorisedRequest(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.cfg.Web.Port = freePort(t)
	s.srv.Sync() // the real listener, with the real cap
	t.Cleanup(func() { _ = s.srv.Close(t.Context()) })
	st := s.srv.State()
	if st == nil || !st.Serving {
		t.Fatalf("web state %+v; want serving", st)
	}
	host := strings.TrimPrefix(st.URL, "http://")
	dial := func() (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	bearer := "Bearer " + s.token

	// An authorised client with a keep-alive connection, first (oldest).
	ac, abr := dial()
	if code := rawGet(t, ac, abr, host, "/api/health", bearer); code != http.StatusOK {
		t.Fatalf("authorised health = %d", code)
	}
	start := time.Now()
	for i := range maxConns + 8 {
		c, br := dial()
		if code := rawGet(t, c, br, host, "/login", ""); code != http.StatusOK {
			t.Fatalf("GET /login on connection %d = %d", i, code)
		}
	}
	t.Logf("%d idle connections opened in %v", maxConns+8, time.Since(start).Round(time.Millisecond))

	// A new authorised request answers at once; so does the old
	// authorised connection, which no unauthorised one pushed out.
	start = time.Now()
	c, br := dial()
	if code := rawGet(t, c, br, host, "/api/health", bearer); code != http.StatusOK {
		t.Fatalf("authorised health on a new connection = %d", code)
	}
	if code := rawGet(t, ac, abr, host, "/api/health", bearer); code != http.StatusOK {
		t.Fatalf("authorised health on the kept connection = %d", code)
	}
	t.Logf("authorised requests answered in %v", time.Since(start).Round(time.Millisecond))
}

// The eviction order, without the network: unauthorised idle first, then
// a connection with no request yet, then authorised idle; never a
// connection serving a request, which a newcomer waits for instead.
func TestConnsEvictionOrder(t *testing.T) {
	lim := newConns(4)
	mk := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	authIdle, fresh, unauthIdle, active := mk(), mk(), mk(), mk()
	for _, c := range []net.Conn{authIdle, fresh, unauthIdle, active} {
		lim.admit(c)
	}
	lim.all[authIdle].authed.Store(true)
	lim.connState(authIdle, http.StateActive)
	lim.connState(authIdle, http.StateIdle)
	lim.connState(unauthIdle, http.StateActive)
	lim.connState(unauthIdle, http.StateIdle)
	lim.connState(active, http.StateActive)
	for _, want := range []net.Conn{unauthIdle, fresh, authIdle} {
		c := mk()
		lim.admit(c)
		lim.connState(c, http.StateActive) // the newcomer's request is served
		if _, still := lim.all[want]; still {
			t.Fatal("admit did not evict the connection next in order")
		}
		if n := lim.count(); n != 4 {
			t.Fatalf("%d connections, want the cap 4", n)
		}
	}
	if _, ok := lim.all[active]; !ok {
		t.Fatal("a connection serving a request was evicted")
	}
}
