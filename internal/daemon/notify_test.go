package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/events"
)

// loopHook is a webhook on loopback that keeps what it got.
type loopHook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []api.Notification
	status int
}

func newLoopHook(t *testing.T, status int) *loopHook {
	h := &loopHook{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n api.Notification
		_ = json.Unmarshal(body, &n)
		h.mu.Lock()
		h.got = append(h.got, n)
		h.mu.Unlock()
		w.WriteHeader(h.status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *loopHook) notifications() []api.Notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]api.Notification(nil), h.got...)
}

// The daemon gives the agent manager its event stream and runs the
// notifiers on it: an agent's event reaches its template's webhook, a
// failing webhook is a /health problem named by its field, a reload's
// lists apply to the next event, and POST /notify/test sends a sample.
func TestDaemonRunsTheNotifiersOnItsStream(t *testing.T) {
	ok, failing := newLoopHook(t, http.StatusOK), newLoopHook(t, http.StatusBadRequest)
	h := newHome(t)
	writeFile(t, h.ConfigPath, validConfig+`    notify:
      - {webhook: "`+ok.srv.URL+`/secret-path", events: [needs_input, idle]}
notify:
  - {webhook: "`+failing.srv.URL+`/other-secret", events: [idle], retries: 0}
`)
	r := startReady(t, h)
	r.agents.Put(api.Agent{Name: "helper", Template: "assistant", State: api.StateRunning})
	pub := r.deps.Load().Events
	if pub == nil {
		t.Fatal("the agent manager was given no event stream")
	}
	bus := pub.(*events.Bus)
	waitFor(t, 10*time.Second, "the notifiers to read the stream", func() bool { return bus.Readers() >= 1 })

	bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "helper", State: "ok", FirstLine: "done"})
	bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "stranger", State: "ok"}) // no template: the top level's
	waitFor(t, 10*time.Second, "both webhooks to be posted to", func() bool {
		return len(ok.notifications()) == 1 && len(failing.notifications()) == 1
	})
	if n := ok.notifications()[0]; n.Notify != api.NotifyIdle || n.Agent != "helper" || n.Notifier != "templates.assistant.notify[0]" {
		t.Errorf("templates.assistant's webhook got %+v", n)
	}

	ctx := context.Background()
	var problems []string
	waitFor(t, 10*time.Second, "the failing webhook in /health", func() bool {
		hl, err := r.Client.Health(ctx)
		problems = hl.Problems
		return err == nil && len(problems) == 1
	})
	if !strings.HasPrefix(problems[0], "notify: the webhook of notify[0] is failing: idle notification failed after 1 attempt(s): the webhook answered 400 Bad Request") ||
		strings.Contains(problems[0], failing.srv.URL) || strings.Contains(problems[0], "secret") {
		t.Errorf("problems = %q", problems)
	}
	st, err := r.Client.NotifyStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Notifiers) != 2 || st.Notifiers[0].Target != "notify[0].webhook" || !st.Notifiers[0].Failing ||
		st.Notifiers[1].Target != "templates.assistant.notify[0].webhook" || st.Notifiers[1].Sent != 1 {
		t.Errorf("GET /notify = %+v", st)
	}
	raw, _ := json.Marshal(st)
	if strings.Contains(string(raw), "secret") || strings.Contains(string(raw), "127.0.0.1") {
		t.Errorf("GET /notify carries a URL: %s", raw)
	}

	res, err := r.Client.NotifyTest(ctx, api.NotifyTestRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Event != api.NotifyNeedsInput || len(res.Results) != 1 || !res.Results[0].OK || res.Results[0].Target != "templates.assistant.notify[0].webhook" {
		t.Errorf("POST /notify/test = %+v", res)
	}
	if got := ok.notifications(); len(got) != 2 || !got[1].Test {
		t.Errorf("the sample did not arrive: %+v", got)
	}
	if _, err := r.Client.NotifyTest(ctx, api.NotifyTestRequest{Event: "bogus"}); !api.HasCode(err, api.CodeInvalidArgs) {
		t.Errorf("unknown event: %v", err)
	}

	// A reload: the top level now posts to the working webhook.
	writeFile(t, h.ConfigPath, validConfig+"notify:\n  - {webhook: \""+ok.srv.URL+"/x\", events: [crash_loop]}\n")
	if _, err := r.Client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	bus.Publish(api.Event{Type: api.EventAgentExited, Agent: "helper", Failures: api.CrashLoopFailures})
	waitFor(t, 10*time.Second, "the reloaded list", func() bool { return len(ok.notifications()) == 3 })
	if n := ok.notifications()[2]; n.Notify != api.NotifyCrashLoop || n.Notifier != "notify[0]" {
		t.Errorf("after the reload: %+v", n)
	}
	waitFor(t, 10*time.Second, "the old failure to leave /health (its notifier is gone)", func() bool {
		hl, err := r.Client.Health(ctx)
		return err == nil && len(hl.Problems) == 0
	})
}
