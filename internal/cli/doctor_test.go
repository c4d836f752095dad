package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/doctor"
	"github.com/blackpaw-studio/leo/internal/doctor/doctortest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/managed"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// doctorEnv is a home whose doctor finds nothing failing: a valid config,
// claude and tmux on a PATH of fakes, lingering on, and a fake launchctl.
func doctorTestEnv(t *testing.T) (*testEnv, home.Home, *doctortest.Launchctl, func(*Factory)) {
	t.Helper()
	e, h := jsonRuleHome(t)
	bin := filepath.Join(e.dir, "bin")
	for name, body := range map[string]string{
		"claude":   "#!/bin/sh\necho '2.1.197 (Claude Code)'\n",
		"tmux":     "#!/bin/sh\necho 'tmux 3.4'\n",
		"loginctl": "#!/bin/sh\necho Linger=yes\n",
	} {
		if err := os.MkdirAll(bin, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["PATH"] = bin
	lc := doctortest.New(t, filepath.Join(e.dir, "lc"))
	set := func(f *Factory) {
		f.GOOS = "linux"
		f.DoctorEnv = func(de *doctor.Env) {
			de.Launchctl, de.Loginctl = lc.Path, filepath.Join(bin, "loginctl")
		}
	}
	return e, h, lc, set
}

// daemonUp stands in for a running daemon: daemon.lock held and the
// socket listening, until the test ends.
func daemonUp(t *testing.T, h home.Home) {
	t.Helper()
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release() })
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

func staleSocket(t *testing.T, h home.Home) {
	t.Helper()
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
}

// TestDoctorJSON: {ok, checks, fixed}, each check {name, status, message,
// fix when there is one}, exit 0 when nothing fails.
func TestDoctorJSON(t *testing.T) {
	e, h, _, set := doctorTestEnv(t)
	daemonUp(t, h)
	r := e.runWith(set, "doctor", "--json")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "doctor --json", obj, "ok", "checks", "fixed")
	if obj["ok"] != true {
		t.Errorf("ok = %v", obj["ok"])
	}
	if fixed, ok := obj["fixed"].([]any); !ok || len(fixed) != 0 {
		t.Errorf(`"fixed" = %#v, want []`, obj["fixed"])
	}
	names := map[string]string{}
	for _, c := range obj["checks"].([]any) {
		m := c.(map[string]any)
		if _, ok := m["fix"]; ok {
			assertKeys(t, "check", m, "name", "status", "message", "fix")
		} else {
			assertKeys(t, "check", m, "name", "status", "message")
		}
		names[m["name"].(string)] = m["status"].(string)
	}
	for _, n := range []string{"home", "config", "marker", "claude", "codex", "opencode", "tmux", "socket", "lingering", "agents.json", "task-pending.json", "task-running.json", "task history", "kept aside"} {
		if names[n] != "ok" {
			t.Errorf("check %q = %q, want ok (%v)", n, names[n], names)
		}
	}
}

// TestDoctorFailure: a failing check exits 1 with checks_failed; the
// JSON failure carries the report too, the text names the failures.
func TestDoctorFailure(t *testing.T) {
	e, h, _, set := doctorTestEnv(t)
	staleSocket(t, h)
	r := e.runWith(set, "doctor", "--json")
	obj := assertJSONFailure(t, r, "checks_failed", ExitError)
	assertKeys(t, "doctor --json failure", obj, "ok", "error", "message", "checks", "fixed")
	if obj["ok"] != false || obj["message"] != "1 check(s) failed: socket" {
		t.Errorf("%s", r.stdout)
	}

	r = e.runWith(set, "doctor")
	if r.code != ExitError {
		t.Fatalf("%+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sock string
	for _, l := range lines {
		if strings.HasPrefix(l, "fail socket: ") {
			sock = l
		}
	}
	if sock != "fail socket: stale socket "+h.SocketPath()+": no daemon holds "+h.LockPath()+" — fix: leo doctor --fix (removes it)" {
		t.Errorf("socket line %q in\n%s", sock, r.stdout)
	}
	if r.stderr != "leo: 1 check(s) failed: socket\n" {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestDoctorFixSaysWhatItDid: one line per repair, before the checks that
// now pass.
func TestDoctorFixSaysWhatItDid(t *testing.T) {
	e, h, _, set := doctorTestEnv(t)
	staleSocket(t, h)
	r := e.runWith(set, "doctor", "--fix")
	if r.code != ExitError { // repaired, and still no daemon
		t.Fatalf("%+v", r)
	}
	first := strings.SplitN(r.stdout, "\n", 2)[0]
	want := "fixed     socket: removed the stale socket " + h.SocketPath() + " (no daemon holds " + h.LockPath() + ")"
	if first != want {
		t.Errorf("first line %q, want %q", first, want)
	}
	mustContain(t, "stdout", r.stdout, "fail socket: daemon not running (no socket, no lock holder) — fix: leo service start (no job yet: leo service install; in the foreground: leo service)")

	staleSocket(t, h)
	r = e.runWith(set, "doctor", "--fix", "--json")
	obj := decodeOne(t, r.stdout)
	fixed := obj["fixed"].([]any)
	if len(fixed) != 1 {
		t.Fatalf("fixed = %v", fixed)
	}
	rep := fixed[0].(map[string]any)
	assertKeys(t, "repair", rep, "name", "ok", "message")
	if rep["name"] != "socket" || rep["ok"] != true {
		t.Errorf("%v", rep)
	}
}

// TestDoctorMacOSThroughTheCLI: on darwin (the platform seam) the launchd
// checks and repairs run against the fake launchctl: the CLI job beside
// the marker's is booted out and reported.
func TestDoctorMacOSThroughTheCLI(t *testing.T) {
	e, h, lc, set := doctorTestEnv(t)
	dir := testutil.ShortTempDir(t, "leo-app")
	self, tm := filepath.Join(dir, "bin", "leo"), filepath.Join(dir, "tmux", "3.6a", "tmux")
	for _, p := range []string{self, tm} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		// -V answers; anything else finds no server (the version guard asks).
		script := "#!/bin/sh\nif [ \"$1\" = -V ]; then echo tmux 3.6a; exit 0; fi\necho 'no server running on /tmp/x' >&2\nexit 1\n"
		if err := os.WriteFile(p, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(h.StateDir(), 0o700)
	marker := `{"version":1,"manager":"Leo.app","launchd_label":"studio.blackpaw.leo.daemon","self_path":"` + self + `","tmux_path":"` + tm + `"}`
	if err := os.WriteFile(h.MarkerPath(), []byte(marker), 0o600); err != nil {
		t.Fatal(err)
	}
	lc.Register("com.blackpaw.leo")
	lc.Register("studio.blackpaw.leo.daemon")
	darwin := func(f *Factory) { set(f); f.GOOS = "darwin" }
	daemonUp(t, h)

	r := e.runWith(darwin, "doctor")
	if r.code != ExitError {
		t.Fatalf("%+v", r)
	}
	mustContain(t, "stdout", r.stdout, "fail launchd jobs: two jobs registered: com.blackpaw.leo (the CLI job) and studio.blackpaw.leo.daemon (the marker's)")

	r = e.runWith(darwin, "doctor", "--fix")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	mustContain(t, "stdout", r.stdout, "fixed     launchd jobs: booted out the CLI job com.blackpaw.leo", "ok   launchd jobs: studio.blackpaw.leo.daemon registered (managed)")
	if lc.Registered("com.blackpaw.leo") || !lc.Registered("studio.blackpaw.leo.daemon") {
		t.Errorf("calls %q", lc.Calls())
	}
}

// TestDoctorRepeatsTheMarkerWarning: the process prints the warning once
// on stderr; doctor's marker line repeats it, and --fix keeps the file.
func TestDoctorRepeatsTheMarkerWarning(t *testing.T) {
	e, h, _, set := doctorTestEnv(t)
	os.MkdirAll(h.StateDir(), 0o700)
	if err := os.WriteFile(h.MarkerPath(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A Loader of its own: this process may have printed its one warning.
	fresh := func(f *Factory) { set(f); f.MarkerLoader = &managed.Loader{} }
	r := e.runWith(fresh, "doctor", "--fix")
	if strings.Count(r.stderr, "ignoring the managed-install marker") != 1 {
		t.Errorf("stderr %q", r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "warn marker: ignoring the managed-install marker "+h.MarkerPath(),
		"fixed     marker: left the invalid marker "+h.MarkerPath()+" in place (leo never deletes it)")
	if _, err := os.Stat(h.MarkerPath()); err != nil {
		t.Fatal(err)
	}
}

func TestDoctorBadLabel(t *testing.T) {
	e, _, _, set := doctorTestEnv(t)
	r := e.runWith(set, "doctor", "--fix", "--label", "com.blackpaw.leo", "--json")
	obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
	mustContain(t, "message", obj["message"].(string), "--label: ")
}
