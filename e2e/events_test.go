package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

// `leo events --follow --json` over the real daemon, while an agent is
// spawned over the fake harness and sent a message: one JSON object per
// line, in order — the agent starting and running, the message queued and
// delivered, its turn started and ended. The same stream is
// /api/v1/events over HTTP, with the token only.
func TestEventsFollowAMessageFromTheCLIAndHTTP(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex")
	w.WriteConfig(nil)
	base := w.EnableWeb()
	w.startDaemon()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Both readers start from the newest event now (--since), so what
	// happens before they are connected is replayed, not lost.
	kept, err := w.Client.RecentEvents(ctx, client.EventsQuery{})
	if err != nil || len(kept) == 0 {
		t.Fatalf("kept events: %v %v", kept, err)
	}
	since := strconv.FormatUint(kept[len(kept)-1].Seq, 10)
	cmd := exec.CommandContext(ctx, leoproc.Binary(t), "events", "--follow", "--json", "--agent", "ev", "--since", since)
	cmd.Env = w.Env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan api.Event, 256)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e api.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Errorf("not one JSON object a line: %q", sc.Text())
				continue
			}
			lines <- e
		}
		close(lines)
	}()

	// The HTTP stream, with and without the token.
	token := w.Token()
	if status, _ := apiCall(t, base, "", "GET", "/api/v1/events?follow=0", ""); status != 401 {
		t.Fatalf("events without the token: %d", status)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/events?agent=ev&since="+since, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /api/v1/events: %v %+v", err, resp)
	}
	defer resp.Body.Close()
	overHTTP := make(chan api.Event, 256)
	go func() {
		_ = client.ReadEvents(resp.Body, func(e api.Event) error { overHTTP <- e; return nil })
		close(overHTTP)
	}()

	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "codex", Name: "ev"}); err != nil {
		t.Fatal(err)
	}
	id := w.send("ev", "summarise the logs\nplease")
	w.waitDelivered("ev", id)

	want := []string{api.EventMessageQueued, api.EventMessageDelivered, api.EventTurnStarted, api.EventTurnEnded}
	for name, ch := range map[string]chan api.Event{"leo events": lines, "/api/v1/events": overHTTP} {
		var got []string
		var last uint64
		deadline := time.After(60 * time.Second)
		for len(got) < len(want) {
			select {
			case e, ok := <-ch:
				if !ok {
					t.Fatalf("%s ended after %v", name, got)
				}
				if e.Seq <= last {
					t.Fatalf("%s: seq %d after %d", name, e.Seq, last)
				}
				last = e.Seq
				if e.Agent != "ev" {
					t.Fatalf("%s: another agent's event %+v", name, e)
				}
				for _, typ := range want {
					if e.Type == typ && (e.MessageID == id || typ == api.EventTurnEnded) {
						got = append(got, typ)
					}
				}
			case <-deadline:
				t.Fatalf("%s: got %v within 60s, want %v", name, got, want)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
	}
}
