package agent

import (
	"context"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// TestEmptyFleetCostsNoTmux: with no agent to watch, the supervisor's
// ticks run no tmux at all — no process, no control-mode command — with no
// tmux server and with one running; with only stopped agents too. Once an
// agent runs, the tick lists its panes again. Ticks are the fake clock's.
func TestEmptyFleetCostsNoTmux(t *testing.T) {
	const ticks = 30 // a minute of DefaultTick
	e := newEnv(t)
	clk := clock.NewFake(time.Now())
	e.tuneOpts = func(o *Options) {
		o.Clock = clk
		o.Tick = DefaultTick
	}
	ctx := context.Background()
	m := e.newManager()
	if err := m.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	e.run(m)
	// tmuxOverTicks advances the clock tick by tick, each time waiting for
	// the supervisor to sweep and wait again, and counts tmux commands.
	tmuxOverTicks := func() (execs, control int64) {
		t.Helper()
		waiting := func() bool { return clk.Pending() == 1 }
		waitFor(t, "the supervisor waiting for its tick", 10*time.Second, waiting)
		x0, c0 := e.tmux.Calls()
		for range ticks {
			clk.Advance(DefaultTick)
			waitFor(t, "the supervisor waiting for its next tick", 10*time.Second, waiting)
		}
		x1, c1 := e.tmux.Calls()
		return x1 - x0, c1 - c0
	}

	if x, c := tmuxOverTicks(); x+c != 0 {
		t.Errorf("no agents, no tmux server: %d ticks ran %d tmux processes and %d control-mode commands, want none", ticks, x, c)
	}

	// A tmux server with a session that is no agent's: the control-mode
	// client connects, and a tick still has nothing to ask it.
	if _, err := e.tmux.NewSession(ctx, tmux.SessionSpec{Name: "not-an-agent", Argv: []string{"/bin/sleep", "600"}, Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if x, c := tmuxOverTicks(); x+c != 0 {
		t.Errorf("no agents, a tmux server running: %d ticks ran %d tmux processes and %d control-mode commands, want none", ticks, x, c)
	}

	const h = "claude"
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the TUI's pane", 20*time.Second, func() bool { return e.panePID(h) != 0 })
	clk.Advance(time.Millisecond) // a sweep judges only what was launched before its listing
	if st := m.Sweep(ctx); st.TmuxCalls < 1 {
		t.Errorf("a sweep with a running agent ran %d tmux commands, want its listing", st.TmuxCalls)
	}
	if _, err := m.Stop(ctx, h); err != nil {
		t.Fatal(err)
	}
	if st := m.Sweep(ctx); st.TmuxCalls != 0 {
		t.Errorf("a sweep with only a stopped agent ran %d tmux commands, want none", st.TmuxCalls)
	}
}
