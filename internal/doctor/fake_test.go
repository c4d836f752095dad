package doctor

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/doctor/doctortest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/managed"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// world is one test's machine: a leo home, a user home with
// ~/Library/LaunchAgents, a fake launchctl and an Env on them.
type world struct {
	t   *testing.T
	dir string
	h   home.Home
	lc  *doctortest.Launchctl
	env *Env
}

func newWorld(t *testing.T, goos string) *world {
	t.Helper()
	dir := testutil.ShortTempDir(t, "leo-doc")
	w := &world{t: t, dir: dir}
	h, err := home.Resolve("", func(k string) string {
		if k == "LEO_HOME" {
			return filepath.Join(dir, "leo")
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	for _, d := range []string{h.StateDir(), filepath.Join(dir, "user", "Library", "LaunchAgents"), filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.lc = doctortest.New(t, filepath.Join(dir, "bin"))
	w.env = &Env{
		Home: h, GOOS: goos, UID: 501, UserHome: filepath.Join(dir, "user"),
		Marker:    managed.Read(h, managed.Platform{GOOS: goos}),
		Resolver:  binpath.Resolver{Getenv: func(string) string { return filepath.Join(dir, "bin") }},
		Launchctl: w.lc.Path, Loginctl: filepath.Join(dir, "bin", "loginctl"),
		Tmux: func(context.Context) (managed.TmuxChoice, error) {
			return managed.TmuxChoice{}, &binpath.NotFoundError{Name: "tmux"}
		},
		Harnesses: map[string]bool{"claude": true},
		// No daemon runs in these tests; TestFixReleasingWaitsUntilReady
		// drives a daemon that is not ready.
		WaitReady: func(context.Context) error { return nil },
	}
	return w
}

func (w *world) script(path, body string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o700); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) write(path, body string, perm os.FileMode) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), perm); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) register(label string)        { w.lc.Register(label) }
func (w *world) registered(label string) bool { return w.lc.Registered(label) }
func (w *world) failVerb(verb string)         { w.lc.Fail(verb) }
func (w *world) calls() []string              { return w.lc.Calls() }

// writeMarker writes a valid marker for label and re-reads it (GOOS
// darwin): self_path and tmux_path exist.
func (w *world) writeMarker(label string) {
	w.t.Helper()
	self := filepath.Join(w.dir, "app", "bin", "leo")
	tm := filepath.Join(w.dir, "app", "tmux", "3.6a", "tmux")
	w.script(self, "#!/bin/sh\n")
	w.script(tm, "#!/bin/sh\necho tmux 3.6a\n")
	data, _ := json.Marshal(map[string]any{"version": 1, "manager": "Leo.app", "launchd_label": label,
		"self_path": self, "tmux_path": tm, "env": map[string]string{"PATH": testutil.ToolPATH(w.t)}})
	w.write(w.h.MarkerPath(), string(data), 0o600)
	w.reread()
}

func (w *world) reread() {
	w.env.Marker = managed.Read(w.h, managed.Platform{GOOS: w.env.goos()})
}

// writePlist writes a CLI plist at path running program.
func (w *world) writePlist(path, program string) {
	w.write(path, `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>Label</key><string>com.blackpaw.leo</string>
<key>ProgramArguments</key><array><string>`+program+`</string><string>service</string><string>--supervised</string></array>
<key>RunAtLoad</key><true/><key>KeepAlive</key><true/>
</dict></plist>
`, 0o644)
}

// cliBinary is an executable the CLI plist can run.
func (w *world) cliBinary() string {
	p := filepath.Join(w.dir, "brew", "leo")
	w.script(p, "#!/bin/sh\n")
	return p
}

// staleSocket leaves a socket file no one serves.
func (w *world) staleSocket() {
	w.t.Helper()
	l, err := net.Listen("unix", w.h.SocketPath())
	if err != nil {
		w.t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
}

// holdLock takes daemon.lock as a daemon would, until the test ends.
func (w *world) holdLock() {
	w.t.Helper()
	l, err := lockfile.Acquire(w.h.LockPath(), w.h.Root)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { l.Release() })
}

func findCheck(t *testing.T, checks []Check, name string) (Check, bool) {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

func mustCheck(t *testing.T, checks []Check, name string) Check {
	t.Helper()
	c, ok := findCheck(t, checks, name)
	if !ok {
		t.Fatalf("no %q check in %+v", name, checks)
	}
	return c
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s = %q, want it to contain %q", what, s, sub)
		}
	}
}
