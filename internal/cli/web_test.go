package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// webHome is a LEO_HOME holding yaml as its leo.yaml; no daemon runs.
func webHome(t *testing.T, yaml string) (*testEnv, home.Home) {
	t.Helper()
	e := newTestEnv(t)
	root := testutil.ShortTempDir(t, "leo-web")
	if err := os.WriteFile(filepath.Join(root, "leo.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars["LEO_HOME"] = root
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	return e, h
}

// web enable edits only web.enabled (adding the section when missing),
// mints the token 0600, never prints it, and a second run changes nothing.
func TestWebEnableEditsTheConfigAndMintsTheToken(t *testing.T) {
	const yaml = "# my fleet\ntemplates:\n  assistant: {} # the helper\n"
	e, h := webHome(t, yaml)
	r := e.run("web", "enable", "--json")
	if r.code != ExitOK {
		t.Fatalf("web enable: %+v", r)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %q", r.stdout)
	}
	if out["ok"] != true || out["enabled"] != true || out["url"] != "http://127.0.0.1:8370" || out["changed"] != true ||
		out["token_minted"] != true || out["reloaded"] != false || out["served"] != false || out["token_file"] != h.TokenPath() {
		t.Fatalf("web enable --json = %s", r.stdout)
	}
	data, _ := os.ReadFile(h.ConfigPath)
	if !strings.HasPrefix(string(data), yaml) || !strings.Contains(string(data), "web:\n  enabled: true\n") {
		t.Fatalf("leo.yaml after web enable:\n%s", data)
	}
	tok, err := apitoken.Read(h.TokenPath())
	if err != nil || strings.Contains(r.stdout+r.stderr, tok) {
		t.Fatalf("token %v; it must be minted and never printed", err)
	}
	if fi, _ := os.Stat(h.TokenPath()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token mode %v", fi.Mode())
	}
	r = e.run("web", "enable", "--json")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"changed":false`) || !strings.Contains(r.stdout, `"token_minted":false`) {
		t.Fatalf("second web enable: %+v", r)
	}
	if again, _ := os.ReadFile(h.ConfigPath); string(again) != string(data) {
		t.Fatalf("a second web enable changed leo.yaml")
	}
	if again, _ := apitoken.Read(h.TokenPath()); again != tok {
		t.Fatal("a second web enable changed the token")
	}
	r = e.run("web", "url")
	if r.code != ExitOK || r.stdout != "http://127.0.0.1:8370\n" {
		t.Fatalf("web url: %+v", r)
	}
}

// An existing web: section keeps its other keys and comments; only the
// value of enabled changes.
func TestWebEnableFlipsOnlyTheValue(t *testing.T) {
	const yaml = "templates:\n  assistant: {}\nweb:\n  enabled: false # off for now\n  port: 9001\n"
	e, h := webHome(t, yaml)
	if r := e.run("web", "url"); r.code == ExitOK || !strings.Contains(r.stderr+r.stdout, "'leo web enable' turns it on") {
		t.Fatalf("web url while disabled: %+v", r)
	}
	if r := e.run("web", "enable"); r.code != ExitOK || !strings.Contains(r.stdout, "http://127.0.0.1:9001") {
		t.Fatalf("web enable: %+v", r)
	}
	data, _ := os.ReadFile(h.ConfigPath)
	if want := strings.Replace(yaml, "enabled: false", "enabled: true", 1); string(data) != want {
		t.Fatalf("leo.yaml:\n%s\nwant:\n%s", data, want)
	}
}

// A config that would be invalid with web on (a non-loopback bind without
// allowed_hosts) is refused with the field named, and nothing changes.
func TestWebEnableRefusesAnInvalidResult(t *testing.T) {
	const yaml = "templates:\n  assistant: {}\nweb:\n  enabled: false\n  bind: 0.0.0.0\n"
	e, h := webHome(t, yaml)
	r := e.run("web", "enable", "--json")
	if r.code == ExitOK || !strings.Contains(r.stdout, "web.allowed_hosts") {
		t.Fatalf("web enable with a public bind and no allowed_hosts: %+v", r)
	}
	if data, _ := os.ReadFile(h.ConfigPath); string(data) != yaml {
		t.Fatalf("leo.yaml changed:\n%s", data)
	}
	if _, err := os.Stat(h.TokenPath()); err == nil {
		t.Fatal("a token was minted for a refused enable")
	}
}
