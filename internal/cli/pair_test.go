package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/home"
)

const pairToken = "leo-tok-3f9a1c0b7d2e4f60a8b9c1d2e3f40516"

// TestPairJSONGivesAnAppWhatItNeeds: URL, token, socket, version,
// managed, daemon — the token only in --json, only on stdout.
func TestPairJSONGivesAnAppWhatItNeeds(t *testing.T) {
	e, h, _ := statusHome(t)
	if err := os.WriteFile(h.TokenPath(), []byte(pairToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startFakeDaemon(t, e, h)
	managed := func(f *Factory) {
		f.DescribeManaged = func(home.Home) ManagedInfo {
			return ManagedInfo{Managed: true, Manager: "Leo.app", Label: "studio.blackpaw.leo.daemon"}
		}
	}
	r := e.runWith(managed, "pair", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("pair --json: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "pair", obj, "ok", "version", "home", "socket", "managed", "launchd_label", "daemon", "web", "token", "token_path")
	want := map[string]any{
		"ok": true, "version": "1.2.3-test", "home": h.Root, "socket": h.SocketPath(),
		"managed": true, "launchd_label": "studio.blackpaw.leo.daemon",
		"token": pairToken, "token_path": h.TokenPath(),
	}
	for k, v := range want {
		if obj[k] != v {
			t.Errorf("%s = %v, want %v", k, obj[k], v)
		}
	}
	if w := obj["web"].(map[string]any); w["enabled"] != true || w["url"] != "http://[::1]:9999" {
		t.Errorf("web = %v", w)
	}
	if d := obj["daemon"].(map[string]any); d["answering"] != true || d["version"] != "test" {
		t.Errorf("daemon = %v", d)
	}

	// Text: everything but the token itself.
	r = e.run("pair")
	if r.code != ExitOK {
		t.Fatalf("pair: %+v", r)
	}
	if strings.Contains(r.stdout+r.stderr, pairToken) {
		t.Fatalf("text mode shows the token:\n%s%s", r.stdout, r.stderr)
	}
	mustContain(t, "pair", r.stdout, "url:     http://[::1]:9999",
		"token:   in "+h.TokenPath()+" (printed only by 'leo pair --json')",
		"socket:  "+h.SocketPath(), "leo:     1.2.3-test", "managed: no", "daemon:  running, pid ")
}

// TestPairWithoutTokenOrDaemon: no token is null (nothing minted), a
// daemon that is down is reported, not a failure.
func TestPairWithoutTokenOrDaemon(t *testing.T) {
	e, h, _ := statusHome(t)
	r := e.run("pair", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
	obj := decodeOne(t, r.stdout)
	if v, ok := obj["token"]; !ok || v != nil {
		t.Errorf("token = %v (present %v), want null", v, ok)
	}
	if d := obj["daemon"].(map[string]any); d["running"] != false || d["answering"] != false {
		t.Errorf("daemon = %v", d)
	}
	if obj["managed"] != false {
		t.Errorf("managed = %v", obj["managed"])
	}
	if _, err := os.Stat(h.TokenPath()); !os.IsNotExist(err) {
		t.Errorf("pair created a token: %v", err)
	}
	r = e.run("pair")
	mustContain(t, "pair", r.stdout, "token:   none yet ("+h.TokenPath()+")", "daemon:  not answering")
}

// TestPairRefusesUnusableTokens: a token file that is not a token is not
// passed on, and the warning names the file, never its content.
func TestPairRefusesUnusableTokens(t *testing.T) {
	e, h, _ := statusHome(t)
	for name, content := range map[string]string{
		"control bytes": "abc\x1b[31mdef",
		"inner space":   "abc def",
		"not utf-8":     "abc\xff\xfe",
		"huge":          strings.Repeat("x", apitoken.MaxBytes+1),
		"empty":         "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(h.TokenPath(), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			r := e.run("pair", "--json")
			if r.code != ExitOK {
				t.Fatalf("%+v", r)
			}
			if v := decodeOne(t, r.stdout)["token"]; v != nil {
				t.Errorf("token = %q, want null", v)
			}
			if name == "empty" {
				if r.stderr != "" {
					t.Errorf("stderr = %q", r.stderr)
				}
				return
			}
			mustContain(t, "stderr", r.stderr, "leo: pair: the API token "+h.TokenPath())
			if strings.Contains(r.stderr, "abc") || strings.Contains(r.stderr, "xxxx") {
				t.Errorf("the warning shows the content: %q", r.stderr)
			}
		})
	}
}

// TestPairNeedsAConfig: the URL comes from leo.yaml; without one pair is
// config_error with the setup text.
func TestPairNeedsAConfig(t *testing.T) {
	e := newTestEnv(t)
	e.vars["LEO_HOME"] = filepath.Join(e.dir, "fresh")
	obj := assertJSONFailure(t, e.run("pair", "--json"), "config_error", ExitConfig)
	mustContain(t, "message", obj["message"].(string), NoConfigMessage)
}
