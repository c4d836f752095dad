package agent

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
)

// pending is what a manager holds about h's restart: the record's
// failures, restarts and due time, and the supervisor's own due time.
func pending(m *Manager, h string) (failures, restarts int, due *time.Time, next time.Time, handled bool) {
	m.mu.Lock()
	a := m.agents[h]
	m.mu.Unlock()
	if a == nil {
		return 0, 0, nil, time.Time{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var d *time.Time
	if a.rec.RestartDue != nil {
		t := *a.rec.RestartDue
		d = &t
	}
	return a.rec.Failures, a.rec.Restarts, d, a.nextRestart, a.exitHandled
}

// An exit is counted once. A TUI killed once, then its daemon killed and
// started four times before the restart was due (issue 15 item 4): each
// restored manager continues the one pending restart at the time the first
// decided, the backoff never doubles, and the restart runs once, when due.
// Time is the fake clock; the managers are "killed" by dropping them
// (Close never touches tmux) and sweep by hand.
func TestRestoredManagerContinuesPendingRestartWithoutCountingTheExitAgain(t *testing.T) {
	const h = "claude"
	e := newEnv(t)
	clk := clock.NewFake(time.Now())
	e.tuneOpts = func(o *Options) {
		o.Clock = clk
		o.Policy = DefaultRestartPolicy()
	}
	ctx := context.Background()
	m := e.newManager()
	if err := m.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, "the TUI's pane", 20*time.Second, func() bool { pid = e.panePID(h); return pid != 0 })
	// A sweep judges only what was launched before its listing.
	clk.Advance(time.Millisecond)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exitedAt := clk.Now()
	waitFor(t, "the exit counted", 20*time.Second, func() bool {
		m.Sweep(ctx)
		f, _, _, _, handled := pending(m, h)
		return handled && f == 1
	})
	wantDue := exitedAt.Add(5 * time.Second)
	if _, _, due, next, _ := pending(m, h); due == nil || !due.Equal(wantDue) || !next.Equal(wantDue) {
		t.Fatalf("after the exit: record due %v, supervisor due %v; want both %v", due, next, wantDue)
	}
	m.Close()
	launches := len(e.launches(h))

	for i := 1; i <= 4; i++ {
		clk.Advance(time.Second) // every restart of the daemon before the restart is due
		m := e.newManager()
		st, err := m.restore(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			m.Sweep(ctx)
		}
		f, r, due, next, handled := pending(m, h)
		if st.Pending != 1 || !handled || f != 1 || r != 0 || due == nil || !due.Equal(wantDue) || !next.Equal(wantDue) {
			t.Fatalf("daemon %d: restore %+v; failures %d restarts %d, record due %v, supervisor due %v (handled %v); want the one exit, due %v",
				i, st, f, r, due, next, handled, wantDue)
		}
		if n := len(e.launches(h)); n != launches {
			t.Fatalf("daemon %d launched the TUI before its restart was due (%d launches, want %d)", i, n, launches)
		}
		m.Close()
	}

	clk.Set(wantDue)
	m = e.newManager()
	if _, err := m.restore(ctx); err != nil {
		t.Fatal(err)
	}
	m.Sweep(ctx)
	waitFor(t, "the restart", 20*time.Second, func() bool { return len(e.launches(h)) == launches+1 })
	if f, r, due, _, handled := pending(m, h); f != 1 || r != 1 || due != nil || handled {
		t.Fatalf("after the restart: failures %d restarts %d, record due %v, handled %v; want 1, 1, none, false", f, r, due, handled)
	}
	if n := strings.Count(e.logBuf.String(), "agent exited; restarting"); n != 1 {
		t.Fatalf("%q logged %d times for one exit:\n%s", "agent exited; restarting", n, e.logBuf.String())
	}
	if got := e.panePID(h); got == pid || got == 0 {
		t.Fatalf("pane pid %d after the restart (the killed one was %d)", got, pid)
	}
}
