package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/service"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// fakeService is a service manager whose restart stops the running
// in-process daemon and starts another on the same home, as systemd or
// launchd would.
type fakeService struct {
	t      *testing.T
	e      *testEnv
	h      home.Home
	loaded bool
	// restartErr fails Restart before anything happens.
	restartErr error
	// foreign: the running daemon is not the job's (started by hand).
	foreign bool
	// mainPID, when set, is the job's main process whatever runs.
	mainPID int

	mu       sync.Mutex
	calls    []string
	daemon   *daemontest.Daemon
	agents   *daemontest.Agents
	restarts int
}

func newFakeService(t *testing.T, e *testEnv, h home.Home) *fakeService {
	return &fakeService{t: t, e: e, h: h, loaded: true}
}

func (s *fakeService) record(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

func (s *fakeService) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// startDaemon starts the real daemon on a fake agent manager.
func (s *fakeService) startDaemon() *daemontest.Agents {
	fake := daemontest.New()
	d := daemontest.Start(s.t, s.h, func(ctx context.Context) error {
		return daemon.Run(ctx, daemon.Options{
			Home: s.h, Version: "test", Getenv: s.e.getenv, Stderr: &strings.Builder{},
			Resolver:  binpath.Resolver{Getenv: s.e.getenv},
			NewAgents: func(daemon.AgentDeps) (daemon.Agents, error) { return fake, nil },
			DrainPoll: 10 * time.Millisecond,
		})
	})
	s.mu.Lock()
	s.daemon, s.agents = d, fake
	s.mu.Unlock()
	return fake
}

func (s *fakeService) Kind() string { return "systemd" }
func (s *fakeService) Name() string { return "leo.service" }
func (s *fakeService) Path() string { return "/fake/leo.service" }
func (s *fakeService) Install(context.Context) (service.InstallResult, error) {
	s.record("install")
	return service.InstallResult{Path: s.Path(), Wrote: true, Notes: []string{"lingering is off"}}, nil
}
func (s *fakeService) Uninstall(context.Context) (service.UninstallResult, error) {
	s.record("uninstall")
	return service.UninstallResult{Path: s.Path(), Removed: true, WasLoaded: true}, nil
}
func (s *fakeService) Start(context.Context) error { s.record("start"); return nil }
func (s *fakeService) Stop(context.Context) error  { s.record("stop"); return nil }
func (s *fakeService) Restart(context.Context) error {
	s.record("restart")
	if s.restartErr != nil {
		return s.restartErr
	}
	s.mu.Lock()
	old := s.daemon
	s.restarts++
	s.mu.Unlock()
	if old != nil {
		old.Stop(s.t)
	}
	s.startDaemon()
	return nil
}

// Status reports the daemon this fake started as the job's (an
// in-process daemon has this test's pid).
func (s *fakeService) Status(context.Context) (service.Status, error) {
	st := service.Status{Kind: "systemd", Name: "leo.service", Registered: s.loaded, State: "active (running)", Linger: "no"}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mainPID != 0 {
		st.Running, st.PID = true, s.mainPID
	}
	if s.daemon != nil && !s.foreign {
		if exited, _ := s.daemon.Exited(); !exited {
			st.Running, st.PID = true, os.Getpid()
		}
	}
	return st, nil
}
func (s *fakeService) Loaded(context.Context) (bool, error) { return s.loaded, nil }

func (s *fakeService) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

func (s *fakeService) set(f *Factory) {
	f.Service = func(home.Home) (service.Manager, error) { return s, nil }
}

func restartJSON(t *testing.T, r result, drained bool) {
	t.Helper()
	if r.code != ExitOK {
		t.Fatalf("restart: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "service restart --json", obj, "ok", "drained", "restarted")
	if obj["ok"] != true || obj["drained"] != drained || obj["restarted"] != true {
		t.Fatalf("restart --json = %v, want drained %v", obj, drained)
	}
}

// A busy agent delays the restart until its turn ends; then a daemon with
// a new identity reports ready.
func TestServiceRestartWaitsForTheBusyAgent(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	agents := svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	old, _ := svc.daemon.Client.Health(context.Background())
	agents.SetBusy("alice")
	done := make(chan result, 1)
	go func() { done <- e.runWith(svc.set, "service", "restart", "--json", "--timeout", "30s") }()
	testutil.WaitFor(t, 10*time.Second, agents.Paused, "the drain to pause deliveries")
	if n := svc.Restarts(); n != 0 {
		t.Fatalf("restarted %d times while alice was busy", n)
	}
	agents.SetBusy()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("restart did not finish after the turn ended")
	}
	restartJSON(t, r, true)
	if svc.Restarts() != 1 {
		t.Fatalf("restarts %d", svc.Restarts())
	}
	now, err := svc.daemon.Client.Health(context.Background())
	if err != nil || !now.Ready || now.Started.Equal(old.Started) {
		t.Fatalf("after restart: %+v %v (old %+v)", now, err, old)
	}
	if strings.Contains(r.stderr, "{") {
		t.Fatalf("stderr carries JSON: %q", r.stderr)
	}
}

func TestServiceRestartDrainTimeoutRestartsNothing(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	agents := svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	agents.SetBusy("alice")
	r := e.runWith(svc.set, "service", "restart", "--json", "--timeout", "200ms")
	obj := assertJSONFailure(t, r, "drain_timeout", ExitError)
	mustContain(t, "drain_timeout message", obj["message"].(string), "alice")
	if svc.Restarts() != 0 || agents.Paused() {
		t.Fatalf("restarts %d, paused %v: a timed-out drain must restart nothing and resume", svc.Restarts(), agents.Paused())
	}
}

func TestServiceRestartForceSkipsTheWait(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	agents := svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	agents.SetBusy("alice")
	r := e.runWith(svc.set, "service", "restart", "--json", "--force", "--timeout", "1h")
	restartJSON(t, r, false)
	if svc.Restarts() != 1 {
		t.Fatalf("restarts %d", svc.Restarts())
	}
}

// A daemon that is down while its job is loaded is started: exit 0,
// drained false.
func TestServiceRestartOfADownDaemon(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	r := e.runWith(svc.set, "service", "restart", "--json")
	restartJSON(t, r, false)
	r = e.runWith(svc.set, "service", "restart")
	if r.code != ExitOK || !strings.Contains(r.stdout, "restarted: pid ") {
		t.Fatalf("text restart: %+v", r)
	}
}

func TestServiceRestartFailures(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	svc.loaded = false
	r := e.runWith(svc.set, "service", "restart", "--json")
	assertJSONFailure(t, r, "not_registered", ExitError)
	if len(svc.Calls()) != 0 {
		t.Fatalf("calls %q for a job that is not loaded", svc.Calls())
	}

	svc.loaded = true
	agents := svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	svc.restartErr = errors.New("systemd: restart leo.service: exit status 1")
	r = e.runWith(svc.set, "service", "restart", "--json")
	obj := assertJSONFailure(t, r, "restart_failed", ExitError)
	mustContain(t, "restart_failed", obj["message"].(string), "exit status 1")
	if agents.Paused() {
		t.Fatal("a failed restart left the running daemon's deliveries paused")
	}

	if err := os.WriteFile(h.ConfigPath, []byte("templates: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc.restartErr = nil
	r = e.runWith(svc.set, "service", "restart", "--json")
	assertJSONFailure(t, r, "config_error", ExitConfig)
	if svc.Restarts() != 0 {
		t.Fatal("restarted into a config the daemon would refuse")
	}

	r = e.runWith(svc.set, "service", "restart", "--json", "--timeout", "0s")
	assertJSONFailure(t, r, "invalid_args", ExitUsage)
	r = e.runWith(svc.set, "service", "restart", "--json", "--bogus")
	assertJSONFailure(t, r, "invalid_args", ExitUsage)
}

// busless is systemctl with no user manager to talk to: every --user call
// fails the way systemd 252 does in a container.
type busless struct{ calls []string }

func (b *busless) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	call := name + " " + strings.Join(args, " ")
	b.calls = append(b.calls, call)
	return nil, &service.RunError{Cmd: call, Err: errors.New("exit status 1"), Stderr: "Failed to connect to bus: No medium found"}
}

// Issue 15.7: with no systemd user manager (a container, an SSH login
// without lingering) the unit cannot be loaded at all: restart answers
// not_registered, says so and what to do, never restart_failed.
func TestServiceRestartWithoutAUserManager(t *testing.T) {
	e, _ := daemonEnv(t)
	run := &busless{}
	useBusless := func(f *Factory) {
		f.Service = func(h home.Home) (service.Manager, error) {
			return service.NewSystemd(service.Options{Home: h, UserHome: e.dir, Program: "/usr/bin/leo", Runner: run})
		}
	}
	r := e.runWith(useBusless, "service", "restart", "--json")
	obj := assertJSONFailure(t, r, "not_registered", ExitError)
	msg := obj["message"].(string)
	mustContain(t, "message", msg, "no systemd user manager runs for this login", "Failed to connect to bus: No medium found",
		"loginctl enable-linger", "`leo service`")
	for _, c := range run.calls {
		if !strings.Contains(c, " show ") {
			t.Errorf("restart went on past a failed show: %q", c)
		}
	}
	r = e.runWith(useBusless, "service", "start")
	if r.code == ExitOK || !strings.Contains(r.stderr+r.stdout, "loginctl enable-linger") {
		t.Errorf("service start without a user manager: %+v", r)
	}

	// And on this machine, when it has no user manager either (the
	// issue's container): the real systemctl, read-only (show).
	if runtime.GOOS != "linux" {
		return
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return
	}
	if out, err := exec.Command("systemctl", "--user", "show", "--property=Version").CombinedOutput(); err == nil || !strings.Contains(string(out), "Failed to connect") {
		t.Logf("this machine has a systemd user manager; the real-systemctl half is skipped")
		return
	}
	r = e.run("service", "restart", "--json")
	obj = assertJSONFailure(t, r, "not_registered", ExitError)
	mustContain(t, "message", obj["message"].(string), "no systemd user manager runs for this login", "loginctl enable-linger")
}

func TestServiceInstallUninstallStartStopSayWhatTheyDid(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	r := e.runWith(svc.set, "service", "install")
	if r.code != ExitOK || !strings.Contains(r.stdout, "wrote /fake/leo.service") || !strings.Contains(r.stdout, "note: lingering is off") {
		t.Fatalf("install: %+v", r)
	}
	r = e.runWith(svc.set, "service", "uninstall")
	if r.code != ExitOK || !strings.Contains(r.stdout, "removed /fake/leo.service") || !strings.Contains(r.stdout, "agents keep running") {
		t.Fatalf("uninstall: %+v", r)
	}
	r = e.runWith(svc.set, "service", "stop")
	if r.code != ExitOK || !strings.Contains(r.stdout, "stopped; the agents keep running") {
		t.Fatalf("stop: %+v", r)
	}
	r = e.runWith(svc.set, "service", "start")
	if r.code != ExitOK || !strings.Contains(r.stdout, "started") {
		t.Fatalf("start: %+v", r)
	}
	if got := strings.Join(svc.Calls(), ","); got != "install,uninstall,stop,start" {
		t.Fatalf("calls %s", got)
	}
}

func TestServiceStatusReportsRegistration(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	r := e.runWith(svc.set, "service", "status")
	if r.code != ExitDaemonDown || !strings.Contains(r.stderr, "systemd user unit leo.service registered") {
		t.Fatalf("status of a down daemon: %+v", r)
	}
	svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	r = e.runWith(svc.set, "service", "status", "--json")
	obj := decodeOne(t, r.stdout)
	if obj["registered"] != true {
		t.Fatalf("status --json %v", obj)
	}
	r = e.runWith(svc.set, "service", "status")
	mustContain(t, "status text", r.stdout, "service: systemd user unit leo.service registered, active (running), pid "+strconv.Itoa(os.Getpid())+", lingering off")
}

func TestServiceLogsTailsTheServiceLog(t *testing.T) {
	e, h := daemonEnv(t)
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(h.ServiceLogPath(), []byte("one\ntwo\nthree\n"), 0o600)
	r := e.run("service", "logs", "-n", "2")
	if r.code != ExitOK || r.stdout != "two\nthree\n" {
		t.Fatalf("logs: %+v", r)
	}
}

// A daemon started by hand holds the home: the job's daemon could never
// start, so restart refuses before draining anything.
func TestServiceRestartRefusesADaemonNotStartedByTheJob(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	agents := svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	svc.foreign = true
	r := e.runWith(svc.set, "service", "restart", "--json")
	obj := assertJSONFailure(t, r, "restart_failed", ExitError)
	mustContain(t, "restart_failed", obj["message"].(string), "not started by the systemd user unit leo.service")
	if svc.Restarts() != 0 || agents.Paused() {
		t.Fatalf("restarts %d, paused %v", svc.Restarts(), agents.Paused())
	}
}

// A daemon that answers /health but fails the drain (here: a stand-in
// that answers 500) is drain_failed, and nothing restarts.
func TestServiceRestartDrainFailed(t *testing.T) {
	e, h := daemonEnv(t)
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/health" {
			fmt.Fprintf(w, `{"version":"old","pid":4242,"ready":true,"home":%q,"claude":{"found":false},"agents":0}`, h.Root)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":"internal","message":"the drain broke"}`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	svc := newFakeService(t, e, h)
	svc.mainPID = 4242
	r := e.runWith(svc.set, "service", "restart", "--json")
	obj := assertJSONFailure(t, r, "drain_failed", ExitError)
	mustContain(t, "drain_failed", obj["message"].(string), "the drain broke")
	if svc.Restarts() != 0 {
		t.Fatal("restarted after a failed drain")
	}
}

// On a managed install the app owns the job: install and uninstall refuse
// without touching the service manager, and the other verbs act on the
// marker's label, never com.blackpaw.leo.
func TestServiceOnAManagedInstall(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	managedApp := func(f *Factory) {
		svc.set(f)
		f.DescribeManaged = func(home.Home) ManagedInfo {
			return ManagedInfo{Managed: true, Manager: "Leo.app", Label: "studio.blackpaw.leo.daemon"}
		}
	}
	for _, verb := range []string{"install", "uninstall"} {
		r := e.runWith(managedApp, "service", verb)
		if r.code != ExitError || !strings.Contains(r.stderr, "managed by Leo.app") || !strings.Contains(r.stderr, "studio.blackpaw.leo.daemon") {
			t.Fatalf("%s on a managed install: %+v", verb, r)
		}
	}
	if len(svc.Calls()) != 0 {
		t.Fatalf("calls %q on a managed install", svc.Calls())
	}

	io, _, _, _ := TestStreams()
	f := NewFactory(io, e.getenv, "test")
	f.GOOS = "darwin"
	f.DescribeManaged = func(home.Home) ManagedInfo {
		return ManagedInfo{Managed: true, Manager: "Leo.app", Label: "studio.blackpaw.leo.daemon"}
	}
	m, err := f.platformService(h)
	if err != nil || m.Kind() != "launchd" || m.Name() != "studio.blackpaw.leo.daemon" {
		t.Fatalf("managed backend %v %v", m, err)
	}
	f.DescribeManaged = func(home.Home) ManagedInfo { return ManagedInfo{} }
	if m, err = f.platformService(h); err != nil || m.Name() != "com.blackpaw.leo" {
		t.Fatalf("CLI backend %v %v", m, err)
	}
}

// uninstall --stop-agents stops every running agent through the daemon
// first (which ends each TUI properly), then removes the job; with the
// daemon down it refuses and uninstalls nothing.
func TestServiceUninstallStopAgents(t *testing.T) {
	e, h := daemonEnv(t)
	svc := newFakeService(t, e, h)
	r := e.runWith(svc.set, "service", "uninstall", "--stop-agents")
	if r.code == ExitOK || !strings.Contains(r.stderr, "the daemon must run to stop the agents") || len(svc.Calls()) != 0 {
		t.Fatalf("with the daemon down: %+v, calls %v", r, svc.Calls())
	}
	fake := svc.startDaemon()
	svc.daemon.WaitReady(t, 10*time.Second)
	fake.Put(api.Agent{Name: "one", State: api.StateRunning})
	fake.Put(api.Agent{Name: "two", State: api.StateStopped})
	r = e.runWith(svc.set, "service", "uninstall", "--stop-agents")
	if r.code != ExitOK || !strings.Contains(r.stdout, "stopped agent one") || strings.Contains(r.stdout, "agent two") || strings.Contains(r.stdout, "keep running") {
		t.Fatalf("uninstall --stop-agents: %+v", r)
	}
	if a, _ := fake.Get("one"); a.State != api.StateStopped {
		t.Fatalf("agent one after uninstall --stop-agents: %+v", a)
	}
	if got := strings.Join(svc.Calls(), ","); got != "uninstall" {
		t.Fatalf("calls %s", got)
	}
}
