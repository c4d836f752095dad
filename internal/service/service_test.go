package service

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blackpaw-studio/leo/internal/home"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeRunner records every call and answers from a script: the first
// rule whose prefix matches the call's words answers it.
type fakeRunner struct {
	mu    sync.Mutex
	calls []string
	rules []rule
}

type rule struct {
	prefix string // "systemctl --user show"
	out    string
	err    error
}

func (f *fakeRunner) on(prefix, out string, err error) *fakeRunner {
	f.rules = append(f.rules, rule{prefix, out, err})
	return f
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	call := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	for _, r := range f.rules {
		if strings.HasPrefix(call, r.prefix) {
			return []byte(r.out), r.err
		}
	}
	return nil, nil
}

func (f *fakeRunner) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// exitErr is a failure with an exit status, as a real program's.
type exitErr int

func (e exitErr) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e exitErr) ExitCode() int { return int(e) }

func failing(code int) error {
	return &RunError{Cmd: "fake", Err: exitErr(code), Stderr: "boom"}
}

func testOptions(t *testing.T, root string) Options {
	t.Helper()
	user := t.TempDir()
	return Options{
		Home:        home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")},
		DefaultRoot: "/home/me/.leo",
		Program:     "/usr/local/bin/leo",
		Env:         map[string]string{"PATH": "/home/me/bin:/usr/local/bin:/usr/bin:/bin"},
		UserHome:    user,
		UID:         1000,
	}
}

const showLoaded = "LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=4242\nUnitFileState=enabled\n"
const showMissing = "LoadState=not-found\nActiveState=inactive\nSubState=dead\nMainPID=0\nUnitFileState=\n"

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestSystemdUnitGolden(t *testing.T) {
	for _, tc := range []struct {
		name, golden string
		opts         func(o *Options)
	}{
		{"default home", "leo.service", func(o *Options) { o.Home.Root = o.DefaultRoot; o.Home.ConfigPath = o.DefaultRoot + "/leo.yaml" }},
		{"other home", "leo-other.service", func(o *Options) {}},
		{"explicit config with odd characters", "leo-explicit.service", func(o *Options) {
			o.Home = home.Home{Root: "/srv/my leo/100%", ConfigPath: `/srv/my leo/100%/le"o$.yaml`, ExplicitConfig: true}
			o.Program = "/opt/leo $HOME/bin/leo"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t, "/srv/other-home")
			tc.opts(&o)
			s, err := NewSystemd(o)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, s.Unit().Render())
			verifyUnit(t, s)
		})
	}
}

// verifyUnit runs `systemd-analyze verify` on the unit when the binary is
// there (.ci/run installs Debian's systemd): any complaint about the file
// fails the test. ExecStart must name an executable file, so the unit is
// verified with this test binary as the program.
func verifyUnit(t *testing.T, s *Systemd) {
	t.Helper()
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("LEO_REQUIRE_SYSTEMD_ANALYZE") != "" {
			t.Fatal("systemd-analyze not installed, and LEO_REQUIRE_SYSTEMD_ANALYZE is set (.ci/run sets it after installing systemd)")
		}
		t.Log("systemd-analyze not installed: unit not verified (CI installs it)")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := s.opts
	o.Program = exe
	v, err := NewSystemd(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, v.Name())
	if err := os.WriteFile(path, v.Unit().Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime := t.TempDir()
	cmd := exec.Command(bin, "--user", "--man=no", "verify", path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "SYSTEMD_LOG_LEVEL=info")
	out, err := cmd.CombinedOutput()
	// verify exits 0 even for keys it ignores: its output must not name
	// the file at all.
	if err != nil || strings.Contains(string(out), v.Name()) {
		t.Fatalf("systemd-analyze verify %s: %v\n%s\n--- unit\n%s", path, err, out, v.Unit().Render())
	}
}

func TestSystemdNames(t *testing.T) {
	o := testOptions(t, "/home/me/.leo")
	s, _ := NewSystemd(o)
	if s.Name() != "leo.service" || s.Path() != filepath.Join(o.UserHome, ".config/systemd/user/leo.service") {
		t.Fatalf("default home: %s at %s", s.Name(), s.Path())
	}
	o2 := testOptions(t, "/srv/a")
	o2.ConfigHome = "/xdg"
	a, _ := NewSystemd(o2)
	o2.Home.Root = "/srv/b"
	b, _ := NewSystemd(o2)
	if a.Name() == b.Name() || !strings.HasPrefix(a.Name(), "leo-") || a.Path() != "/xdg/systemd/user/"+a.Name() {
		t.Fatalf("other homes: %s, %s at %s", a.Name(), b.Name(), a.Path())
	}
}

func TestSystemdUnitNeverCarriesControlBytes(t *testing.T) {
	o := testOptions(t, "/srv/x\ny")
	if _, err := NewSystemd(o); err == nil {
		t.Fatal("a home with a newline was accepted into a unit")
	}
	o = testOptions(t, "/srv/x")
	o.Env["TOKEN"] = "s3cret\nExecStartPre=/bin/evil"
	_, err := NewSystemd(o)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "TOKEN") {
		t.Fatalf("err = %v: must refuse, name the key and not the value", err)
	}
}

func TestSystemdInstallIsIdempotent(t *testing.T) {
	o := testOptions(t, "/home/me/.leo")
	r := (&fakeRunner{}).on("systemctl --user show", showMissing, nil).on("loginctl", "Linger=no\n", nil)
	o.Runner = r
	s, _ := NewSystemd(o)
	res, err := s.Install(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Wrote || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "lingering is off") {
		t.Fatalf("first install: %+v", res)
	}
	data, _ := os.ReadFile(s.Path())
	if !bytes.Equal(data, s.Unit().Render()) {
		t.Fatal("the file is not the rendered unit")
	}
	want := []string{
		"systemctl --user show --property=LoadState,ActiveState,SubState,MainPID,UnitFileState leo.service",
		"systemctl --user daemon-reload",
		"systemctl --user enable leo.service",
		"systemctl --user start leo.service",
		"loginctl show-user 1000 --property=Linger",
	}
	if got := r.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Again: nothing written, no reload, the unit still enabled and started.
	r2 := (&fakeRunner{}).on("systemctl --user show", showLoaded, nil).on("loginctl", "Linger=yes\n", nil)
	s.opts.Runner = r2
	res, err = s.Install(context.Background())
	if err != nil || res.Wrote || len(res.Notes) != 0 {
		t.Fatalf("second install: %+v %v", res, err)
	}
	if slices.Contains(r2.Calls(), "systemctl --user daemon-reload") || slices.Contains(r2.Calls(), "systemctl --user restart leo.service") {
		t.Fatalf("second install reloaded or restarted: %q", r2.Calls())
	}

	// A changed unit (another binary) while running: rewritten and restarted.
	s.opts.Program = "/opt/leo/bin/leo"
	r3 := (&fakeRunner{}).on("systemctl --user show", showLoaded, nil).on("loginctl", "Linger=yes\n", nil)
	s.opts.Runner = r3
	if res, err = s.Install(context.Background()); err != nil || !res.Wrote {
		t.Fatalf("changed install: %+v %v", res, err)
	}
	if c := r3.Calls(); !slices.Contains(c, "systemctl --user daemon-reload") || !slices.Contains(c, "systemctl --user restart leo.service") {
		t.Fatalf("changed unit not reloaded and restarted: %q", c)
	}
}

func TestSystemdInstallReportsEachFailingStep(t *testing.T) {
	for _, step := range []string{"daemon-reload", "enable", "start"} {
		t.Run(step, func(t *testing.T) {
			o := testOptions(t, "/home/me/.leo")
			o.Runner = (&fakeRunner{}).on("systemctl --user show", showMissing, nil).on("systemctl --user "+step, "", failing(1))
			s, _ := NewSystemd(o)
			_, err := s.Install(context.Background())
			if err == nil || !strings.Contains(err.Error(), step) || !strings.Contains(err.Error(), "boom") {
				t.Fatalf("err = %v, want the %s step and its stderr", err, step)
			}
		})
	}
}

func TestSystemdUninstallStopsOnlyTheDaemon(t *testing.T) {
	o := testOptions(t, "/home/me/.leo")
	r := (&fakeRunner{}).on("systemctl --user show", showLoaded, nil)
	o.Runner = r
	s, _ := NewSystemd(o)
	if err := os.MkdirAll(filepath.Dir(s.Path()), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.Path(), s.Unit().Render(), 0o644)
	res, err := s.Uninstall(context.Background())
	if err != nil || !res.Removed || !res.WasLoaded || fileExists(s.Path()) {
		t.Fatalf("uninstall: %+v %v", res, err)
	}
	want := []string{
		"systemctl --user show --property=LoadState,ActiveState,SubState,MainPID,UnitFileState leo.service",
		"systemctl --user disable --now leo.service",
		"systemctl --user daemon-reload",
	}
	if got := r.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	// Nothing else is stopped: the unit's KillMode=process is what spares
	// tmux, and no kill of any other process is ever asked for.
	for _, c := range r.Calls() {
		if strings.Contains(c, "kill") {
			t.Fatalf("uninstall asked to kill: %s", c)
		}
	}
}

func TestSystemdStatusAndVerbs(t *testing.T) {
	o := testOptions(t, "/home/me/.leo")
	r := (&fakeRunner{}).on("systemctl --user show", showLoaded, nil).on("loginctl", "Linger=no\n", nil)
	o.Runner = r
	s, _ := NewSystemd(o)
	st, err := s.Status(context.Background())
	if err != nil || !st.Registered || !st.Running || st.PID != 4242 || !st.Enabled || st.Linger != "no" || st.State != "active (running)" {
		t.Fatalf("status %+v %v", st, err)
	}
	ctx := context.Background()
	s.Start(ctx)
	s.Stop(ctx)
	s.Restart(ctx)
	calls := r.Calls()
	if !slices.Equal(calls[len(calls)-3:], []string{"systemctl --user start leo.service", "systemctl --user stop leo.service", "systemctl --user restart leo.service"}) {
		t.Fatalf("calls %q", calls)
	}
	o.Runner = (&fakeRunner{}).on("systemctl --user show", showMissing, nil)
	s, _ = NewSystemd(o)
	if ok, err := s.Loaded(ctx); ok || err != nil {
		t.Fatalf("a not-found unit is loaded: %v %v", ok, err)
	}
	o.Runner = (&fakeRunner{}).on("systemctl --user restart", "", failing(5))
	s, _ = NewSystemd(o)
	if err := s.Restart(ctx); err == nil || !strings.Contains(err.Error(), "restart leo.service") {
		t.Fatalf("restart failure: %v", err)
	}
}

func TestLaunchdPlistGolden(t *testing.T) {
	o := testOptions(t, "/Users/me/.leo")
	o.DefaultRoot = "/Users/me/.leo"
	l, err := NewLaunchd(o)
	if err != nil {
		t.Fatal(err)
	}
	data, err := l.Plist().Encode()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "com.blackpaw.leo.plist", data)
	back, err := DecodePlist(data)
	if err != nil || back.Label != CLILabel || !back.KeepAlive || !back.RunAtLoad ||
		!slices.Equal(back.ProgramArguments, []string{"/usr/local/bin/leo", "service", "--supervised"}) {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if l.Path() != filepath.Join(o.UserHome, "Library/LaunchAgents/com.blackpaw.leo.plist") {
		t.Fatalf("path %s", l.Path())
	}
	// A managed install passes its own label; a home that is not the
	// default carries LEO_HOME.
	o.Label = "studio.blackpaw.leo.daemon"
	o.Home.Root = "/Users/me/leo2"
	m, _ := NewLaunchd(o)
	p := m.Plist()
	if p.Label != "studio.blackpaw.leo.daemon" || p.EnvironmentVariables["LEO_HOME"] != "/Users/me/leo2" {
		t.Fatalf("managed plist %+v", p)
	}
	for _, bad := range []string{"leo", "com..leo", "com.leo/../x", ""} {
		o.Label = bad
		if bad == "" {
			continue // the default label
		}
		if _, err := NewLaunchd(o); err == nil {
			t.Errorf("label %q accepted", bad)
		}
	}
}

func TestLaunchdInstallBootstrapsOnce(t *testing.T) {
	o := testOptions(t, "/Users/me/.leo")
	r := (&fakeRunner{}).on("launchctl print", "", failing(113))
	o.Runner = r
	l, _ := NewLaunchd(o)
	ctx := context.Background()
	res, err := l.Install(ctx)
	if err != nil || !res.Wrote {
		t.Fatalf("install %+v %v", res, err)
	}
	want := []string{"launchctl print gui/1000/com.blackpaw.leo", "launchctl bootstrap gui/1000 " + l.Path()}
	if !slices.Equal(r.Calls(), want) {
		t.Fatalf("calls %q want %q", r.Calls(), want)
	}
	// Loaded and unchanged: nothing to do.
	r2 := (&fakeRunner{}).on("launchctl print", "state = running\n\tpid = 77\n", nil)
	l.opts.Runner = r2
	if res, err := l.Install(ctx); err != nil || res.Wrote || len(r2.Calls()) != 1 {
		t.Fatalf("again: %+v %v %q", res, err, r2.Calls())
	}
	// Loaded and changed: bootout, then bootstrap the new plist.
	l.opts.Env = map[string]string{"PATH": "/opt/homebrew/bin:/usr/bin:/bin"}
	r3 := (&fakeRunner{}).on("launchctl print", "state = running\n", nil)
	l.opts.Runner = r3
	if res, err := l.Install(ctx); err != nil || !res.Wrote {
		t.Fatalf("changed: %+v %v", res, err)
	}
	want = []string{"launchctl print gui/1000/com.blackpaw.leo", "launchctl bootout gui/1000/com.blackpaw.leo", "launchctl bootstrap gui/1000 " + l.Path()}
	if !slices.Equal(r3.Calls(), want) {
		t.Fatalf("calls %q want %q", r3.Calls(), want)
	}
}

func TestLaunchdVerbsAndFailures(t *testing.T) {
	o := testOptions(t, "/Users/me/.leo")
	ctx := context.Background()
	r := (&fakeRunner{}).on("launchctl print", "\tstate = running\n\tpid = 77\n", nil)
	o.Runner = r
	l, _ := NewLaunchd(o)
	st, err := l.Status(ctx)
	if err != nil || !st.Registered || st.PID != 77 || st.State != "running" {
		t.Fatalf("status %+v %v", st, err)
	}
	l.Restart(ctx)
	l.Stop(ctx)
	l.Start(ctx)
	want := []string{
		"launchctl print gui/1000/com.blackpaw.leo",
		"launchctl kickstart -k gui/1000/com.blackpaw.leo",
		"launchctl bootout gui/1000/com.blackpaw.leo",
		"launchctl print gui/1000/com.blackpaw.leo",
		"launchctl kickstart gui/1000/com.blackpaw.leo",
	}
	if !slices.Equal(r.Calls(), want) {
		t.Fatalf("calls %q want %q", r.Calls(), want)
	}
	// print failing for another reason than "not loaded" is an error, not
	// "not registered".
	o.Runner = (&fakeRunner{}).on("launchctl print", "", failing(1))
	l, _ = NewLaunchd(o)
	if _, err := l.Loaded(ctx); err == nil {
		t.Fatal("a failing launchctl print read as not loaded")
	}
	o.Runner = (&fakeRunner{}).on("launchctl print", "", failing(113)).on("launchctl bootstrap", "", failing(5))
	l, _ = NewLaunchd(o)
	if _, err := l.Install(ctx); err == nil || !strings.Contains(err.Error(), "bootstrap") {
		t.Fatalf("bootstrap failure: %v", err)
	}
	// Uninstall of a loaded job boots it out and removes the plist.
	r = (&fakeRunner{}).on("launchctl print", "state = running\n", nil)
	o.Runner = r
	l, _ = NewLaunchd(o)
	os.MkdirAll(filepath.Dir(l.Path()), 0o755)
	os.WriteFile(l.Path(), []byte("x"), 0o644)
	if res, err := l.Uninstall(ctx); err != nil || !res.Removed || !res.WasLoaded || fileExists(l.Path()) {
		t.Fatalf("uninstall %+v %v", res, err)
	}
}

// The real runner against a fake program: the exit status and stderr come
// back in a RunError (launchd's "not loaded" is exit 113).
func TestExecRunnerReportsExitStatusAndStderr(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\necho 'Could not find service' >&2\nexit 113\n"
	if err := os.WriteFile(filepath.Join(dir, "launchctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := ExecRunner{Env: []string{"PATH=" + dir}}
	o := testOptions(t, "/Users/me/.leo")
	o.Runner = r
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	l, _ := NewLaunchd(o)
	ok, err := l.Loaded(context.Background())
	if ok || err != nil {
		t.Fatalf("loaded %v %v", ok, err)
	}
	_, err = r.Run(context.Background(), "launchctl", "bootout", "gui/1/x")
	var re *RunError
	if !errors.As(err, &re) || re.ExitCode() != 113 || !strings.Contains(err.Error(), "Could not find service") {
		t.Fatalf("err %v", err)
	}
	calls, _ := os.ReadFile(log)
	if string(calls) != "print gui/1000/com.blackpaw.leo\nbootout gui/1/x\n" {
		t.Fatalf("calls %q", calls)
	}
}

// Issue 15.7: with no systemd user manager (a container, an SSH login
// without lingering) every systemctl --user call fails to reach the bus;
// that is ErrNoUserManager, with systemctl's words kept, whichever way
// this systemd says it (252's and newer ones'), and so is no systemctl.
func TestSystemdWithoutAUserManager(t *testing.T) {
	ctx := context.Background()
	for _, stderr := range []string{
		"Failed to connect to bus: No medium found",
		"Failed to connect to bus: No such file or directory",
		"Failed to connect to user scope bus via local transport: $DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR not defined (consider using --machine=<user>@.host --user to connect to bus of other user)",
	} {
		o := testOptions(t, "/home/me/.leo")
		o.Runner = (&fakeRunner{}).on("systemctl --user", "", &RunError{Cmd: "systemctl --user show", Err: exitErr(1), Stderr: stderr})
		s, _ := NewSystemd(o)
		_, err := s.Loaded(ctx)
		if !errors.Is(err, ErrNoUserManager) || !strings.Contains(err.Error(), stderr) {
			t.Errorf("%q: Loaded = %v, want ErrNoUserManager with systemctl's words", stderr, err)
		}
		if err := s.Restart(ctx); !errors.Is(err, ErrNoUserManager) {
			t.Errorf("%q: Restart = %v", stderr, err)
		}
	}
	o := testOptions(t, "/home/me/.leo")
	o.Runner = (&fakeRunner{}).on("systemctl", "", &RunError{Cmd: "systemctl", Err: exec.ErrNotFound})
	s, _ := NewSystemd(o)
	if _, err := s.Loaded(ctx); !errors.Is(err, ErrNoUserManager) {
		t.Errorf("no systemctl: %v", err)
	}
	// Any other failure is not this one.
	o.Runner = (&fakeRunner{}).on("systemctl --user show", "", failing(1))
	s, _ = NewSystemd(o)
	if _, err := s.Loaded(ctx); err == nil || errors.Is(err, ErrNoUserManager) {
		t.Errorf("a plain failure: %v", err)
	}
}
