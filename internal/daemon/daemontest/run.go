package daemontest

import (
	"context"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
)

// stopWithin bounds how long a cancelled daemon may take to return.
const stopWithin = 10 * time.Second

// Daemon is a daemon running in a test's background: daemon.Run, or a
// command that wraps it (leo service), in this process.
type Daemon struct {
	// Client talks to the daemon's home; closed when the test ends, after
	// the daemon stopped.
	Client *client.Client

	cancel context.CancelFunc
	done   chan struct{} // closed once run returned; err is set then
	err    error
}

// Start runs run in the background until the test ends; then it is
// cancelled and must return within 10 s. It does not wait for the socket:
// see WaitReady.
func Start(t testing.TB, h home.Home, run func(ctx context.Context) error) *Daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &Daemon{Client: client.New(h), cancel: cancel, done: make(chan struct{})}
	t.Cleanup(d.Client.Close) // registered first, so it runs after the stop
	go func() {
		d.err = run(ctx)
		close(d.done)
	}()
	t.Cleanup(func() { d.Stop(t) })
	return d
}

// Stop cancels the daemon and returns what run returned, failing the test
// if it does not return within 10 s. Calling it again returns the same.
func (d *Daemon) Stop(t testing.TB) error {
	t.Helper()
	d.cancel()
	select {
	case <-d.done:
		return d.err
	case <-time.After(stopWithin):
		t.Fatalf("daemon did not stop within %v", stopWithin)
		return nil
	}
}

// Exited reports whether run returned, and what.
func (d *Daemon) Exited() (bool, error) {
	select {
	case <-d.done:
		return true, d.err
	default:
		return false, nil
	}
}

// WaitReady waits until the daemon's /health says ready and returns it. It
// fails the test if the daemon exits first or is not ready within within.
func (d *Daemon) WaitReady(t testing.TB, within time.Duration) api.Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	go func() {
		select {
		case <-d.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	hl, err := d.Client.WaitReady(ctx, 10*time.Millisecond)
	if err != nil {
		if exited, runErr := d.Exited(); exited {
			t.Fatalf("daemon exited before it was ready: %v", runErr)
		}
		t.Fatalf("daemon not ready within %v: %v", within, err)
	}
	return hl
}
