package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// The restart drain on a real TUI: a turn in flight is reported until it
// ends; while deliveries are paused a message is held (nothing pasted,
// the agent not counted as working) and stays queued; resume delivers it.
func TestDrainPausesDeliveriesAndSeesTurnsInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "1500"}))
	ctx := context.Background()
	m := e.manager()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "claude", api.StateRunning)
	if busy := m.TurnsInFlight(ctx); len(busy) != 0 {
		t.Fatalf("an idle agent is working: %q", busy)
	}

	first, err := m.Send(ctx, "claude", "first")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first turn in flight", 20*time.Second, func() bool {
		return slices.Equal(m.TurnsInFlight(ctx), []string{"claude"})
	})
	m.PauseDeliveries()
	second, err := m.Send(ctx, "claude", "second")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "claude", first.ID)
	waitFor(t, "the first turn over, the held message not counted", 20*time.Second, func() bool {
		return len(m.TurnsInFlight(ctx)) == 0
	})
	if got := e.submitted(); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("submitted %q while paused, want only the first", got)
	}
	if a := mustGet(t, m, "claude"); a.Queued != 1 {
		t.Fatalf("queued %d while paused, want the held message", a.Queued)
	}
	m.ResumeDeliveries()
	waitDelivered(t, m, "claude", second.ID)
	if got := e.submitted(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("submitted %q after resume", got)
	}
}

// A message held by the drain is still the agent's when the daemon goes
// (the restart the drain was for): the next manager delivers it, once.
func TestHeldMessageIsDeliveredByTheNextManager(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	m1 := e.manager()
	if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m1, "claude", api.StateRunning)
	pane := e.paneID("claude")
	m1.PauseDeliveries()
	res, err := m1.Send(ctx, "claude", "held across the restart")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the message held", 10*time.Second, func() bool {
		a, err := m1.lookup("claude")
		if err != nil {
			return false
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.held
	})
	m1.Close()
	if got := e.submitted(); len(got) != 0 {
		t.Fatalf("submitted %q while paused", got)
	}
	m2 := e.manager()
	waitDelivered(t, m2, "claude", res.ID)
	if got := e.submitted(); !slices.Equal(got, []string{"held across the restart"}) {
		t.Fatalf("submitted %q, want the held message once", got)
	}
	if e.paneID("claude") != pane {
		t.Fatal("the agent was relaunched, not adopted")
	}
}
