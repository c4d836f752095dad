package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

const testToken = "tok-0123456789abcdef-SECRET"

// seen is one request as the fake web API got it.
type seen struct {
	method, path, query, auth, body string
}

// fakeWebAPI answers every /api request with answer (a JSON value) and
// records what it was asked; a request without the bearer token is 401 in
// the API's error shape.
func fakeWebAPI(t *testing.T, answer any) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(api.Errorf("unauthorized", "bad token"))
			return
		}
		_ = json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func TestHTTPClientMapsEveryRouteOntoItsAPIPath(t *testing.T) {
	ctx := context.Background()
	srv, got := fakeWebAPI(t, map[string]any{})
	c := client.NewHTTP(srv.URL+"/", testToken) // a trailing slash is tolerated
	defer c.Close()

	calls := []struct {
		call   func() error
		method string
		path   string
		query  string
	}{
		{func() error { _, err := c.Health(ctx); return err }, "GET", "/api/health", ""},
		{func() error { _, err := c.Spawn(ctx, api.SpawnRequest{Template: "t", Name: "n"}); return err }, "POST", "/api/agent/spawn", ""},
		{func() error { _, err := c.Stop(ctx, "bob"); return err }, "POST", "/api/agent/bob/stop", ""},
		{func() error { _, err := c.Reset(ctx, "bob"); return err }, "POST", "/api/agent/bob/reset", ""},
		{func() error { _, err := c.Send(ctx, "bob", "hi"); return err }, "POST", "/api/agent/bob/send", ""},
		{func() error { _, err := c.Logs(ctx, "bob", 7); return err }, "GET", "/api/agent/bob/logs", "lines=7"},
		{func() error { _, err := c.RunTask(ctx, "nightly", false); return err }, "POST", "/api/task/nightly/run", ""},
		{func() error { _, err := c.EnableTask(ctx, "nightly"); return err }, "POST", "/api/task/nightly/enable", ""},
		{func() error { _, err := c.TaskHistory(ctx, "nightly", 3); return err }, "GET", "/api/task/nightly/history", "limit=3"},
		{func() error { _, err := c.AllHistory(ctx, 2); return err }, "GET", "/api/history", "limit=2"},
	}
	for _, k := range calls {
		if err := k.call(); err != nil {
			t.Fatalf("%s %s: %v", k.method, k.path, err)
		}
	}
	reqs := got()
	if len(reqs) != len(calls) {
		t.Fatalf("%d requests, want %d: %+v", len(reqs), len(calls), reqs)
	}
	for i, k := range calls {
		r := reqs[i]
		if r.method != k.method || r.path != k.path || r.query != k.query {
			t.Errorf("call %d: asked %s %s?%s, want %s %s?%s", i, r.method, r.path, r.query, k.method, k.path, k.query)
		}
		if r.auth != "Bearer "+testToken {
			t.Errorf("call %d: Authorization %q", i, r.auth)
		}
	}
	if !strings.Contains(reqs[4].body, `"message":"hi"`) {
		t.Errorf("send body %q lacks the message", reqs[4].body)
	}
}

func TestHTTPClientListsAgentsTasksAndTemplates(t *testing.T) {
	ctx := context.Background()
	srv, got := fakeWebAPI(t, []map[string]any{{"name": "x", "harness": "codex"}})
	c := client.NewHTTP(srv.URL, testToken)
	as, err := c.List(ctx)
	if err != nil || len(as) != 1 || as[0].Name != "x" {
		t.Fatalf("List = %+v, %v", as, err)
	}
	if _, err := c.ListTasks(ctx); err != nil {
		t.Fatal(err)
	}
	ts, err := c.ListTemplates(ctx)
	if err != nil || len(ts) != 1 || ts[0].Name != "x" || ts[0].Harness != "codex" {
		t.Fatalf("ListTemplates = %+v, %v", ts, err)
	}
	var paths []string
	for _, r := range got() {
		paths = append(paths, r.path)
	}
	if want := "/api/agent/list /api/task/list /api/template/list"; strings.Join(paths, " ") != want {
		t.Errorf("paths %v, want %s", paths, want)
	}
}

func TestSocketClientListsTemplates(t *testing.T) {
	h := newHome(t)
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/templates" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `[{"name":"coder","harness":"claude","harness_inherited":true}]`)
	}))
	ts, err := client.New(h).ListTemplates(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Name != "coder" || !ts[0].HarnessInherited {
		t.Fatalf("ListTemplates = %+v, %v", ts, err)
	}
}

func TestHTTPClientErrorsCarryTheAPICode(t *testing.T) {
	ctx := context.Background()
	srv, _ := fakeWebAPI(t, nil)
	_, err := client.NewHTTP(srv.URL, "wrong-token").List(ctx)
	if api.CodeOf(err) != "unauthorized" || err.Error() != "bad token" {
		t.Fatalf("got %v (code %s), want the API's own code and message", err, api.CodeOf(err))
	}
}

func TestHTTPClientNeverFollowsARedirect(t *testing.T) {
	var followed bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed = true
			_, _ = io.WriteString(w, `[]`)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	_, err := client.NewHTTP(srv.URL, testToken).List(context.Background())
	if err == nil || followed {
		t.Fatalf("redirect followed (%v) or answered as success: %v", followed, err)
	}
	if !strings.Contains(err.Error(), "302") {
		t.Errorf("error %q does not show the redirect's status", err)
	}
}

func TestHTTPClientDownSaysWhereWithoutTheToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = client.NewHTTP(url, testToken).List(context.Background())
	if !client.IsDaemonDown(err) {
		t.Fatalf("got %v, want daemon_down", err)
	}
	if want := "leo web API at " + url + " not reachable"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want it to start with %q", err, want)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("message carries the token: %q", err)
	}
}

func TestHTTPClientRefusesUnusableURLOrToken(t *testing.T) {
	srv, got := fakeWebAPI(t, []any{})
	for _, k := range []struct{ url, token, want string }{
		{srv.URL, "", "no API token"},
		{srv.URL, "  \n", "no API token"},
		{srv.URL, "a\r\nX-Evil: 1" + testToken, "characters a header cannot carry"},
		{srv.URL, "with space", "characters a header cannot carry"},
		{"ftp://127.0.0.1:1", testToken, "want http://host:port"},
		{"http://user:" + testToken + "@127.0.0.1:1", testToken, "want http://host:port"},
		{"::not a url", testToken, "is not a URL"},
	} {
		_, err := client.NewHTTP(k.url, k.token).List(context.Background())
		if !client.IsInvalidArgs(err) || !strings.Contains(err.Error(), k.want) {
			t.Errorf("NewHTTP(%q, %q): got %v, want invalid_args with %q", k.url, k.token, err, k.want)
		}
		if err != nil && strings.Contains(err.Error(), testToken) {
			t.Errorf("message carries the token: %q", err)
		}
	}
	if n := len(got()); n != 0 {
		t.Errorf("%d requests reached the server; an unusable client must not send", n)
	}
}

func TestHTTPClientRefusesSocketOnlyRoutes(t *testing.T) {
	srv, got := fakeWebAPI(t, map[string]any{})
	err := client.NewHTTP(srv.URL, testToken).TurnEnd(context.Background(), api.TurnEndReport{})
	if !client.IsInvalidArgs(err) || !strings.Contains(err.Error(), "/hooks/turn-end") {
		t.Fatalf("got %v, want invalid_args naming the route", err)
	}
	if len(got()) != 0 {
		t.Error("a socket-only route reached the web API")
	}
}

// Over the HTTP API (the MCP tools' way in) a send the server took and
// never answered is outcome_unknown too, naming the URL, never the token.
func TestHTTPClientSendWithoutAnAnswerIsOutcomeUnknown(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(func() { close(release); srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := client.NewHTTP(srv.URL, testToken).SendMessage(ctx, "bob", api.SendRequest{Message: "hi", ID: "k1"})
	if !api.HasCode(err, api.CodeOutcomeUnknown) || !strings.Contains(err.Error(), "the leo web API at "+srv.URL+" got the request") || strings.Contains(err.Error(), testToken) {
		t.Fatalf("got %v, want outcome_unknown naming the URL", err)
	}
}
