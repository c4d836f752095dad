package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

func TestSpawnThenDeliverEachHarness(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			a, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h})
			if err != nil {
				t.Fatalf("Spawn: %v", err)
			}
			if a.Name != h || a.Harness != h || a.TmuxSession != "leo-"+h {
				t.Fatalf("spawned %+v", a)
			}
			for _, k := range a.EnvKeys {
				if strings.Contains(k, "=") {
					t.Fatalf("env key %q carries a value", k)
				}
			}
			e.waitState(m, h, api.StateRunning)

			msg := "first line of " + h + "\nsecond line"
			res, err := m.Send(context.Background(), h, msg)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if res.Delivery != "queued" || res.ID == "" {
				t.Fatalf("SendResult %+v", res)
			}
			waitDelivered(t, m, h, res.ID)
			// One submission, exact text, as the harness received it.
			if got := e.submitted(); len(got) != 1 || got[0] != msg {
				t.Fatalf("harness got %q, want exactly [%q]", got, msg)
			}
			waitFor(t, "echo on screen", 10*1e9, func() bool {
				return strings.Contains(e.capture(m, h), "echo: first line of "+h)
			})
		})
	}
}

func TestMessagesToOneAgentArriveInOrder(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			// Sent at once, before the TUI is even up: all queue, in order.
			var want []string
			var last string
			for i := 1; i <= 5; i++ {
				msg := fmt.Sprintf("message %d for %s", i, h)
				want = append(want, msg)
				res, err := m.Send(context.Background(), h, msg)
				if err != nil {
					t.Fatal(err)
				}
				last = res.ID
			}
			waitDelivered(t, m, h, last)
			got := e.submitted()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("order: got %q, want %q", got, want)
			}
			for _, d := range mustGet(t, m, h).Deliveries {
				if d.Status != "delivered" {
					t.Fatalf("delivery %+v", d)
				}
			}
		})
	}
}

// The agent's recent deliveries say what each message was and who signed
// it, so a page can show more than an id.
func TestDeliveryRecordsFirstLineAndSender(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	const h = "claude"
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Send(context.Background(), h, "\nfix the build\nthen run the tests"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Send(context.Background(), h, api.MessagePrefix+"agent reviewer] looks good\nmerge it")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, h, res.ID)
	ds := mustGet(t, m, h).Deliveries
	if len(ds) != 2 {
		t.Fatalf("deliveries %+v", ds)
	}
	if ds[0].FirstLine != "fix the build" || ds[0].From != "" {
		t.Fatalf("unsigned: %+v", ds[0])
	}
	if ds[1].FirstLine != "looks good" || ds[1].From != "agent reviewer" {
		t.Fatalf("signed: %+v", ds[1])
	}
}
