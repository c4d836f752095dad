// Package e2e drives the real leo binary: `leo service` as its own process
// over a real tmux server and the real socket, fake harnesses on PATH, an
// isolated HOME per test (all through e2e/leoproc). Daemons are killed
// with SIGKILL where the issue says so; nothing here sleeps to hope, every
// wait has a deadline.
package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) {
	code := hermetic.Main(m)
	leoproc.Cleanup()
	os.Exit(code)
}

// world is a leoproc world with the few helpers these tests share.
type world struct{ *leoproc.World }

// newWorld is leoproc.New: the fake harnesses onPath (default all) on PATH.
func newWorld(t testing.TB, onPath ...string) world {
	t.Helper()
	return world{leoproc.New(t, onPath...)}
}

// startDaemon runs `leo service` and waits until it says ready.
func (w world) startDaemon() *leoproc.Daemon {
	w.TB.Helper()
	d, _ := w.Start(60 * time.Second)
	return d
}

// sessions maps each agent session on the home's tmux server to the pid
// of its pane.
func (w world) sessions() map[string]int {
	w.TB.Helper()
	panes, err := w.AgentPanes()
	if err != nil {
		w.TB.Fatal(err)
	}
	got := map[string]int{}
	for s, ps := range panes {
		got[s] = ps[0].PID
	}
	return got
}

func (w world) get(name string) api.Agent {
	w.TB.Helper()
	a, err := w.Client.Get(context.Background(), name)
	if err != nil {
		w.TB.Fatalf("get %s: %v", name, err)
	}
	return a
}

func (w world) send(name, msg string) string {
	w.TB.Helper()
	res, err := w.Client.Send(context.Background(), name, msg)
	if err != nil {
		w.TB.Fatalf("send to %s: %v", name, err)
	}
	return res.ID
}

// waitDelivered fails the test unless message id to name is delivered
// within a minute.
func (w world) waitDelivered(name, id string) {
	w.TB.Helper()
	d := w.Delivery(name, id, 60*time.Second)
	switch {
	case d == nil:
		w.TB.Fatalf("message %s to %s: no outcome within 60s", id, name)
	case d.Status != "delivered":
		w.TB.Fatalf("message %s to %s: %s %s", id, name, d.Status, d.Error)
	}
}

// resumeArgs are the arguments with which harness h resumes conversation
// id, as its adapter writes them.
func resumeArgs(h, id string) []string { return testutil.ResumeArgs(h, id) }
