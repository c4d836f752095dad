package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// apiCall is one request to the HTTP API with the bearer token.
func apiCall(t *testing.T, base, token, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// The daemon with web enabled mints the token (0600), serves the HTTP API
// over its own socket routes — spawn without claude is 424 claude_not_found
// with the contract text, exactly as on the socket — and leo status says
// where it serves.
func TestDaemonServesTheHTTPAPI(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex", "opencode")
	w.WriteConfig(nil)
	base := w.EnableWeb()
	w.startDaemon()
	fi, err := os.Stat(w.Home.TokenPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state/api.token: %v, mode %v; want minted with mode 0600", err, fi)
	}
	token := w.Token()
	if len(token) != 64 {
		t.Fatalf("minted token: %d chars, want 64 hex digits", len(token))
	}

	if status, body := apiCall(t, base, "", "GET", "/api/agent/list", ""); status != 401 {
		t.Fatalf("list without the token = %d %s", status, body)
	}
	status, body := apiCall(t, base, token, "POST", "/api/agent/spawn", `{"template":"claude"}`)
	var e api.Error
	_ = json.Unmarshal([]byte(body), &e)
	if status != http.StatusFailedDependency || e.Code != api.CodeClaudeNotFound || e.Message != claude.NotFoundMessage {
		t.Fatalf("spawn claude without claude over HTTP = %d %s; want 424 claude_not_found %q", status, body, claude.NotFoundMessage)
	}
	status, body = apiCall(t, base, token, "POST", "/api/agent/spawn", `{"template":"codex","name":"web-one"}`)
	if status != 200 || !strings.Contains(body, `"name":"web-one"`) {
		t.Fatalf("spawn codex over HTTP = %d %s", status, body)
	}
	status, body = apiCall(t, base, token, "POST", "/api/agent/web-one/send", `{"message":"hello over http"}`)
	var sent api.SendResult
	if status != 200 || json.Unmarshal([]byte(body), &sent) != nil || sent.ID == "" {
		t.Fatalf("send over HTTP = %d %s", status, body)
	}
	w.waitDelivered("web-one", sent.ID)
	// Invalid UTF-8 over HTTP is refused, never queued as U+FFFD; a named
	// message sent twice is one message with one answer.
	status, body = apiCall(t, base, token, "POST", "/api/agent/web-one/send", "{\"message\":\"a\xffb\"}")
	if status != 400 || !strings.Contains(body, `"invalid_args"`) || !strings.Contains(body, "0xff") {
		t.Fatalf("invalid UTF-8 over HTTP = %d %s", status, body)
	}
	status, first := apiCall(t, base, token, "POST", "/api/agent/web-one/send", `{"message":"named over http","id":"web-1"}`)
	_, again := apiCall(t, base, token, "POST", "/api/agent/web-one/send", `{"message":"named over http","id":"web-1"}`)
	if status != 200 || first != again || !strings.Contains(first, `"id":"web-1"`) {
		t.Fatalf("named send over HTTP twice: %d %s then %s", status, first, again)
	}
	w.waitDelivered("web-one", "web-1")
	status, body = apiCall(t, base, token, "GET", "/api/agent/list", "")
	if status != 200 || !strings.Contains(body, `"web-one"`) {
		t.Fatalf("list over HTTP = %d %s", status, body)
	}
	// The same answer as the socket's, field for field.
	viaSocket, err := w.Client.ListJSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var a, b []map[string]any
	if json.Unmarshal([]byte(body), &a) != nil || json.Unmarshal(viaSocket, &b) != nil || len(a) != 1 || len(b) != 1 || a[0]["name"] != b[0]["name"] || a[0]["created_at"] != b[0]["created_at"] || a[0]["tmux_session"] != b[0]["tmux_session"] {
		t.Fatalf("HTTP list %s differs from the socket's %s", body, viaSocket)
	}
	status, body = apiCall(t, base, token, "GET", "/api/template/list", "")
	if status != 200 || !strings.Contains(body, `"name":"codex","harness":"codex","harness_inherited":false`) {
		t.Fatalf("template list over HTTP = %d %s", status, body)
	}
	status, body = apiCall(t, base, token, "GET", "/api/health", "")
	if status != 200 || !strings.Contains(body, fmt.Sprintf(`"web":{"url":"%s","serving":true}`, base)) {
		t.Fatalf("health over HTTP = %d %s", status, body)
	}
	out, err := w.Leo(context.Background(), "status", "--json")
	var st struct {
		Web map[string]any `json:"web"`
	}
	if err != nil || json.Unmarshal(out, &st) != nil || st.Web["url"] != base || st.Web["served"] != true || st.Web["error"] != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if strings.Contains(string(out), token) {
		t.Fatal("status --json carries the token")
	}
}

// A taken port is a clear error in the status and the log; the daemon and
// its agents keep running, and it serves once the port is free.
func TestWebPortTakenKeepsTheDaemonRunning(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	w.WriteConfig(nil)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.AppendConfig(leoproc.WebSection(taken.Addr().(*net.TCPAddr).Port, true))
	d := w.startDaemon()
	ctx := context.Background()
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "codex", Name: "still-here"}); err != nil {
		t.Fatalf("spawn with the web port taken: %v", err)
	}
	out, err := w.Leo(ctx, "status")
	if err != nil || !strings.Contains(string(out), "not serving: cannot listen on 127.0.0.1:") || !strings.Contains(string(out), "address already in use") {
		t.Fatalf("status with the port taken: %v\n%s", err, out)
	}
	out, err = w.Leo(ctx, "service", "status")
	if err != nil || !strings.Contains(string(out), "web:     http://127.0.0.1:") || !strings.Contains(string(out), "not serving: cannot listen on") {
		t.Fatalf("service status with the port taken: %v\n%s", err, out)
	}
	if !strings.Contains(d.Stderr(), "web server not serving") {
		t.Fatalf("the log does not say the web server is not serving:\n%s", d.Stderr())
	}
	taken.Close()
	// The daemon tries again on its own (every owner check, 2s).
	testutil.WaitFor(t, 60*time.Second, func() bool {
		h, err := w.Client.Health(ctx)
		return err == nil && h.Web != nil && h.Web.Serving
	}, "web serving once the port is free")
	if d.Exited() {
		t.Fatal("the daemon exited")
	}
}

// leo web enable on a running daemon: the config edit, the token, the
// reload — and the daemon serves without a restart.
func TestWebEnableTurnsOnARunningDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	w.WriteConfig(nil)
	port := leoproc.FreePort(t)
	w.AppendConfig(leoproc.WebSection(port, false))
	d := w.startDaemon()
	ctx := context.Background()
	if h, err := w.Client.Health(ctx); err != nil || h.Web != nil {
		t.Fatalf("health with web off: %+v %v", h.Web, err)
	}
	out, err := w.Leo(ctx, "web", "enable", "--json")
	var res map[string]any
	if err != nil || json.Unmarshal(out, &res) != nil || res["reloaded"] != true || res["served"] != true || res["token_minted"] != true {
		t.Fatalf("web enable --json: %v\n%s", err, out)
	}
	if status, body := apiCall(t, fmt.Sprintf("http://127.0.0.1:%d", port), w.Token(), "GET", "/api/health", ""); status != 200 || !strings.Contains(body, fmt.Sprintf(`"pid":%d`, d.PID)) {
		t.Fatalf("health over HTTP after web enable = %d %s", status, body)
	}
}
