package agent

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Close returns only when nothing of the manager will write agents.json
// again: the save that follows a TUI coming up belongs to the startup job,
// which Close waits for. (A save left to its own goroutine could land after
// Close — under load, after the next daemon had written the file — and
// overwrite it: the cause of the restore test that lost its in-flight
// record on a busy machine.)
func TestCloseWaitsForTheStartupSave(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_SLOW_START_MS": "2000"}))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "opencode"}); err != nil {
		t.Fatal(err)
	}
	// Hold the store: the save that marks the agent running must wait.
	m.store.mu.Lock()
	locked := true
	defer func() {
		if locked {
			m.store.mu.Unlock()
		}
	}()
	if r := e.readRecords(); len(r) != 1 || r[0].State != api.StateStarting {
		t.Fatalf("records %+v: want the agent saved as starting before its TUI came up (FAKE_SLOW_START_MS too short for this machine?)", r)
	}
	e.waitState(m, "opencode", api.StateRunning) // in memory; its save is held
	waitFor(t, "the running save to wait on the store", 20*time.Second, func() bool {
		return stacksContain("(*Store).Save")
	})

	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	waitFor(t, "Close to return or to wait for the manager's work", 20*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
			return goroutineWaitingIn("(*Manager).Close", "sync.(*WaitGroup).Wait")
		}
	})
	select {
	case <-done:
		t.Fatal("Close returned while a save of the manager was still pending")
	default:
	}
	m.store.mu.Unlock()
	locked = false
	<-done
	if r := e.readRecords(); len(r) != 1 || r[0].State != api.StateRunning {
		t.Fatalf("records after Close %+v: want running", r)
	}
}

func stacksContain(s string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Contains(string(buf[:n]), s)
}

// goroutineWaitingIn reports whether one goroutine's stack holds both
// caller and callee.
func goroutineWaitingIn(caller, callee string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, caller) && strings.Contains(g, callee) {
			return true
		}
	}
	return false
}
