package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/doctor"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

const notifySecret = "ntfy-Secret-Value-48"

// notifyEnv is a home whose leo.yaml has notifiers, with a daemon running.
func notifyEnv(t *testing.T, hookURL string) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	root := testutil.ShortTempDir(t, "leo-nt")
	yaml := agentTestConfig + `notify:
  - {command: ["true"], events: [needs_input]}
  - command: [sh, -c, 'echo "token $NTFY_TOKEN"; exit 4']
    env: {NTFY_TOKEN: "${NTFY}"}
    events: [needs_input]
  - {webhook: "${HOOK}", events: [idle]}
`
	if err := os.WriteFile(filepath.Join(root, "leo.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars["LEO_HOME"] = root
	e.vars["PATH"] = os.Getenv("PATH")
	e.vars["NTFY"] = notifySecret
	e.vars["HOOK"] = hookURL
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	startFakeDaemon(t, e, h)
	return e
}

func TestNotifyTestReportsEachNotifier(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer srv.Close()
	hook := srv.URL + "/services/hook-Secret-49"
	e := notifyEnv(t, hook)
	secrets := []string{notifySecret, hook, "hook-Secret-49", strings.TrimPrefix(srv.URL, "http://")}

	r := e.run("notify", "test")
	if r.code != ExitError {
		t.Fatalf("exit %d, want 1: %+v", r.code, r)
	}
	mustContain(t, "stdout", r.stdout, "sent a sample needs_input to 2 notifier(s):\n", "ok    notify[0].command (",
		"fail  notify[1].command (", "): sh exited with status 4: token ***\n")
	mustContain(t, "stderr", r.stderr, "1 of 2 notifier(s) did not take the sample: notify[1].command")

	r = e.run("notify", "test", "--json")
	obj := assertJSONFailure(t, r, "notify_failed", ExitError)
	assertKeys(t, "notify test failure", obj, "error", "message", "event", "results")
	if res := obj["results"].([]any); len(res) != 2 || res[1].(map[string]any)["ok"] != false {
		t.Errorf("results = %v", res)
	}

	r = e.run("notify", "test", "--event", "idle", "--json")
	if r.code != ExitOK {
		t.Fatalf("idle: %+v", r)
	}
	obj = decodeOne(t, r.stdout)
	assertKeys(t, "notify test", obj, "event", "results")
	res := obj["results"].([]any)
	if len(res) != 1 || posts.Load() != 1 {
		t.Fatalf("results %v, %d posts", res, posts.Load())
	}
	assertKeys(t, "notify result", res[0].(map[string]any), "target", "kind", "ok", "took_ms")

	r = e.run("notify", "test", "--event", "idle", "--scope", "templates.assistant", "--json")
	assertJSONFailure(t, r, "not_found", ExitError)
	r = e.run("notify", "test", "--event", "bogus")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `--event: unknown event "bogus" (valid: needs_input, errored, limited, resumed, idle, task_failed, task_succeeded, crash_loop)`) {
		t.Errorf("bad event: %+v", r)
	}

	r = e.run("notify", "list")
	if r.code != ExitOK {
		t.Fatalf("list: %+v", r)
	}
	mustContain(t, "list", r.stdout, "TARGET", "notify[0].command", "notify[2].webhook", "unused")
	r = e.run("notify", "list", "--json")
	obj = decodeOne(t, r.stdout)
	assertKeys(t, "notify list", obj, "notifiers")
	for _, out := range []string{r.stdout, e.run("notify", "list").stdout, e.run("notify", "test").stdout} {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output carries a secret (%s):\n%s", s, out)
			}
		}
	}
}

// leo doctor warns about a failing notifier, by its field, never its URL;
// with no daemon it says nothing (the socket check does).
func TestDoctorReportsAFailingNotifier(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	e := newTestEnv(t)
	root := testutil.ShortTempDir(t, "leo-nd")
	yaml := agentTestConfig + "notify:\n  - {webhook: \"" + srv.URL + "/services/doc-Secret-50\", events: [idle], retries: 0}\n"
	if err := os.WriteFile(filepath.Join(root, "leo.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars["LEO_HOME"] = root
	e.vars["PATH"] = os.Getenv("PATH")
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, ok := doctorNotifiers(ctx, h); ok {
		t.Error("reported notifiers with no daemon running")
	}

	var deps atomic.Pointer[daemon.AgentDeps]
	d := daemontest.Start(t, h, func(ctx context.Context) error {
		return daemon.Run(ctx, daemon.Options{
			Home: h, Version: "test", Getenv: e.getenv, Stderr: &strings.Builder{},
			Resolver: binpath.Resolver{Getenv: e.getenv},
			NewAgents: func(dd daemon.AgentDeps) (daemon.Agents, error) {
				deps.Store(&dd)
				return daemontest.New(), nil
			},
		})
	})
	d.WaitReady(t, 10*time.Second)
	if c, ok := doctorNotifiers(ctx, h); !ok || c.Status != doctor.OK || c.Message != "1 notifier target(s), none failing" {
		t.Errorf("before any failure: %+v %v", c, ok)
	}
	bus := deps.Load().Events.(*events.Bus)
	testutil.WaitFor(t, 10*time.Second, func() bool { return bus.Readers() > 0 }, "the notifiers read the stream")
	bus.Publish(api.Event{Type: api.EventTurnEnded, Agent: "a", State: "ok"})
	var c doctor.Check
	testutil.WaitFor(t, 10*time.Second, func() bool {
		var ok bool
		c, ok = doctorNotifiers(ctx, h)
		return ok && c.Status == doctor.Warn
	}, "the failing webhook")
	if c.Message != "1 of 1 notifier target(s) failing: the webhook of notify[0]: idle notification failed after 1 attempt(s): the webhook answered 500 Internal Server Error" ||
		c.Fix != "leo notify test (each try is in the daemon log: leo service logs)" || strings.Contains(c.Message, srv.URL) {
		t.Errorf("check = %+v", c)
	}
}
