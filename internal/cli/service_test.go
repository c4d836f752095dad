package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
)

func TestServiceWithoutConfigExitsWithTheSeedText(t *testing.T) {
	e, h := daemonEnv(t)
	os.Remove(h.ConfigPath)
	r := e.run("service")
	if r.code != ExitConfig {
		t.Fatalf("exit %d, want %d (config_error): %+v", r.code, ExitConfig, r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if lines[len(lines)-1] != "leo: no leo.yaml found — run 'leo setup' first" || strings.Count(r.stderr, "no leo.yaml") != 1 {
		t.Fatalf("stderr %q", r.stderr)
	}
	if _, err := os.Stat(h.ConfigPath); err == nil {
		t.Fatal("leo service created leo.yaml in an unmanaged home")
	}
}

func TestServiceWithExplicitMissingConfigCreatesNothing(t *testing.T) {
	e := newTestEnv(t)
	e.vars["PATH"] = os.Getenv("PATH")
	cfg := e.dir + "/nowhere/leo.yaml"
	r := e.run("service", "--config", cfg)
	if r.code != ExitConfig || !strings.Contains(r.stderr, cfg) {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(e.dir + "/nowhere"); err == nil {
		t.Fatal("leo service created the directory of an explicit --config")
	}
}

func TestSecondServiceIsRefusedWithTheOwnersPID(t *testing.T) {
	e, h := daemonEnv(t)
	startFakeDaemon(t, e, h)
	r := e.run("service")
	want := fmt.Sprintf("leo: another leo daemon owns %s (pid %d)", h.Root, os.Getpid())
	if r.code == ExitOK || strings.TrimSpace(r.stderr) != want {
		t.Fatalf("second service: exit %d stderr %q, want %q", r.code, r.stderr, want)
	}
}

func TestServiceRunsUntilCancelledAndLeavesNoSocket(t *testing.T) {
	e, h := daemonEnv(t)
	fake := daemontest.New()
	ios, _, _, errOut := TestStreams()
	d := daemontest.Start(t, h, func(ctx context.Context) error {
		return runService(ctx, &ServiceOptions{
			IO: ios, Home: h, Getenv: e.getenv, Version: "9.9.9", Supervised: true,
			NewAgents: func(daemon.AgentDeps) (daemon.Agents, error) { return fake, nil },
		})
	})
	if hl := d.WaitReady(t, 10*time.Second); hl.Version != "9.9.9" || hl.Home != h.Root {
		t.Fatalf("health = %+v", hl)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("service returned %v", err)
	}
	if _, err := os.Lstat(h.SocketPath()); err == nil {
		t.Fatal("socket left after a clean stop")
	}
	if errOut.Len() != 0 {
		t.Fatalf("--supervised wrote to stderr: %q", errOut.String())
	}
	if data, _ := os.ReadFile(h.ServiceLogPath()); !strings.Contains(string(data), "leo daemon starting") {
		t.Fatalf("service.log: %q", data)
	}
}

func TestServiceStatusAndReload(t *testing.T) {
	e, h := daemonEnv(t)
	r := e.run("service", "status", "--json")
	assertJSONFailure(t, r, "daemon_down", ExitDaemonDown)

	fake := startFakeDaemon(t, e, h)
	r = e.run("service", "status", "--json")
	if r.code != ExitOK {
		t.Fatalf("status: %+v", r)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "service status --json", obj, "version", "pid", "started", "ready", "home", "claude", "agents", "tmux", "registered", "service")
	if obj["ready"] != true || obj["home"] != h.Root {
		t.Errorf("status = %v", obj)
	}
	r = e.run("service", "status")
	mustContain(t, "status text", r.stdout, "daemon:  running, pid ")

	// An invalid file is refused with its finding; the daemon keeps running.
	if err := os.WriteFile(h.ConfigPath, []byte("templates:\n  assistant:\n    harness: nosuch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("service", "reload", "--json")
	obj = assertJSONFailure(t, r, "config_error", ExitConfig)
	mustContain(t, "reload refusal", obj["message"].(string), `templates.assistant.harness "nosuch" is not a registered harness`)
	if n := fake.ConfigChangedCalls(); n != 0 {
		t.Fatalf("a refused reload reached the manager (%d)", n)
	}

	if err := os.WriteFile(h.ConfigPath, []byte(agentTestConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("service", "reload")
	if r.code != ExitOK || !strings.Contains(r.stdout, "config reloaded") {
		t.Fatalf("reload: %+v", r)
	}
	if n := fake.ConfigChangedCalls(); n != 1 {
		t.Fatalf("ConfigChanged called %d times, want 1", n)
	}
}
