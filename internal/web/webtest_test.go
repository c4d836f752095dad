package web

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

// testSite is a web server over a given socket handler, on an httptest
// listener whose port is the configured web.port (so Host pinning sees
// the real thing).
type testSite struct {
	t      *testing.T
	srv    *Server
	ts     *httptest.Server
	home   home.Home
	cfg    *config.Config
	token  string
	base   string // http://127.0.0.1:PORT
	client *http.Client
	// conns is the server's connection tracker (conns.go).
	conns *conns
}

// newTestSite starts a site whose config is yaml (web: is added on the
// listener's port unless yaml has one) and whose API is api.
func newTestSite(t *testing.T, yaml string, apiHandler http.Handler) *testSite {
	t.Helper()
	return newTestSiteConns(t, yaml, apiHandler, maxConns)
}

// newTestSiteConns is newTestSite holding at most max connections.
func newTestSiteConns(t *testing.T, yaml string, apiHandler http.Handler, max int) *testSite {
	t.Helper()
	return newTestSiteTuned(t, yaml, apiHandler, max, nil)
}

// newTestSiteTuned is newTestSiteConns whose server tune changes before its
// http.Server is made (a shorter readTimeout).
func newTestSiteTuned(t *testing.T, yaml string, apiHandler http.Handler, max int, tune func(*Server)) *testSite {
	t.Helper()
	root := t.TempDir()
	h := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	if !strings.Contains(yaml, "web:") {
		yaml += "\nweb:\n  enabled: true\n  port: " + strconv.Itoa(port) + "\n"
	}
	if err := os.WriteFile(h.ConfigPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadValid(h.ConfigPath)
	if err != nil {
		t.Fatalf("test config: %v", err)
	}
	site := &testSite{t: t, home: h, cfg: cfg}
	srv, err := New(Options{Home: h, Config: func() *config.Config { return site.cfg }, API: apiHandler, Version: "v-test", LogPath: h.ServiceLogPath()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.loadToken(); err != nil {
		t.Fatal(err)
	}
	site.srv = srv
	site.token = string(srv.token.Load().token)
	if tune != nil {
		tune(srv)
	}
	// The server's own http.Server and listener, as Sync makes them.
	hs, lim := srv.httpServer(max)
	ts.Config = hs
	ts.Listener = lim.listener(ts.Listener)
	site.conns = lim
	ts.Start()
	t.Cleanup(ts.Close)
	site.ts = ts
	site.base = ts.URL
	jar, _ := cookiejar.New(nil)
	site.client = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return site
}

// do sends a request with the given headers and returns status and body.
func (s *testSite) do(method, path string, body io.Reader, headers map[string]string) (int, http.Header, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(data)
}

// bearer is the API's auth header.
func (s *testSite) bearer() map[string]string {
	return map[string]string{"Authorization": "Bearer " + s.token}
}

// login posts the token to /login; the site's client keeps the cookie.
func (s *testSite) login() {
	s.t.Helper()
	status, _, body := s.do("POST", "/login", strings.NewReader(url.Values{"token": {s.token}, "next": {"/web/agents"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if status != http.StatusSeeOther {
		s.t.Fatalf("login = %d %s", status, body)
	}
}

// postForm posts a form as the logged-in browser does (with the CSRF value).
func (s *testSite) postForm(path string, form url.Values) (int, http.Header, string) {
	s.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set(csrfField, s.csrf())
	return s.do("POST", path, strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

// csrf is the CSRF value of the site client's session ("" before login).
func (s *testSite) csrf() string {
	u, _ := url.Parse(s.base)
	for _, c := range s.client.Jar.Cookies(u) {
		if c.Name == sessionCookie {
			return s.srv.csrfFor(c.Value)
		}
	}
	return ""
}
