package agent

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// Lock order (found in review). Queue.Push holds the queue's mutex while
// it calls Limit, which is Manager.queueMax, which takes Manager.mu. The
// listing (view, under m.mu: List, Status) and the supervisor's views()
// (under m.mu) call a.queue.Messages()/Len(), which take the queue's
// mutex. A send racing a listing or a sweep tick deadlocks them both, and
// with m.mu held for good every later call to the daemon hangs.
func TestPushNeverTakesTheManagerLockUnderTheQueueLock(t *testing.T) {
	m, err := New(Options{
		Home:   home.Home{Root: t.TempDir()},
		Tmux:   &tmux.Server{},
		Config: func() *config.Config { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	a := m.newAgent(&Record{Name: "a1", State: api.StateRunning})
	m.agents["a1"] = a
	orig := a.queue.Limit
	inLimit := make(chan struct{})
	a.queue.Limit = func() int {
		close(inLimit) // the queue's mutex is held from here
		return orig()
	}

	m.mu.Lock() // a listing in progress (view / views hold m.mu)
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		a.queue.Push(&delivery.Item{ID: "x", Message: "hi"}) // Enqueue's push
	}()
	<-inLimit
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		_ = m.view(a) // a.queue.Messages() under m.mu
	}()
	select {
	case <-listed:
	case <-time.After(2 * time.Second):
		t.Error("deadlock: view (holding m.mu) waits for the queue's mutex, Push (holding it) waits for m.mu in queueMax")
	}
	m.mu.Unlock() // let the test end
	<-pushed
	<-listed
	m.cancel()
	a.queue.Close()
	_ = context.Background
}

// The same through the public calls only: sends and listings racing. It
// fails when neither makes progress for 5 s, with the goroutines' stacks.
func TestSendsAndListingsRaceWithoutDeadlock(t *testing.T) {
	m, err := New(Options{
		Home:   home.Home{Root: t.TempDir()},
		Tmux:   &tmux.Server{},
		Config: func() *config.Config { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	a := m.newAgent(&Record{Name: "a1", State: api.StateRunning})
	m.agents["a1"] = a
	var sends, lists atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			m.List()
			lists.Add(1)
		}
	}()
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			m.Send(context.Background(), "a1", "hi")
			sends.Add(1)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	lastS, lastL, since := int64(-1), int64(-1), time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		s, l := sends.Load(), lists.Load()
		if s != lastS || l != lastL {
			lastS, lastL, since = s, l, time.Now()
		} else if time.Since(since) > 5*time.Second {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("no send or listing finished for 5s after %d sends and %d listings: deadlock\n%s", s, l, buf[:n])
		}
		if time.Now().After(deadline) {
			t.Logf("no hang in 30s (%d sends, %d listings)", s, l)
			return
		}
	}
}
