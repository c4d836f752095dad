package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/task"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

const statusConfigYAML = `defaults:
  harness: claude
web:
  enabled: true
  bind: "::1"
  port: 9999
templates:
  assistant:
    workspace: ./agents/assistant
tasks:
  nightly:
    schedule: "0 3 1 1 *"
    prompt_file: p.md
  weekly:
    schedule: "0 4 * * 0"
    prompt_file: p.md
    enabled: false
`

// statusHome is a short LEO_HOME with statusConfigYAML, and a failed last
// run of tasks.weekly in its history.
func statusHome(t *testing.T) (*testEnv, home.Home, api.TaskRun) {
	t.Helper()
	e := newTestEnv(t)
	root := testutil.ShortTempDir(t, "leo-st")
	for rel, content := range map[string]string{"leo.yaml": statusConfigYAML, "workspace/p.md": "Do it.\n"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["LEO_HOME"] = root
	e.vars["PATH"] = os.Getenv("PATH")
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	hist, err := task.OpenHistory(h.TaskHistoryDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Millisecond)
	rec := api.TaskRun{ID: start.Format("20060102T150405.000Z"), Task: "weekly", Trigger: api.TriggerManual,
		Start: start, End: start.Add(time.Minute), Outcome: api.OutcomeTimeout, Reason: api.ReasonTimeout,
		Message: "timed out after 1m"}
	if err := hist.Append(rec); err != nil {
		t.Fatal(err)
	}
	return e, h, rec
}

func TestStatusWithTheDaemonUp(t *testing.T) {
	e, h, rec := statusHome(t)
	startFakeDaemon(t, e, h)
	for _, argv := range [][]string{
		{"agent", "spawn", "assistant", "--name", "bob"},
		{"agent", "spawn", "assistant", "--name", "alice"},
		{"agent", "stop", "alice"},
	} {
		if r := e.run(argv...); r.code != ExitOK {
			t.Fatalf("%v: %+v", argv, r)
		}
	}
	registered := true
	seams := func(f *Factory) {
		f.DescribeManaged = func(got home.Home) ManagedInfo {
			if got.Root != h.Root {
				t.Errorf("Managed asked about %s, want %s", got.Root, h.Root)
			}
			return ManagedInfo{Managed: true, Manager: "Leo.app", Label: "studio.blackpaw.leo.daemon"}
		}
		f.ServiceRegistered = func(context.Context, home.Home) (bool, error) { return registered, nil }
	}
	r := e.runWith(seams, "status", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("status --json: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "status", obj, "ok", "version", "home", "config", "daemon", "managed", "service", "agents", "tasks", "web", "claude")
	d := obj["daemon"].(map[string]any)
	if d["running"] != true || d["answering"] != true || d["ready"] != true || d["pid"] != float64(os.Getpid()) || d["version"] != "test" {
		t.Errorf("daemon = %v", d)
	}
	if up, ok := d["uptime_seconds"].(float64); !ok || up < 0 || up > 600 {
		t.Errorf("uptime_seconds = %v", d["uptime_seconds"])
	}
	if _, err := time.Parse(time.RFC3339Nano, d["started"].(string)); err != nil {
		t.Errorf("started = %v", d["started"])
	}
	m := obj["managed"].(map[string]any)
	if m["managed"] != true || m["launchd_label"] != "studio.blackpaw.leo.daemon" || m["manager"] != "Leo.app" {
		t.Errorf("managed = %v", m)
	}
	if s := obj["service"].(map[string]any); s["registered"] != true {
		t.Errorf("service = %v", s)
	}
	a := obj["agents"].(map[string]any)
	if a["total"] != float64(2) || strings.Join(strs(a["running"]), ",") != "bob" || strings.Join(strs(a["stopped"]), ",") != "alice" || len(strs(a["starting"])) != 0 {
		t.Errorf("agents = %v", a)
	}
	tk := obj["tasks"].(map[string]any)
	if tk["total"] != float64(2) || tk["enabled"] != float64(1) || tk["source"] != "daemon" {
		t.Errorf("tasks = %v", tk)
	}
	next, _ := tk["next"].(map[string]any)
	if next["task"] != "nightly" {
		t.Errorf("next = %v", tk["next"])
	} else if at, err := time.Parse(time.RFC3339, next["at"].(string)); err != nil || at.Month() != time.January || at.Day() != 1 {
		t.Errorf("next at = %v (%v)", next["at"], err)
	}
	failing := tk["failing"].([]any)
	if len(failing) != 1 {
		t.Fatalf("failing = %v", failing)
	}
	fl := failing[0].(map[string]any)
	if fl["task"] != "weekly" || fl["run"] != rec.ID || fl["outcome"] != "timeout" || fl["reason"] != "timeout" {
		t.Errorf("failing[0] = %v", fl)
	}
	if w := obj["web"].(map[string]any); w["enabled"] != true || w["url"] != "http://[::1]:9999" {
		t.Errorf("web = %v", w)
	}
	if _, ok := obj["claude"].(map[string]any)["found"].(bool); !ok {
		t.Errorf("claude = %v", obj["claude"])
	}

	r = e.runWith(seams, "status")
	if r.code != ExitOK {
		t.Fatalf("status: %+v", r)
	}
	mustContain(t, "status", r.stdout,
		"daemon:   running, pid ", ", leo test, up ", "ready",
		"install:  managed by Leo.app (launchd job studio.blackpaw.leo.daemon)",
		"service:  registered with the service manager",
		"agents:   2 — running 1 (bob), stopped 1 (alice)",
		"tasks:    2 (1 enabled); next: nightly at ",
		"failing:  weekly: timeout (timeout) 2h ago — leo task history weekly",
		"web:      http://[::1]:9999",
		"claude:   ")

	registered = false
	r = e.runWith(seams, "status")
	mustContain(t, "status", r.stdout, "service:  not registered — 'leo service install' starts it at login")
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestStatusWithTheDaemonDown: status still answers, exit 0, from the
// config and the recorded history, and says the daemon is down.
func TestStatusWithTheDaemonDown(t *testing.T) {
	e, _, _ := statusHome(t)
	r := e.run("status", "--json")
	if r.code != ExitOK {
		t.Fatalf("status --json: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	d := obj["daemon"].(map[string]any)
	if d["running"] != false || d["answering"] != false || !strings.Contains(d["message"].(string), "not running") {
		t.Errorf("daemon = %v", d)
	}
	if obj["agents"] != nil {
		t.Errorf("agents = %v, want null (only the daemon knows)", obj["agents"])
	}
	tk := obj["tasks"].(map[string]any)
	if tk["source"] != "config" || tk["total"] != float64(2) || tk["next"] != nil {
		t.Errorf("tasks = %v", tk)
	}
	if f := tk["failing"].([]any); len(f) != 1 || f[0].(map[string]any)["task"] != "weekly" {
		t.Errorf("failing = %v", f)
	}
	if s := obj["service"].(map[string]any); s["registered"] != nil {
		t.Errorf("no seam: service.registered = %v, want null", s["registered"])
	}
	if m := obj["managed"].(map[string]any); m["managed"] != false {
		t.Errorf("no seam: managed = %v", m)
	}

	r = e.run("status")
	if r.code != ExitOK {
		t.Fatalf("status: %+v", r)
	}
	mustContain(t, "status", r.stdout, "daemon:   not running — start it with 'leo service'",
		"agents:   unknown (the daemon does not answer)", "nothing fires while the daemon is down",
		"failing:  weekly: timeout (timeout)", "service:  registration unknown")
}

// TestStatusOfAFreshHome: no leo.yaml yet is reported, exit 0, and status
// creates nothing.
func TestStatusOfAFreshHome(t *testing.T) {
	e := newTestEnv(t)
	root := filepath.Join(e.dir, "fresh")
	e.vars["LEO_HOME"] = root
	r := e.run("status", "--json")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	obj := decodeOne(t, r.stdout)
	if c := obj["config"].(map[string]any); c["found"] != false || c["path"] != filepath.Join(root, "leo.yaml") {
		t.Errorf("config = %v", c)
	}
	if w := obj["web"].(map[string]any); w["enabled"] != false {
		t.Errorf("web = %v", w)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("status created the home: %v", err)
	}
	r = e.run("status")
	mustContain(t, "status", r.stdout, "(none yet — run 'leo setup')")
}

// TestStatusOfABrokenConfig: the one failure of status is config_error.
func TestStatusOfABrokenConfig(t *testing.T) {
	e := newTestEnv(t)
	for name, yaml := range map[string]string{
		"not yaml": "templates: [\n",
		"invalid":  "templates:\n  a:\n    harness: nope\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := e.writeConfig(strings.ReplaceAll(name, " ", "-"), yaml, nil)
			assertJSONFailure(t, e.run("status", "--json", "-c", cfg), "config_error", ExitConfig)
			r := e.run("status", "-c", cfg)
			if r.code != ExitConfig || r.stdout != "" || !strings.Contains(r.stderr, "leo: ") {
				t.Errorf("text: %+v", r)
			}
		})
	}
	missing := filepath.Join(e.dir, "nowhere", "leo.yaml")
	obj := assertJSONFailure(t, e.run("status", "--json", "-c", missing), "config_error", ExitConfig)
	mustContain(t, "message", obj["message"].(string), "does not exist")
}

// TestStatusServiceSeamError: a service manager that cannot be asked is
// "unknown" with the reason, not a failure.
func TestStatusServiceSeamError(t *testing.T) {
	e, _, _ := statusHome(t)
	r := e.runWith(func(f *Factory) {
		f.ServiceRegistered = func(context.Context, home.Home) (bool, error) {
			return false, errors.New("systemctl: not found")
		}
	}, "status", "--json")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	s := decodeOne(t, r.stdout)["service"].(map[string]any)
	if s["registered"] != nil || s["message"] != "systemctl: not found" {
		t.Errorf("service = %v", s)
	}
}

func TestWebURL(t *testing.T) {
	port := 8443
	for _, c := range []struct {
		web  config.Web
		want string
	}{
		{config.Web{}, "http://127.0.0.1:8370"},
		{config.Web{Bind: "0.0.0.0", Port: &port}, "http://127.0.0.1:8443"},
		{config.Web{Bind: "::"}, "http://127.0.0.1:8370"},
		{config.Web{Bind: "::1"}, "http://[::1]:8370"},
		{config.Web{Bind: "192.168.1.5"}, "http://192.168.1.5:8370"},
	} {
		if got := (&config.Config{Web: c.web}).WebLocalURL(); got != c.want {
			t.Errorf("WebLocalURL(%+v) = %s, want %s", c.web, got, c.want)
		}
	}
}

// TestStatusOfADaemonThatHoldsTheLockButDoesNotAnswer: "running" means
// holding daemon.lock, so a daemon with broken IPC is never reported as
// stopped; it is running, not answering, with its pid and the reason.
func TestStatusOfADaemonThatHoldsTheLockButDoesNotAnswer(t *testing.T) {
	e, h, _ := statusHome(t)
	lock, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Release() })
	r := e.run("status", "--json")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	d := decodeOne(t, r.stdout)["daemon"].(map[string]any)
	if d["running"] != true || d["answering"] != false || d["pid"] != float64(os.Getpid()) || d["message"] == "" {
		t.Errorf("daemon = %v", d)
	}
	r = e.run("status")
	mustContain(t, "status", r.stdout, "daemon:   holds the lock (pid ")
}

// TestStatusDoesNotWaitForBootRestore: a daemon still restoring agents
// holds its other routes; status reports it as not ready at once, agents
// unknown, instead of waiting behind it.
func TestStatusDoesNotWaitForBootRestore(t *testing.T) {
	e, h, _ := statusHome(t)
	fake := daemontest.New()
	fake.RestoreGate = make(chan struct{})
	t.Cleanup(func() { close(fake.RestoreGate) })
	daemontest.Start(t, h, func(ctx context.Context) error {
		return daemon.Run(ctx, daemon.Options{
			Home: h, Version: "test", Getenv: e.getenv, Stderr: &strings.Builder{},
			Resolver:  binpath.Resolver{Getenv: e.getenv},
			NewAgents: func(daemon.AgentDeps) (daemon.Agents, error) { return fake, nil },
		})
	})
	select {
	case <-fake.RestoreStarted():
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon never began restoring")
	}
	r := e.run("status", "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
	obj := decodeOne(t, r.stdout)
	d := obj["daemon"].(map[string]any)
	if d["answering"] != true || d["ready"] != false {
		t.Errorf("daemon = %v", d)
	}
	if obj["agents"] != nil || obj["tasks"].(map[string]any)["source"] != "config" {
		t.Errorf("agents = %v, tasks = %v", obj["agents"], obj["tasks"])
	}
	r = e.run("status")
	mustContain(t, "status", r.stdout, "restoring agents (not ready yet)", "agents:   unknown until the daemon has restored them")
}
