package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
)

func TestSecondDaemonRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	d1 := w.startDaemon()
	d2 := w.StartProcess()
	select {
	case <-d2.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("second daemon still running")
	}
	if d2.Cmd.ProcessState.ExitCode() == 0 {
		t.Fatal("second daemon exited 0")
	}
	want := fmt.Sprintf("another leo daemon owns %s (pid %d)", w.Home.Root, d1.PID)
	if !strings.Contains(d2.Stderr(), want) {
		t.Fatalf("second daemon said %q, want %q", d2.Stderr(), want)
	}
	if h, err := w.Client.Health(context.Background()); err != nil || h.PID != d1.PID {
		t.Fatalf("the first daemon no longer answers: %+v %v", h, err)
	}
}

// claude is looked up every time: missing at start, /health says so and a
// claude spawn fails claude_not_found (424) while codex works; installing
// it needs no daemon restart.
func TestClaudeFoundWithoutRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex", "opencode")
	w.WriteConfig(nil)
	d := w.startDaemon()
	ctx := context.Background()
	h, err := w.Client.Health(ctx)
	if err != nil || h.Claude.Found || h.Claude.Path != "" {
		t.Fatalf("health without claude: %+v %v", h, err)
	}
	_, err = w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude"})
	if !api.HasCode(err, api.CodeClaudeNotFound) || !strings.Contains(err.Error(), claude.NotFoundMessage) {
		t.Fatalf("spawn claude without claude: %v", err)
	}
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatalf("codex spawn: %v", err)
	}
	w.Install("claude")
	h, err = w.Client.Health(ctx)
	if err != nil || !h.Claude.Found || h.Claude.Path != filepath.Join(w.Bin, "claude") {
		t.Fatalf("health once claude is installed: %+v %v", h, err)
	}
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatalf("claude spawn once installed: %v", err)
	}
	if h.PID != d.PID {
		t.Fatal("the daemon was restarted")
	}
}
