package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// A message its sender named (issue 15 item 14): a retry with the same id
// is answered with the first answer and never queued again — while it
// waits, after a daemon restart, and once it was delivered. The same id
// with another text is refused.
func TestNamedSendIsQueuedOnceAndAnsweredWithTheFirstAnswer(t *testing.T) {
	const h = "claude"
	e := newEnv(t, withReadyTimeout(time.Minute))
	ctx := context.Background()
	m1 := e.manager()
	if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m1, h, api.StateRunning)
	e.typeDraft(h, h, "a draft") // holds the queue
	if _, err := m1.Send(ctx, h, "unnamed before"); err != nil {
		t.Fatal(err)
	}
	req := api.SendRequest{Message: "only once", ID: "job-1:try"}
	first, err := m1.SendMessage(ctx, h, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != req.ID || first.Queued != 2 || first.Delivery != api.SendQueued {
		t.Fatalf("first answer %+v: want the sender's id, second in the queue", first)
	}
	again, err := m1.SendMessage(ctx, h, req)
	if err != nil || again != first {
		t.Fatalf("retry: %+v %v, want the first answer %+v", again, err, first)
	}
	if _, err := m1.SendMessage(ctx, h, api.SendRequest{Message: "something else", ID: req.ID}); !api.HasCode(err, api.CodeInvalidArgs) {
		t.Fatalf("the same id with other text: %v, want invalid_args", err)
	}
	if got := queuedIDs(e.savedQueue(h)); len(got) != 2 || got[1] != req.ID {
		t.Fatalf("saved queue %v: want the named message once", got)
	}

	// A restarted daemon remembers it (the queue and the id are on disk).
	m1.Close()
	m2 := e.manager()
	if r, err := m2.SendMessage(ctx, h, req); err != nil || r != first {
		t.Fatalf("retry after a restart: %+v %v, want %+v", r, err, first)
	}
	if got := queuedIDs(e.savedQueue(h)); len(got) != 2 {
		t.Fatalf("saved queue after the retry %v", got)
	}
	e.clearDraft(h, h)
	if err := awaitOutcome(t, m2, h, req.ID); err != nil {
		t.Fatal(err)
	}
	// Delivered: a retry now still answers the first answer, and nothing
	// reaches the TUI again.
	if r, err := m2.SendMessage(ctx, h, req); err != nil || r != first {
		t.Fatalf("retry after delivery: %+v %v, want %+v", r, err, first)
	}
	if got := e.submitted(); fmt.Sprint(got) != fmt.Sprint([]string{"unnamed before", "only once"}) {
		t.Fatalf("harness got %q", got)
	}
	if n := len(e.savedQueue(h)); n != 0 {
		t.Fatalf("saved queue holds %d after the retries", n)
	}
	if _, err := m2.SendMessage(ctx, h, api.SendRequest{Message: "x", ID: "bad id"}); !api.HasCode(err, api.CodeInvalidArgs) {
		t.Fatalf("a bad id: %v", err)
	}
}

// Ids are remembered api.RememberedIDFor, the newest api.RememberedIDs.
func TestRememberIsBounded(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	var list []Named
	list = remember(list, Named{ID: "old", At: now.Add(-api.RememberedIDFor - time.Second)}, now.Add(-api.RememberedIDFor-time.Second))
	for i := range api.RememberedIDs + 10 {
		list = remember(list, Named{ID: fmt.Sprint(i), At: now}, now)
	}
	if len(list) != api.RememberedIDs || list[0].ID != "10" || list[len(list)-1].ID != fmt.Sprint(api.RememberedIDs+9) {
		t.Fatalf("kept %d, first %s", len(list), list[0].ID)
	}
	list = remember([]Named{{ID: "stale", At: now.Add(-api.RememberedIDFor - time.Minute)}, {ID: "fresh", At: now.Add(-time.Hour)}}, Named{ID: "new", At: now}, now)
	if len(list) != 2 || list[0].ID != "fresh" {
		t.Fatalf("after expiry: %+v", list)
	}
}
