package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/handover"
	"github.com/blackpaw-studio/leo/internal/handover/handovertest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/service"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

const handoverAppLabel = "studio.blackpaw.leo.daemon"

// fakeLaunchd is launchd for the handover tests: the fake launchctl
// program answers and records every call, and a job that launchd boots
// out or bootstraps stops or starts a real daemon on the home (on a fake
// agent manager), as the LaunchAgent would.
type fakeLaunchd struct {
	t    *testing.T
	e    *testEnv
	h    home.Home
	prog *handovertest.Launchctl

	mu     sync.Mutex
	daemon *daemontest.Daemon
	agents *daemontest.Agents
}

func newFakeLaunchd(t *testing.T, e *testEnv, h home.Home) *fakeLaunchd {
	return &fakeLaunchd{t: t, e: e, h: h, prog: handovertest.New(t)}
}

func (l *fakeLaunchd) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := service.ExecRunner{}.Run(ctx, name, args...)
	if err != nil {
		return out, err
	}
	switch args[0] {
	case "bootout":
		l.stop()
	case "bootstrap":
		// The job's process is the daemon, in this process here.
		l.prog.SetRunning(strings.TrimSuffix(filepath.Base(args[2]), ".plist"), os.Getpid())
		l.start()
	}
	return out, nil
}

// start runs a daemon as the job launchd just loaded.
func (l *fakeLaunchd) start() *daemontest.Agents {
	fake := daemontest.New()
	d := daemontest.Start(l.t, l.h, func(ctx context.Context) error {
		return daemon.Run(ctx, daemon.Options{
			Home: l.h, Version: "test", Getenv: l.e.getenv, Stderr: &strings.Builder{},
			Resolver:  binpath.Resolver{Getenv: l.e.getenv},
			NewAgents: func(daemon.AgentDeps) (daemon.Agents, error) { return fake, nil },
			DrainPoll: 10 * time.Millisecond,
		})
	})
	l.mu.Lock()
	l.daemon, l.agents = d, fake
	l.mu.Unlock()
	return fake
}

func (l *fakeLaunchd) stop() {
	l.mu.Lock()
	d := l.daemon
	l.daemon = nil
	l.mu.Unlock()
	if d != nil {
		if err := d.Stop(l.t); err != nil {
			l.t.Errorf("daemon stopped with %v", err)
		}
	}
}

func (l *fakeLaunchd) current() *daemontest.Daemon {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.daemon
}

// set points the command at this launchd, on macOS.
func (l *fakeLaunchd) set(f *Factory) {
	f.GOOS = "darwin"
	f.HandoverOptions = func(o *handover.Options) {
		o.Runner, o.Launchctl, o.UID = l, l.prog.Path(), 501
		o.BinaryVersion = func(context.Context, string) (string, error) { return "1.2.3-test", nil }
		o.LockTimeout, o.ReadyTimeout, o.Poll = 10*time.Second, 20*time.Second, 20*time.Millisecond
	}
}

func handoverHome(t *testing.T) (*testEnv, home.Home, string) {
	e, h := daemonEnv(t)
	plist := filepath.Join(e.vars["HOME"], "Library", "LaunchAgents", "com.blackpaw.leo.plist")
	bin := filepath.Join(e.dir, "bin", "leo")
	for p, mode := range map[string]os.FileMode{bin: 0o755} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	data, err := service.Plist{Label: "com.blackpaw.leo", ProgramArguments: []string{bin, "service", "--supervised"},
		EnvironmentVariables: map[string]string{"PATH": "/opt/homebrew/bin:/usr/bin:/bin", "LEO_HOME": h.Root},
		RunAtLoad:            true, KeepAlive: true}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(plist), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plist, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return e, h, plist
}

// writeAppMarker is what Leo.app writes after --to-app: a valid marker.
func writeAppMarker(t *testing.T, h home.Home) {
	self := filepath.Join(h.Root, "app", "bin", "leo")
	tmux := filepath.Join(h.Root, "app", "tmux", "3.6a", "tmux")
	for _, p := range []string{self, tmux} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := json.Marshal(map[string]any{"version": 1, "manager": "Leo.app", "bundle_id": "studio.blackpaw.leo.macos",
		"launchd_label": handoverAppLabel, "self_path": self, "tmux_path": tmux, "env": map[string]string{"PATH": testutil.ToolPATH(t)}})
	if err := os.WriteFile(h.MarkerPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func lockHeld(t *testing.T, h home.Home) bool {
	held, _, err := lockfile.Probe(h.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// The round trip the app makes, through real daemons: --to-app waits for
// the busy agent, boots the CLI job out and frees the lock; the app writes
// its marker and starts its job; --to-cli drains the managed daemon, stops
// it and brings the CLI daemon back, ready.
func TestServiceHandoverRoundTrip(t *testing.T) {
	e, h, plist := handoverHome(t)
	ld := newFakeLaunchd(t, e, h)
	agents := ld.start()
	ld.prog.SetRunning("com.blackpaw.leo", os.Getpid())
	cliDaemon := ld.current()
	cliDaemon.WaitReady(t, 10*time.Second)

	agents.SetBusy("alice")
	done := make(chan result, 1)
	go func() {
		done <- e.runWith(ld.set, "service", "handover", "--to-app", "--label", handoverAppLabel, "--json")
	}()
	testutil.WaitFor(t, 10*time.Second, agents.Paused, "the drain to pause deliveries")
	if slices.Contains(ld.prog.Calls(), "bootout gui/501/com.blackpaw.leo") {
		t.Fatal("booted out while alice was busy")
	}
	agents.SetBusy()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("--to-app did not finish after the turn ended")
	}
	if r.code != ExitOK {
		t.Fatalf("--to-app: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "--to-app", obj, "ok", "previous_label", "env", "plist_backup")
	env, _ := obj["env"].(map[string]any)
	if obj["previous_label"] != "com.blackpaw.leo" || obj["plist_backup"] != plist+".handed-over" || env["PATH"] != "/opt/homebrew/bin:/usr/bin:/bin" {
		t.Fatalf("--to-app result %v", obj)
	}
	if exited, _ := cliDaemon.Exited(); !exited || lockHeld(t, h) || fileExists(plist) {
		t.Fatalf("after --to-app: daemon exited %v, lock held %v, plist there %v", exited, lockHeld(t, h), fileExists(plist))
	}
	if strings.Contains(r.stderr, "{") || !strings.Contains(r.stderr, "draining") {
		t.Fatalf("stderr %q: progress belongs there, JSON does not", r.stderr)
	}

	// The app's part.
	writeAppMarker(t, h)
	ld.prog.SetRunning(handoverAppLabel, os.Getpid())
	ld.start()
	appDaemon := ld.current()
	old := appDaemon.WaitReady(t, 10*time.Second)

	r = e.runWith(ld.set, "service", "handover", "--to-cli", "--json")
	if r.code != ExitOK {
		t.Fatalf("--to-cli: %+v", r)
	}
	obj = decodeOne(t, r.stdout)
	assertKeys(t, "--to-cli", obj, "ok", "previous_label", "plist_backup", "managed_stopped")
	if obj["previous_label"] != handoverAppLabel || obj["managed_stopped"] != true {
		t.Fatalf("--to-cli result %v", obj)
	}
	if exited, _ := appDaemon.Exited(); !exited {
		t.Fatal("the managed daemon still runs")
	}
	now, err := ld.current().Client.Health(t.Context())
	if err != nil || !now.Ready || now.Started.Equal(old.Started) {
		t.Fatalf("the CLI daemon: %+v %v", now, err)
	}
	if fileExists(h.MarkerPath()) || fileExists(h.MarkerPath()+".releasing") || !fileExists(plist) || fileExists(plist+".handed-over") {
		t.Fatal("the marker must be gone and the plist restored")
	}
	want := []string{
		"print gui/501/com.blackpaw.leo", "bootout gui/501/com.blackpaw.leo",
		"print gui/501/" + handoverAppLabel, "bootout gui/501/" + handoverAppLabel, "bootstrap gui/501 " + plist,
	}
	if got := ld.prog.Calls(); !slices.Equal(got, want) {
		t.Fatalf("launchctl calls %v\nwant %v", got, want)
	}
}

func fileExists(p string) bool { _, err := os.Lstat(p); return err == nil }

// On Linux the answer is unsupported, as the failure object of the spec.
func TestServiceHandoverUnsupportedOnLinux(t *testing.T) {
	e, _, plist := handoverHome(t)
	e.vars["PATH"] = "/nonexistent" // no launchctl could run
	r := e.runWith(func(f *Factory) { f.GOOS = "linux" }, "service", "handover", "--to-app", "--label", handoverAppLabel, "--json")
	obj := assertJSONFailure(t, r, "unsupported", ExitError)
	assertKeys(t, "unsupported", obj, "ok", "step", "error", "message")
	if obj["ok"] != false || obj["step"] != "preflight" {
		t.Fatalf("%v", obj)
	}
	if !fileExists(plist) {
		t.Fatal("the plist moved")
	}
}

// Issue 15.7: bad arguments are invalid_args first, on Linux too, before
// the platform says unsupported.
func TestServiceHandoverBadArgumentsBeforeThePlatform(t *testing.T) {
	e, _, plist := handoverHome(t)
	e.vars["PATH"] = "/nonexistent" // no launchctl could run
	for _, argv := range [][]string{{"--to-app", "--to-cli"}, {}, {"--to-app"}} {
		r := e.runWith(func(f *Factory) { f.GOOS = "linux" }, append(append([]string{"service", "handover"}, argv...), "--json")...)
		obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
		assertKeys(t, fmt.Sprint(argv), obj, "ok", "step", "error", "message")
		if obj["step"] != "preflight" {
			t.Errorf("%v: %v", argv, obj)
		}
	}
	if !fileExists(plist) {
		t.Fatal("the plist moved")
	}
}

// An agent leo launched carries LEO_AGENT: not_permitted.
func TestServiceHandoverFromAnAgentIsNotPermitted(t *testing.T) {
	e, h, plist := handoverHome(t)
	ld := newFakeLaunchd(t, e, h)
	e.vars["LEO_AGENT"] = "assistant"
	r := e.runWith(ld.set, "service", "handover", "--to-app", "--label", handoverAppLabel, "--json")
	obj := assertJSONFailure(t, r, "not_permitted", ExitError)
	if obj["step"] != "preflight" || ld.prog.Calls() != nil || !fileExists(plist) {
		t.Fatalf("%v, calls %v", obj, ld.prog.Calls())
	}
}

func TestServiceHandoverFlags(t *testing.T) {
	e, h, _ := handoverHome(t)
	ld := newFakeLaunchd(t, e, h)
	for _, argv := range [][]string{
		{"--to-app", "--to-cli", "--label", handoverAppLabel},
		{},
		{"--to-app"},
	} {
		r := e.runWith(ld.set, append(append([]string{"service", "handover"}, argv...), "--json")...)
		obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
		if obj["step"] != "preflight" {
			t.Errorf("%v: %v", argv, obj)
		}
	}
	r := e.runWith(ld.set, "service", "handover", "--to-app", "--label", "com.blackpaw.leo", "--json")
	assertJSONFailure(t, r, "label_conflict", ExitError)
}

// A bad handover command line answers in the handover's failure shape
// ({"ok":false,"step",…}, invalid_args among its codes), not only the bare
// {"error","message"}: the app reads one shape from this command.
func TestServiceHandoverBadCommandLine(t *testing.T) {
	e, h, _ := handoverHome(t)
	ld := newFakeLaunchd(t, e, h)
	for _, argv := range [][]string{
		{"--to-app", "--label", handoverAppLabel, "--json", "--no-such-flag"},
		{"--no-such-flag", "--to-cli", "--json"},
		{"--to-cli", "--json", "--label"},
		{"--to-cli", "extra", "--json"},
	} {
		r := e.runWith(ld.set, append([]string{"service", "handover"}, argv...)...)
		obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
		assertKeys(t, fmt.Sprint(argv), obj, "ok", "step", "error", "message")
		if obj["ok"] != false || obj["step"] != "preflight" {
			t.Errorf("%v: %v", argv, obj)
		}
	}
	r := e.runWith(ld.set, "service", "handover", "--to-cli", "--no-such-flag")
	if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, "leo: unknown flag: --no-such-flag") {
		t.Errorf("text mode: %+v", r)
	}
}

// --dry-run in text: the plan, nothing changed; env keys, never values.
func TestServiceHandoverDryRunText(t *testing.T) {
	e, h, plist := handoverHome(t)
	ld := newFakeLaunchd(t, e, h)
	ld.start().SetBusy()
	ld.prog.SetRunning("com.blackpaw.leo", os.Getpid())
	ld.current().WaitReady(t, 10*time.Second)
	r := e.runWith(ld.set, "service", "handover", "--to-app", "--label", handoverAppLabel, "--dry-run")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	mustContain(t, "stdout", r.stdout, "dry run: nothing changed", "[drain]", "[bootout] launchctl bootout gui/501/com.blackpaw.leo",
		"[plist] move "+plist, "env for the app's job: LEO_HOME, PATH")
	if strings.Contains(r.stdout, "/opt/homebrew/bin") {
		t.Fatalf("an env value in text output: %q", r.stdout)
	}
	if !fileExists(plist) || !lockHeld(t, h) || len(ld.prog.Calls()) != 1 {
		t.Fatalf("--dry-run changed something: calls %v", ld.prog.Calls())
	}
}

// The app failed to write managed.json after --to-app: --to-cli --label
// restores the CLI job with no marker, and a daemon comes up ready.
func TestServiceHandoverRecoveryWithoutMarker(t *testing.T) {
	e, h, plist := handoverHome(t)
	ld := newFakeLaunchd(t, e, h)
	r := e.runWith(ld.set, "service", "handover", "--to-app", "--label", handoverAppLabel, "--json")
	if r.code != ExitOK || fileExists(plist) {
		t.Fatalf("--to-app: %+v", r)
	}
	r = e.runWith(ld.set, "service", "handover", "--to-cli", "--json")
	obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
	mustContain(t, "message", obj["message"].(string), "--label")

	r = e.runWith(ld.set, "service", "handover", "--to-cli", "--label", handoverAppLabel, "--json")
	if r.code != ExitOK {
		t.Fatalf("recovery: %+v", r)
	}
	obj = decodeOne(t, r.stdout)
	assertKeys(t, "recovery", obj, "ok", "previous_label", "plist_backup", "managed_stopped", "restored_without_marker")
	if obj["managed_stopped"] != false || obj["restored_without_marker"] != true {
		t.Fatalf("%v", obj)
	}
	if hl, err := ld.current().Client.Health(t.Context()); err != nil || !hl.Ready || !fileExists(plist) {
		t.Fatalf("after recovery: %+v %v", hl, err)
	}
}
