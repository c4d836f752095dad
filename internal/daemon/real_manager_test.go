package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestDaemonHostsTheRealAgentManager boots the daemon with the real
// internal/agent manager (no fake) and checks the route contract that
// matters most without claude installed: spawning a claude agent answers
// 424 claude_not_found with the contract text, and the daemon stays up.
// Agent lifecycles themselves are proven by the e2e tests.
func TestDaemonHostsTheRealAgentManager(t *testing.T) {
	h := newHome(t)
	path, _ := testPATH(t)
	socket := h.TmuxSocket("")
	testutil.KillTmuxAtEnd(t, socket)
	opts := daemon.Options{
		Home: h, Version: "test", Stderr: &testWriter{t: t},
		Resolver: resolverFor(path), Getenv: func(k string) string {
			if k == "PATH" {
				return path
			}
			return ""
		},
		DefaultRoot: "/nonexistent/.leo",
	}
	d := daemontest.Start(t, h, func(ctx context.Context) error { return daemon.Run(ctx, opts) })
	t.Cleanup(func() {
		if err := d.Stop(t); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	c := d.Client
	hl := d.WaitReady(t, 15*time.Second)
	if hl.Claude.Found || hl.Agents != 0 {
		t.Fatalf("health = %+v", hl)
	}

	_, err := c.Spawn(context.Background(), api.SpawnRequest{Template: "assistant"})
	if !client.IsClaudeNotFound(err) || err.Error() != claude.NotFoundMessage {
		t.Fatalf("spawn without claude: %v, want claude_not_found %q", err, claude.NotFoundMessage)
	}
	status, body := raw(t, h, "POST", "/agents/spawn", `{"template":"assistant"}`)
	if status != 424 || decodeErr(t, body).Code != api.CodeClaudeNotFound {
		t.Fatalf("on the wire: %d %s", status, body)
	}
	if _, err := c.Get(context.Background(), "nobody"); !client.IsNotFound(err) {
		t.Fatalf("get of an unknown agent through the real manager: %v", err)
	}
	if hl, err := c.Health(context.Background()); err != nil || !hl.Ready {
		t.Fatalf("daemon unhealthy after a refused spawn: %+v %v", hl, err)
	}
}
