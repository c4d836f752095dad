package daemon_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/home"
)

// rawNoRedirect is one request on the socket by a client that never follows
// a redirect, so a redirect shows as the 3xx it is.
func rawNoRedirect(t *testing.T, h home.Home, method, path, body string) (int, string) {
	t.Helper()
	hc := &http.Client{
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", h.SocketPath())
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer hc.CloseIdleConnections()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://leo"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// A malformed agent name is invalid_args on every route that takes one,
// never a redirect to another route (/agents//logs was redirected to
// /agents/logs, the agent named "logs") and never not_found.
func TestMalformedAgentNamesAreInvalidArgsOnEveryRoute(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	// Agents whose names a cleaned path would land on.
	for _, n := range []string{"logs", "stop", "send", "bob"} {
		r.agents.Put(api.Agent{Name: n, State: api.StateRunning})
	}
	routes := []struct{ method, suffix, body string }{
		{"GET", "", ""},
		{"DELETE", "", ""},
		{"GET", "/logs", ""},
		{"POST", "/start", ""},
		{"POST", "/stop", ""},
		{"POST", "/restart", ""},
		{"POST", "/reset", ""},
		{"POST", "/send", `{"message":"hi"}`},
	}
	for _, name := range []string{"", ".", "..", "%2E%2E", "%2e", "Bob", "a_b", "a%2Fb", "a%20b", "%00", strings.Repeat("a", 64)} {
		for _, rt := range routes {
			path := "/agents/" + name + rt.suffix
			status, body := rawNoRedirect(t, h, rt.method, path, rt.body)
			if status != http.StatusBadRequest {
				t.Errorf("%s %s: status %d, want 400; body %s", rt.method, path, status, body)
				continue
			}
			e := decodeErr(t, body)
			if e.Code != api.CodeInvalidArgs || !strings.Contains(e.Message, "invalid agent name") {
				t.Errorf("%s %s: %+v, want invalid_args naming the agent name", rt.method, path, e)
			}
		}
	}
	if msgs := r.agents.Messages(); len(msgs) != 0 {
		t.Errorf("a message reached the manager through a malformed name: %+v", msgs)
	}
	for _, n := range []string{"logs", "stop", "send", "bob"} {
		if a, err := r.Client.Get(context.Background(), n); err != nil || a.State != api.StateRunning {
			t.Errorf("agent %s after the requests: %+v %v", n, a, err)
		}
	}

	// Any other unclean path is refused too, never redirected.
	for _, p := range []string{"/agents/bob//logs", "/agents/bob/./logs", "/agents/bob/../stop", "//health", "/health/.", "/x/../health"} {
		status, body := rawNoRedirect(t, h, "GET", p, "")
		if status != http.StatusBadRequest || decodeErr(t, body).Code != api.CodeInvalidArgs {
			t.Errorf("GET %s: %d %s, want 400 invalid_args", p, status, body)
		}
	}

	// Well-formed names still route.
	if status, body := rawNoRedirect(t, h, "GET", "/agents/bob/logs", ""); status != http.StatusOK {
		t.Errorf("GET /agents/bob/logs: %d %s", status, body)
	}
	if status, body := rawNoRedirect(t, h, "GET", "/agents/nobody", ""); status != http.StatusNotFound || decodeErr(t, body).Code != api.CodeNotFound {
		t.Errorf("GET /agents/nobody: %d %s, want 404 not_found", status, body)
	}
}
