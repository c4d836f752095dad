package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

func TestSetupDefaultsWritesAValidConfigOnce(t *testing.T) {
	e := newTestEnv(t)
	root := filepath.Join(e.dir, "fresh", "leo")
	e.vars["LEO_HOME"] = root

	r := e.run("setup", "--defaults")
	if r.code != ExitOK {
		t.Fatalf("setup --defaults: exit %d, %s", r.code, r.stderr)
	}
	path := filepath.Join(root, "leo.yaml")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("leo.yaml mode = %v, want 0600", fi.Mode().Perm())
	}
	for _, dir := range []string{root, filepath.Join(root, "state")} {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, err %v; want 0700", dir, fi.Mode().Perm(), err)
		}
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("default config does not validate: %v", err)
	}
	if _, err := c.ResolveTemplate("assistant"); err != nil {
		t.Errorf("no assistant template: %v", err)
	}

	// A second run never replaces what is there.
	if err := os.WriteFile(path, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("setup", "--defaults", "--json")
	if r.code != ExitOK {
		t.Fatalf("second setup: exit %d, %s", r.code, r.stdout)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "setup --json", obj, "ok", "config", "created")
	if obj["created"] != false {
		t.Errorf("created = %v on an existing config", obj["created"])
	}
	if got, _ := os.ReadFile(path); string(got) != "# mine\n" {
		t.Errorf("existing leo.yaml was changed: %q", got)
	}
}

func TestSetupOffATerminalNeedsDefaults(t *testing.T) {
	e := newTestEnv(t)
	e.vars["LEO_HOME"] = filepath.Join(e.dir, "h")
	r := e.run("setup", "--json")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d", r.code, ExitUsage)
	}
	obj := decodeOne(t, r.stdout)
	if obj["error"] != "invalid_args" || !strings.Contains(obj["message"].(string), "--defaults") {
		t.Errorf("got %v", obj)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "h", "leo.yaml")); err == nil {
		t.Error("setup wrote a config without answers")
	}
}

func TestSetupAsksOnATerminal(t *testing.T) {
	dir := t.TempDir()
	io, in, out, _ := TestStreams()
	io.IsTTY = true
	// An unknown harness and a bad model are asked again, not written.
	in.WriteString("nope\ncodex\ngpt 5\ngpt-5.3-codex\nn\n")
	h := home.Home{Root: dir, ConfigPath: filepath.Join(dir, "leo.yaml")}
	if err := runSetup(&SetupOptions{IO: io, Home: h}); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	mustContain(t, "prompts", out.String(), `"nope" is not a registered harness`, "Serve the web UI, HTTP API and agents' MCP tools on 127.0.0.1:8370")
	c, err := config.Load(h.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("wizard config does not validate: %v", err)
	}
	r, err := c.ResolveTemplate("assistant")
	if err != nil {
		t.Fatal(err)
	}
	if r.HarnessName != "codex" || r.Model != "gpt-5.3-codex" || c.WebEnabled() {
		t.Errorf("resolved harness %q model %q web %v", r.HarnessName, r.Model, c.WebEnabled())
	}
}

// setup's help says what the web: section turns on and how it is guarded.
func TestSetupHelpSaysWhatWebServes(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("setup", "--help")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	mustContain(t, "setup --help", r.stdout, "web UI on 127.0.0.1:8370", "web.allowed_hosts", "state/api.token")
}

// Taking every default on a terminal writes the very file --defaults
// writes: the wizard renders its answers through config.FirstConfig, the
// one source of the first leo.yaml, and the model it offers is the harness's
// own built-in default.
func TestSetupDefaultAnswersWriteTheDefaultConfig(t *testing.T) {
	dir := t.TempDir()
	io, in, out, _ := TestStreams()
	io.IsTTY = true
	in.WriteString("\n\n\n")
	h := home.Home{Root: dir, ConfigPath: filepath.Join(dir, "leo.yaml")}
	if err := runSetup(&SetupOptions{IO: io, Home: h}); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	got, err := os.ReadFile(h.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := config.DefaultConfig(); string(got) != string(want) {
		t.Fatalf("wizard with default answers wrote\n%s\nwant the default config\n%s", got, want)
	}
}
