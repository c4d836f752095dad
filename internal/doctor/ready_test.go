package doctor

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
)

// TestWaitReadyAsksTheSocket: the default wait is the daemon's own
// /health on the home's socket.
func TestWaitReadyAsksTheSocket(t *testing.T) {
	w := newWorld(t, "darwin")
	w.env.WaitReady = nil
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := w.env.waitReady(ctx); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("no daemon: %v", err)
	}
	w.write(w.h.ConfigPath, "defaults:\n  harness: claude\n", 0o600)
	getenv := func(k string) string {
		if k == "PATH" {
			return os.Getenv("PATH")
		}
		return ""
	}
	d := daemontest.Start(t, w.h, func(ctx context.Context) error {
		return daemon.Run(ctx, daemon.Options{Home: w.h, Version: "test", Getenv: getenv, Stderr: io.Discard,
			Resolver:  binpath.Resolver{Getenv: getenv},
			NewAgents: func(daemon.AgentDeps) (daemon.Agents, error) { return daemontest.New(), nil },
		})
	})
	if err := w.env.waitReady(context.Background()); err != nil {
		exited, derr := d.Exited()
		t.Fatalf("with a daemon: %v (daemon exited %v: %v)", err, exited, derr)
	}
}
