package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// outcome waits for the outcome of delivery id to name.
func outcome(t *testing.T, m *Manager, name, id string) api.Delivery {
	t.Helper()
	var d api.Delivery
	waitFor(t, "outcome of "+id, 30*time.Second, func() bool {
		for _, x := range mustGet(t, m, name).Deliveries {
			if x.ID == id {
				d = x
				return true
			}
		}
		return false
	})
	return d
}

// A compaction queued right behind a message runs after it, once the
// message's turn is over, as the harness's own command (never a turn), and
// is confirmed by the harness's record of it.
func TestCompactRunsAfterQueuedMessagesEachHarness(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			msg, err := m.Send(context.Background(), h, "remember the word heliotrope")
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.Compact(context.Background(), h)
			if err != nil {
				t.Fatalf("Compact: %v", err)
			}
			if res.ID == "" || res.Delivery != "queued" || res.Queued != 2 {
				t.Fatalf("Compact answered %+v, want queued behind the message", res)
			}
			waitDelivered(t, m, h, msg.ID)
			d := outcome(t, m, h, res.ID)
			if d.Status != "delivered" || d.Kind != api.DeliveryCompact {
				t.Fatalf("compaction outcome %+v", d)
			}
			if got := e.submitted(); len(got) != 1 || got[0] != "remember the word heliotrope" {
				t.Fatalf("turns %q: the compaction must not be a turn", got)
			}
			// The harness ran it after the message's turn.
			var order []string
			for _, ev := range e.events() {
				switch {
				case ev.Event == "compact":
					order = append(order, "compact")
				case ev.Message != nil && ev.Event == "":
					order = append(order, "message")
				}
			}
			if strings.Join(order, ",") != "message,compact" {
				t.Fatalf("the harness saw %v, want the message then the compaction", order)
			}
		})
	}
}

// claude declines to compact an empty conversation; the outcome is a
// failure quoting claude, and the agent takes messages afterwards.
func TestCompactRefusedByTheHarnessFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "claude", api.StateRunning)
	res, err := m.Compact(context.Background(), "claude")
	if err != nil {
		t.Fatal(err)
	}
	d := outcome(t, m, "claude", res.ID)
	if d.Status != "failed" || d.Kind != api.DeliveryCompact || !strings.Contains(d.Error, "Not enough messages to compact.") {
		t.Fatalf("compaction of an empty conversation: %+v, want failed with claude's words", d)
	}
	after, err := m.Send(context.Background(), "claude", "still here")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "claude", after.ID)
}

func TestCompactRefusesStoppedAndUnknownAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	if _, err := m.Stop(context.Background(), "codex"); err != nil {
		t.Fatal(err)
	}
	var ae *api.Error
	if _, err := m.Compact(context.Background(), "codex"); !errors.As(err, &ae) || ae.Code != api.CodeAgentStopped {
		t.Fatalf("Compact of a stopped agent: %v, want agent_stopped", err)
	}
	if _, err := m.Compact(context.Background(), "nobody"); !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
		t.Fatalf("Compact of an unknown agent: %v, want not_found", err)
	}
	for _, ev := range e.events() {
		if ev.Event == "compact" {
			t.Fatal("a refused Compact reached the harness")
		}
	}
}

// Interrupted before the model answered, claude puts the message back into
// its input line (claude 2.1.197, imitated by the fake): Interrupt clears
// it — it is leo's own message — so the next message can be delivered.
func TestInterruptClearsTheMessageClaudePutBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "60000"}))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatal(err)
	}
	slow, err := m.Send(context.Background(), "claude", "a long one")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "claude", slow.ID)
	if _, err := m.Interrupt(context.Background(), "claude"); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	interrupted := false
	for _, ev := range e.events() {
		interrupted = interrupted || ev.Event == "interrupted"
	}
	if !interrupted {
		t.Fatal("the harness saw no interrupt")
	}
	waitFor(t, "the input line cleared", 10*time.Second, func() bool {
		return !strings.Contains(e.capture(m, "claude"), "❯ a long one")
	})
	next, err := m.Send(context.Background(), "claude", "after the interrupt")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "claude", next.ID)
	if got := e.submitted(); len(got) != 2 || got[1] != "after the interrupt" {
		t.Fatalf("turns %q", got)
	}
}
