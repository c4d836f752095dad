package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
)

// fakeAPI is a socket handler that answers /health and /agents, and
// records the path each request reached it with.
func fakeAPI(seen *[]string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r.URL.Path)
		api.WriteJSON(w, 200, api.Health{Version: "v-test", Ready: true})
	})
	mux.HandleFunc("GET /agents", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r.URL.Path)
		api.WriteJSON(w, 200, []api.Agent{{Name: "coder", Harness: "claude", State: api.StateRunning}})
	})
	mux.HandleFunc("POST /agents/{name}/stop", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r.URL.Path)
		api.WriteJSON(w, 200, api.Agent{Name: r.PathValue("name"), State: api.StateStopped})
	})
	return mux
}

const minimalYAML = "templates:\n  assistant: {}\n"

func TestAPINeedsTheBearerToken(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	cases := []struct {
		name string
		auth string
	}{
		{"no header", ""},
		{"wrong token", "Bearer " + strings.Repeat("0", 64)},
		{"token prefix", "Bearer " + s.token[:10]},
		{"token plus one", "Bearer " + s.token + "x"},
		{"basic scheme", "Basic " + s.token},
		{"bare token", s.token},
	}
	for _, c := range cases {
		h := map[string]string{}
		if c.auth != "" {
			h["Authorization"] = c.auth
		}
		status, hdr, body := s.do("GET", "/api/agent/list", nil, h)
		if status != http.StatusUnauthorized || !strings.Contains(body, `"error":"unauthorized"`) {
			t.Errorf("%s: %d %s; want 401 unauthorized", c.name, status, body)
		}
		if hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate header", c.name)
		}
		if strings.Contains(body, s.token) {
			t.Errorf("%s: the answer carries the token", c.name)
		}
	}
	// A logged-in browser's cookie does not open the API.
	s.login()
	if status, _, _ := s.do("GET", "/api/agent/list", nil, nil); status != http.StatusUnauthorized {
		t.Errorf("cookie alone opened the API: %d", status)
	}
	if len(seen) != 0 {
		t.Fatalf("unauthorized requests reached the API: %v", seen)
	}
	status, _, body := s.do("GET", "/api/agent/list", nil, s.bearer())
	if status != 200 || !strings.Contains(body, `"coder"`) {
		t.Fatalf("with the token: %d %s", status, body)
	}
	status, _, body = s.do("POST", "/api/agent/coder/stop", nil, map[string]string{"Authorization": "bearer " + s.token})
	if status != 200 || !strings.Contains(body, `"stopped"`) {
		t.Fatalf("stop with the token (lowercase scheme): %d %s", status, body)
	}
	if want := []string{"/agents", "/agents/coder/stop"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("the API reached the socket routes %v; want %v", seen, want)
	}
}

func TestAPIRoutesOutsideTheTableAreNotFound(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	for _, p := range []string{"/api/drain", "/api/hooks/turn-end", "/api/agents", "/api", "/api/"} {
		status, _, body := s.do("POST", p, nil, s.bearer())
		if status != http.StatusNotFound || !strings.Contains(body, `"not_found"`) {
			t.Errorf("POST %s = %d %s; want 404 not_found", p, status, body)
		}
	}
	if len(seen) != 0 {
		t.Fatalf("requests outside the table reached the socket handler: %v", seen)
	}
}

// A foreign Host (DNS rebinding: evil.example resolving to 127.0.0.1) and a
// foreign Origin are refused on every route, before auth and before the API.
func TestHostAndOriginArePinned(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	port := strings.TrimPrefix(s.base, "http://127.0.0.1:")
	bad := []map[string]string{
		{"Host": "evil.example:" + port},
		{"Host": "evil.example"},
		{"Host": "127.0.0.1:1"},
		{"Host": "localhost.evil.example:" + port},
		{"Host": "127.0.0.1:" + port + "@evil"},
		{"Origin": "http://evil.example"},
		{"Origin": "http://evil.example:" + port},
		{"Origin": "null"},
		{"Origin": "http://127.0.0.1:1"},
		{"Origin": "file://"},
	}
	for _, h := range bad {
		for _, p := range []string{"/api/agent/list", "/login", "/web/agents", "/static/leo.css"} {
			hh := map[string]string{"Authorization": "Bearer " + s.token}
			for k, v := range h {
				hh[k] = v
			}
			status, _, body := s.do("GET", p, nil, hh)
			if status != http.StatusForbidden || !strings.Contains(body, `"forbidden"`) {
				t.Errorf("GET %s with %v = %d %s; want 403", p, h, status, body)
			}
		}
	}
	if len(seen) != 0 {
		t.Fatalf("refused requests reached the API: %v", seen)
	}
	good := []map[string]string{
		{"Host": "localhost:" + port},
		{"Host": "LOCALHOST:" + port},
		{"Host": "127.0.0.2:" + port},
		{"Host": "[::1]:" + port},
		{"Host": "127.0.0.1:" + port, "Origin": "http://localhost:" + port},
	}
	for _, h := range good {
		hh := s.bearer()
		for k, v := range h {
			hh[k] = v
		}
		if status, _, body := s.do("GET", "/api/agent/list", nil, hh); status != 200 {
			t.Errorf("GET with %v = %d %s; want 200", h, status, body)
		}
	}
}

func TestAllowedHostsOpenTheirNamesOnly(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.cfg.Web.AllowedHosts = []string{"leo.box.lan", "proxy.example:8443"}
	port := strings.TrimPrefix(s.base, "http://127.0.0.1:")
	for host, want := range map[string]int{
		"leo.box.lan:" + port: 200, "leo.box.lan": 200, "LEO.BOX.LAN": 200, "leo.box.lan:9999": 403,
		"proxy.example:8443": 200, "proxy.example": 403, "other.lan:" + port: 403,
	} {
		if status, _, body := s.do("GET", "/api/health", nil, map[string]string{"Authorization": "Bearer " + s.token, "Host": host}); status != want {
			t.Errorf("Host %s = %d %s; want %d", host, status, body, want)
		}
	}
}

func TestLoginSetsAStrictHttpOnlyCookieThatIsNotTheToken(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	// Not logged in: a page sends the browser to the login form.
	status, hdr, _ := s.do("GET", "/", nil, nil)
	if status != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/login?next=") {
		t.Fatalf("page without login = %d → %q; want 303 to /login", status, hdr.Get("Location"))
	}
	status, _, body := s.do("POST", "/login", strings.NewReader("token=wrong"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if status != http.StatusUnauthorized || !strings.Contains(body, "not this leo") {
		t.Fatalf("wrong token login = %d", status)
	}
	form := url.Values{"token": {s.token}, "next": {"//evil.example/x"}}
	status, hdr, _ = s.do("POST", "/login", strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if status != http.StatusSeeOther || hdr.Get("Location") != "/" {
		t.Fatalf("login with an off-site next = %d → %q; want 303 to /", status, hdr.Get("Location"))
	}
	set := hdr.Values("Set-Cookie")
	if len(set) != 1 {
		t.Fatalf("Set-Cookie = %q", set)
	}
	c := set[0]
	for _, want := range []string{sessionCookie + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(c, want) {
			t.Errorf("cookie %q lacks %s", c, want)
		}
	}
	if strings.Contains(c, s.token) {
		t.Fatalf("the cookie carries the token")
	}
	if status, _, body := s.do("GET", "/", nil, nil); status != http.StatusSeeOther {
		t.Fatalf("logged in / = %d %s", status, body)
	}
}

// A state-changing UI request needs the CSRF value on top of the cookie.
func TestUIPostsNeedTheCSRFValue(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.login()
	ct := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if status, _, _ := s.do("POST", "/logout", strings.NewReader(""), ct); status != http.StatusForbidden {
		t.Fatalf("logout without CSRF = %d; want 403", status)
	}
	if status, _, _ := s.do("POST", "/logout", strings.NewReader("csrf=nope"), ct); status != http.StatusForbidden {
		t.Fatalf("logout with a wrong CSRF = %d; want 403", status)
	}
	if status, _, _ := s.do("POST", "/logout", nil, map[string]string{csrfHeader: s.csrf()}); status != http.StatusSeeOther {
		t.Fatalf("logout with the CSRF header = %d; want 303", status)
	}
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	for _, p := range []string{"/login", "/api/health", "/static/leo.css", "/nope"} {
		_, hdr, _ := s.do("GET", p, nil, nil)
		csp := hdr.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if hdr.Get("X-Frame-Options") != "DENY" || hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: framing/sniffing headers missing: %v", p, hdr)
		}
	}
	// The pages carry no inline script for the CSP to block.
	_, _, body := s.do("GET", "/login", nil, nil)
	if strings.Contains(body, "<script>") || strings.Contains(body, " onclick=") {
		t.Fatalf("login page has inline script:\n%s", body)
	}
}

func TestBodyIsCapped(t *testing.T) {
	var got int
	mux := http.NewServeMux()
	mux.HandleFunc("POST /agents/{name}/send", func(w http.ResponseWriter, r *http.Request) {
		var req api.SendRequest
		err := json.NewDecoder(r.Body).Decode(&req)
		got = len(req.Message)
		if err != nil {
			api.WriteJSON(w, 400, api.Errorf(api.CodeInvalidArgs, "%v", err))
			return
		}
		api.WriteJSON(w, 200, api.SendResult{})
	})
	s := newTestSite(t, minimalYAML, mux)
	huge := `{"message":"` + strings.Repeat("a", api.MaxRequestBody+10) + `"}`
	status, _, _ := s.do("POST", "/api/agent/coder/send", strings.NewReader(huge), s.bearer())
	if status != http.StatusBadRequest || got > api.MaxRequestBody {
		t.Fatalf("oversized body = %d, handler read %d bytes; want 400 and at most %d", status, got, api.MaxRequestBody)
	}
}

// A client that sends its headers slowly (slowloris) is cut off by the
// server's header deadline rather than holding a connection forever.
func TestSlowClientIsCutOff(t *testing.T) {
	if readHeaderTimeout > 10*time.Second {
		t.Fatalf("readHeaderTimeout %v is too long to stop a slowloris", readHeaderTimeout)
	}
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.cfg.Web.Port = freePort(t)
	s.srv.Sync() // the real listener, with the real timeouts
	t.Cleanup(func() { _ = s.srv.Close(t.Context()) })
	st := s.srv.State()
	if st == nil || !st.Serving {
		t.Fatalf("web state %+v; want serving", st)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(st.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")); err != nil {
		t.Fatal(err)
	}
	// Never finish the headers; the server must close the connection
	// within its header deadline (plus a margin for a busy machine).
	_ = conn.SetReadDeadline(time.Now().Add(readHeaderTimeout + 20*time.Second))
	start := time.Now()
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		// Go answers 408 on a header timeout before closing; then EOF.
		_, err = bufio.NewReader(conn).ReadString('\n')
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept a half-sent request open for %v", time.Since(start))
	}
}

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) *int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return &port
}

// A taken port is a reported state, not a failure of the daemon; once the
// port is free, Retry serves; disabling web stops serving.
func TestBindFailureIsReportedAndRetried(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := taken.Addr().(*net.TCPAddr).Port
	s.cfg.Web.Port = &port
	s.srv.Sync()
	t.Cleanup(func() { _ = s.srv.Close(t.Context()) })
	st := s.srv.State()
	if st == nil || st.Serving || !strings.Contains(st.Error, "address already in use") || !strings.Contains(st.Error, strconv.Itoa(port)) {
		t.Fatalf("state with the port taken = %+v; want not serving, saying the address is in use", st)
	}
	taken.Close()
	s.srv.Retry()
	if st := s.srv.State(); st == nil || !st.Serving || st.Error != "" {
		t.Fatalf("state after Retry with the port free = %+v; want serving", st)
	}
	resp, err := http.Get(s.srv.State().URL + "/static/leo.css")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET on the retried listener: %v %v", resp, err)
	}
	resp.Body.Close()
	s.cfg.Web.Enabled = false
	s.srv.Sync()
	if st := s.srv.State(); st != nil {
		t.Fatalf("state with web disabled = %+v; want nil", st)
	}
	if _, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		t.Fatalf("still listening after web was disabled")
	}
}

// A new token (the file deleted, then a reload) replaces the old one at
// once: the old bearer and the old login cookie stop working.
func TestANewTokenLogsEveryoneOut(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.login()
	old := s.token
	if err := os.Remove(s.home.TokenPath()); err != nil {
		t.Fatal(err)
	}
	s.srv.Sync() // what a reload does (it cannot listen here: the test's server holds the port)
	fresh, err := apitoken.Read(s.home.TokenPath())
	if err != nil || fresh == old {
		t.Fatalf("after the reload: token %v, same as before %v", err, fresh == old)
	}
	if status, _, _ := s.do("GET", "/api/health", nil, map[string]string{"Authorization": "Bearer " + old}); status != http.StatusUnauthorized {
		t.Fatalf("the old token still opens the API: %d", status)
	}
	if status, _, _ := s.do("GET", "/", nil, nil); status != http.StatusSeeOther {
		t.Fatalf("the old cookie: %d", status)
	}
	if status, _, _ := s.do("GET", "/api/health", nil, map[string]string{"Authorization": "Bearer " + fresh}); status != 200 {
		t.Fatalf("the new token: %d", status)
	}
}

// The login page hands out no CSRF value (and no nav): a page for a
// browser that is not logged in carries nothing a forged post could use.
func TestLoginPageCarriesNoCSRFValue(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	_, _, body := s.do("GET", "/login", nil, nil)
	if strings.Contains(body, "X-CSRF-Token\": \"") && !strings.Contains(body, `"X-CSRF-Token": ""`) || strings.Contains(body, `href="/web/agents"`) {
		t.Fatalf("the login page carries a CSRF value or the nav:\n%s", body)
	}
	s.login()
	if s.csrf() == "" {
		t.Fatal("no CSRF value after login")
	}
	_, _, body = s.do("GET", "/login", nil, nil)
	if !strings.Contains(body, s.csrf()) {
		t.Fatal("a logged-in page lacks the session's CSRF value")
	}
}

// Logging out ends the session for good: the old cookie, replayed, opens
// nothing; another session's CSRF value does not serve this one.
func TestLogoutEndsTheSession(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.login()
	u, _ := url.Parse(s.base)
	old := s.client.Jar.Cookies(u)
	oldCSRF := s.csrf()
	other := newSecondBrowser(t, s)
	if status, _, _ := s.do("POST", "/logout", nil, map[string]string{csrfHeader: other}); status != http.StatusForbidden {
		t.Fatalf("logout with another session's CSRF value = %d; want 403", status)
	}
	if status, _, _ := s.do("POST", "/logout", nil, map[string]string{csrfHeader: oldCSRF}); status != http.StatusSeeOther {
		t.Fatalf("logout = %d", status)
	}
	s.client.Jar.SetCookies(u, old) // an attacker replays the old cookie
	if status, hdr, _ := s.do("GET", "/web/agents", nil, nil); status != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/login") {
		t.Fatalf("the old cookie after logout = %d %q; want the login page", status, hdr.Get("Location"))
	}
}

// newSecondBrowser logs another browser in and returns its CSRF value.
func newSecondBrowser(t *testing.T, s *testSite) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: s.client.CheckRedirect}
	resp, err := c.PostForm(s.base+"/login", url.Values{"token": {s.token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(s.base)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == sessionCookie {
			return s.srv.csrfFor(ck.Value)
		}
	}
	t.Fatal("the second browser got no session")
	return ""
}

// Sessions outlive a daemon restart (they are on disk), and the file holds
// no cookie value.
func TestSessionsSurviveARestart(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	s.login()
	u, _ := url.Parse(s.base)
	var id string
	for _, c := range s.client.Jar.Cookies(u) {
		if c.Name == sessionCookie {
			id = c.Value
		}
	}
	data, err := os.ReadFile(s.home.WebSessionsPath())
	if err != nil || strings.Contains(string(data), id) || strings.Contains(string(data), s.token) {
		t.Fatalf("sessions file: %v; it must exist and hold neither the cookie nor the token:\n%s", err, data)
	}
	if fi, _ := os.Stat(s.home.WebSessionsPath()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("sessions file mode %v", fi.Mode())
	}
	again, err := New(s.srv.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.loadToken(); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/web/agents", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: id})
	if !again.loggedIn(req) {
		t.Fatal("a restarted server forgot the login")
	}
}

func TestSafeNextStaysOnThisServer(t *testing.T) {
	for next, want := range map[string]string{
		"/web/agents":         "/web/agents",
		"/web/agents?x=1#top": "/web/agents?x=1#top",
		"/\t/evil.example":    "/",
		"/\\evil.example":     "/",
		"//evil.example":      "/",
		"http://evil.example": "/",
		"javascript:alert(1)": "/",
		"/x\r\nSet-Cookie: a": "/",
		"":                    "/",
		"web/agents":          "/",
		"/%0a":                "/%0a",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q; want %q", next, got, want)
		}
	}
}

// No path is cleaned and redirected: //api/…, /static/../api/… and the
// like are refused, so no redirect leads a client (with its bearer token)
// to another route.
func TestUncleanPathsAreRefusedNotRedirected(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	for _, p := range []string{"//api/agent/coder/stop", "/static/../api/health", "/web/agents/../../api/health", "/api/agent/coder/../../drain", "/api//agent/list", "/web//agents"} {
		status, hdr, body := s.do("POST", p, nil, s.bearer())
		if status != http.StatusBadRequest || hdr.Get("Location") != "" || !strings.Contains(body, "not clean") {
			t.Errorf("POST %s = %d (Location %q) %s; want 400, no redirect", p, status, hdr.Get("Location"), body)
		}
	}
	if len(seen) != 0 {
		t.Fatalf("unclean paths reached the API: %v", seen)
	}
}

func TestEveryOriginHeaderIsChecked(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	req, _ := http.NewRequest("GET", s.base+"/api/health", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Add("Origin", s.base)
	req.Header.Add("Origin", "http://evil.example")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a second, foreign Origin = %d; want 403", resp.StatusCode)
	}
}

func TestStaticHasNoDirectoryListing(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	if status, _, body := s.do("GET", "/static/", nil, nil); status != http.StatusNotFound || strings.Contains(body, "htmx.min.js") {
		t.Fatalf("GET /static/ = %d %s; want 404", status, body)
	}
	if status, _, _ := s.do("GET", "/static/htmx.min.js", nil, nil); status != 200 {
		t.Fatalf("GET /static/htmx.min.js = %d", status)
	}
}
