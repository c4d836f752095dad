package daemon_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// POST /hooks/turn-end hands the report to the daemon's hub, even while
// boot restore runs (a hook never waits for it); a payload the adapter
// cannot read is invalid_args.
func TestTurnEndRouteCompletesTheHubsWaiter(t *testing.T) {
	h := newHome(t)
	fake := daemontest.New()
	fake.RestoreGate = make(chan struct{})
	defer close(fake.RestoreGate)
	opts := options(t, h, fake, nil)
	hub := turnend.New(nil)
	opts.TurnEnds = hub
	r := start(t, opts, fake)
	<-fake.RestoreStarted()

	msg := turnend.Message("Check the build.", "nightly", "20260101T000000.000Z")
	w, err := hub.Await("worker", msg)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "agent-turn-complete", "thread-id": "th", "input-messages": []string{msg}, "last-assistant-message": "green",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Client.TurnEnd(ctx, api.TurnEndReport{Agent: "worker", Harness: "codex", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Done():
	default:
		t.Fatal("the waiter was not completed by the report")
	}
	if res := w.Result(); res.Reply != "green" || res.SessionID != "th" {
		t.Fatalf("result %+v", res)
	}

	status, body := raw(t, h, "POST", "/hooks/turn-end", `{"agent":"worker","harness":"codex","payload":"bm90IGpzb24="}`)
	if status != 400 || decodeErr(t, body).Code != api.CodeInvalidArgs {
		t.Fatalf("unreadable payload: %d %s", status, body)
	}
	status, body = raw(t, h, "POST", "/hooks/turn-end", `{"agent":"worker","harness":"codex","payload":"`+
		base64OfJSON(t, map[string]any{"type": "agent-turn-complete", "input-messages": []string{"hello"}})+`"}`)
	if status != 200 || body != `{"ok":true}`+"\n" && body != `{"ok":true}` {
		t.Fatalf("unmatched report: %d %q", status, body)
	}
}

func base64OfJSON(t *testing.T, v any) string {
	t.Helper()
	data, _ := json.Marshal(v)
	enc, _ := json.Marshal(data) // []byte marshals as base64
	return string(enc[1 : len(enc)-1])
}
