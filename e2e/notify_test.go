package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// notifications reads the JSON lines a notifier command appended to path.
func notifications(t testing.TB, path string) []api.Notification {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []api.Notification
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var n api.Notification
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			t.Fatalf("%s: a line that is not a notification: %v\n%s", path, err, sc.Text())
		}
		out = append(out, n)
	}
	return out
}

// A real daemon over a fake TUI that crashes at every launch: the agent
// manager's exits become one crash_loop notification, given as JSON on a
// command's stdin; `leo notify test` and `leo notify list` through the
// binary say how the notifiers are doing.
func TestNotifyCrashLoopReachesACommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(map[string]string{"FAKE_CRASH_AFTER_MS": "200"})
	out := filepath.Join(t.TempDir(), "notifications.jsonl")
	f, err := os.OpenFile(w.Home.ConfigPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`notify:
  - command: [sh, -c, 'cat >> "$OUT"; echo >> "$OUT"']
    env: {OUT: "` + out + `"}
    events: [crash_loop, needs_input]
`)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	w.startDaemon()
	run := func(args ...string) cliResult { t.Helper(); return leo(t, w, nil, args...) }

	run("agent", "spawn", "codex", "--name", "crashy").ok(t)
	testutil.WaitFor(t, 90*time.Second, func() bool {
		for _, n := range notifications(t, out) {
			if n.Notify == api.NotifyCrashLoop {
				return true
			}
		}
		return false
	}, "a crash_loop notification")
	var loop api.Notification
	for _, n := range notifications(t, out) {
		if n.Notify == api.NotifyCrashLoop {
			loop = n
		}
	}
	if loop.Agent != "crashy" || loop.Notifier != "notify[0]" || loop.Event.Type != api.EventAgentExited ||
		loop.Event.Failures < api.CrashLoopFailures || !strings.HasPrefix(loop.Text, "agent crashy is crash-looping: ") {
		t.Errorf("crash_loop notification %+v", loop)
	}
	run("agent", "stop", "crashy").ok(t)

	r := run("notify", "test").ok(t)
	hasLines(t, r, `^sent a sample needs_input to 1 notifier\(s\):$`, `^ok    notify\[0\]\.command \(`)
	testutil.WaitFor(t, 10*time.Second, func() bool {
		ns := notifications(t, out)
		return len(ns) > 0 && ns[len(ns)-1].Test && ns[len(ns)-1].Notify == api.NotifyNeedsInput
	}, "the sample")
	list := run("notify", "list", "--json").success(t)
	rows, _ := list["notifiers"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["target"] != "notify[0].command" || rows[0].(map[string]any)["sent"].(float64) < 1 {
		t.Errorf("notify list --json: %v", list)
	}
	st, err := w.Client.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Problems {
		if strings.HasPrefix(p, "notify:") {
			t.Errorf("a working notifier is a problem: %s", p)
		}
	}
}

// Task runs through the real daemon: a failed run reaches the top-level
// list's command, a task's own list replaces it (a webhook on loopback
// gets the success), and a task with notify: [] sends nothing.
func TestNotifyTaskRunsReachTheirScopesNotifiers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var posted []api.Notification
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n api.Notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		mu.Lock()
		posted = append(posted, n)
		mu.Unlock()
	}))
	defer srv.Close()
	w := newWorld(t, "codex")
	writeTasks(t, w, map[string][2]string{
		"good":  {"codex", "    notify:\n      - {webhook: \"" + srv.URL + "/hook\", events: [task_succeeded, task_failed]}\n"},
		"bad":   {"codex", "    env:\n      FAKE_SCENARIO: turn_failed\n"},
		"quiet": {"codex", "    notify: []\n    env:\n      FAKE_SCENARIO: turn_failed\n"},
	})
	out := filepath.Join(t.TempDir(), "notifications.jsonl")
	f, err := os.OpenFile(w.Home.ConfigPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`notify:
  - command: [sh, -c, 'cat >> "$OUT"; echo >> "$OUT"']
    env: {OUT: "` + out + `"}
    events: [task_failed, task_succeeded]
`)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	w.startDaemon()

	for _, task := range []string{"quiet", "good", "bad"} {
		if rec, r := runJSON(t, w, "run", task); rec.Outcome == "" {
			t.Fatalf("run %s: %s", task, r)
		}
	}
	testutil.WaitFor(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(posted) == 1 && len(notifications(t, out)) == 1
	}, "one post and one command run")
	got := notifications(t, out)[0]
	if got.Notify != api.NotifyTaskFailed || got.Task != "bad" || got.Notifier != "notify[0]" || got.Event.Type != api.EventTaskRunEnded ||
		got.Event.State != string(api.OutcomeFailed) || !strings.HasPrefix(got.Text, "task bad failed") {
		t.Errorf("the command got %+v", got)
	}
	mu.Lock()
	p := posted[0]
	mu.Unlock()
	if p.Notify != api.NotifyTaskSucceeded || p.Task != "good" || p.Notifier != "tasks.good.notify[0]" || p.Text != "task good succeeded" {
		t.Errorf("the webhook got %+v", p)
	}
}
