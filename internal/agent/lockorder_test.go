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

// Lock order (runtime.go): a.op → Store.mu → Manager.mu → a.mu → the
// queue's mutex. The queue's mutex is a leaf: Queue.Push reads Limit
// (agent.queueMax, which takes a.mu) before it, and the listing (List holds
// a.mu while viewLocked reads a.queue.Messages()) and the sweep's views
// take it under a.mu. Were Limit read under the queue's mutex (found in
// review), a send racing a listing or a sweep tick would deadlock them
// both, and every later call about the agent would hang.
func TestPushNeverTakesTheRuntimeLockUnderTheQueueLock(t *testing.T) {
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
		close(inLimit) // Push is under way from here
		return orig()
	}

	a.mu.Lock() // a listing in progress (List and views hold a.mu)
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		a.queue.Push(&delivery.Item{ID: "x", Message: "hi"}) // Enqueue's push
	}()
	<-inLimit
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		_ = a.viewLocked() // a.queue.Messages() under a.mu
	}()
	select {
	case <-listed:
	case <-time.After(2 * time.Second):
		t.Error("deadlock: the listing (holding a.mu) waits for the queue's mutex, Push (holding it) waits for a.mu in queueMax")
	}
	a.mu.Unlock() // let the test end
	<-pushed
	<-listed
	m.cancel()
	a.queue.Close()
}

// An agent's runtime lock is its own: one agent held (a slow section under
// its lock) holds up neither a call about another agent nor the map. (A
// save still reads every record, so it waits for every agent's lock.)
func TestOneAgentsLockHoldsUpNoOtherAgent(t *testing.T) {
	m, err := New(Options{
		Home:   home.Home{Root: t.TempDir()},
		Tmux:   &tmux.Server{},
		Config: func() *config.Config { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	a1 := m.newAgent(&Record{Name: "a1", State: api.StateRunning})
	a2 := m.newAgent(&Record{Name: "a2", State: api.StateRunning})
	m.agents["a1"], m.agents["a2"] = a1, a2
	defer func() {
		m.cancel()
		a1.queue.Close()
		a2.queue.Close()
	}()
	a1.mu.Lock()
	defer a1.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := m.Get("a2"); err != nil {
			t.Error(err)
		}
		if _, err := m.Await("a2", "nope"); !api.HasCode(err, api.CodeNotFound) {
			t.Errorf("await: %v, want not_found", err)
		}
		if _, err := m.lookup("a1"); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call about a2 (or the map) waited for a1's lock")
	}
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
	b := m.newAgent(&Record{Name: "b1", State: api.StateRunning, SessionID: "s-b1"})
	m.agents["b1"] = b
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
			// Every nesting the order allows: the listing (a.mu, then the
			// queue's), the sweep's views and next restart (each a.mu in
			// turn, then Manager.mu for the idle cache), a claim (Manager.mu
			// over each a.mu), a save (the store's lock over Manager.mu
			// over each a.mu).
			m.List()
			m.views()
			m.nextDue()
			m.claim(a, "s-b1", func() bool { return true })
			m.claimedIDs("a1")
			_ = b.commit(func(r *Record) { r.Error = "" })
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
			t.Fatalf("no send or listing finished for 5s after %d sends and %d listing rounds: deadlock\n%s", s, l, buf[:n])
		}
		if time.Now().After(deadline) {
			t.Logf("no hang in 30s (%d sends, %d listings)", s, l)
			return
		}
	}
}
