package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/lockfile"
)

// Each task method calls its route of internal/api/task.go, with its query
// and body, and decodes the answer.
func TestTaskMethodsCallTheirRoutes(t *testing.T) {
	h := newHome(t)
	var mu sync.Mutex
	var calls []string
	record := func(r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
		mu.Unlock()
	}
	answer := func(w http.ResponseWriter, v any) { json.NewEncoder(w).Encode(v) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tasks", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		answer(w, []api.Task{{Name: "a", Runtime: "oneshot"}, {Name: "b", Runtime: "persistent"}})
	})
	mux.HandleFunc("GET /tasks/{name}", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		if r.PathValue("name") == "ghost" {
			w.WriteHeader(http.StatusNotFound)
			answer(w, api.Errorf(api.CodeNotFound, "task %q not found", "ghost"))
			return
		}
		answer(w, api.Task{Name: r.PathValue("name"), Enabled: true})
	})
	mux.HandleFunc("GET /tasks/{name}/history", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		answer(w, api.TaskHistory{Runs: []api.TaskRun{{ID: "r1", Task: r.PathValue("name")}}, Dropped: []string{"torn"}})
	})
	mux.HandleFunc("GET /history", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		answer(w, api.TaskHistory{Runs: []api.TaskRun{{ID: "r1", Task: "a"}, {ID: "r2", Task: "b"}}})
	})
	mux.HandleFunc("GET /tasks/{name}/logs", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		answer(w, api.TaskLog{Task: r.PathValue("name"), Run: r.URL.Query().Get("run"), Text: "out"})
	})
	mux.HandleFunc("POST /tasks/{name}/run", func(w http.ResponseWriter, r *http.Request) {
		var req api.RunRequest
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		calls = append(calls, fmt.Sprintf("POST %s wait=%v", r.URL.Path, req.Wait))
		mu.Unlock()
		if r.PathValue("name") == "busy" {
			w.WriteHeader(http.StatusConflict)
			answer(w, api.Errorf(api.CodeTaskRunning, "a run of task busy is going"))
			return
		}
		out := api.Outcome(api.OutcomeRunning)
		if req.Wait {
			out = api.OutcomeSucceeded
		}
		answer(w, api.TaskRun{ID: "20260101T070000.000Z", Task: r.PathValue("name"), Outcome: out})
	})
	mux.HandleFunc("POST /tasks/{name}/enable", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		answer(w, api.Task{Name: r.PathValue("name"), Enabled: true})
	})
	mux.HandleFunc("POST /tasks/{name}/disable", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		answer(w, api.Task{Name: r.PathValue("name"), Enabled: false})
	})
	serve(t, h, mux)
	c := client.New(h)
	ctx := context.Background()

	if ts, err := c.ListTasks(ctx); err != nil || len(ts) != 2 || ts[1].Runtime != "persistent" {
		t.Fatalf("ListTasks = %+v, %v", ts, err)
	}
	if tk, err := c.GetTask(ctx, "a"); err != nil || tk.Name != "a" || !tk.Enabled {
		t.Fatalf("GetTask = %+v, %v", tk, err)
	}
	if _, err := c.GetTask(ctx, "ghost"); !client.IsNotFound(err) {
		t.Fatalf("GetTask(ghost) = %v, want not_found", err)
	}
	if hist, err := c.TaskHistory(ctx, "a", 7); err != nil || len(hist.Runs) != 1 || hist.Dropped[0] != "torn" {
		t.Fatalf("TaskHistory = %+v, %v", hist, err)
	}
	if _, err := c.TaskHistory(ctx, "a", 0); err != nil {
		t.Fatal(err)
	}
	if hist, err := c.AllHistory(ctx, 3); err != nil || len(hist.Runs) != 2 {
		t.Fatalf("AllHistory = %+v, %v", hist, err)
	}
	if l, err := c.TaskLog(ctx, "a", "20260101T070000.000Z"); err != nil || l.Run != "20260101T070000.000Z" || l.Text != "out" {
		t.Fatalf("TaskLog = %+v, %v", l, err)
	}
	// A run id is put in the query escaped: it cannot add parameters.
	if l, err := c.TaskLog(ctx, "a", "x&run=y"); err != nil || l.Run != "x&run=y" {
		t.Fatalf("TaskLog(odd id) = %+v, %v", l, err)
	}
	if r, err := c.RunTask(ctx, "a", false); err != nil || r.Outcome != api.OutcomeRunning {
		t.Fatalf("RunTask detach = %+v, %v", r, err)
	}
	if r, err := c.RunTask(ctx, "a", true); err != nil || r.Outcome != api.OutcomeSucceeded {
		t.Fatalf("RunTask wait = %+v, %v", r, err)
	}
	if _, err := c.RunTask(ctx, "busy", true); !client.IsTaskRunning(err) {
		t.Fatalf("RunTask(busy) = %v, want task_running", err)
	}
	if tk, err := c.DisableTask(ctx, "a"); err != nil || tk.Enabled {
		t.Fatalf("DisableTask = %+v, %v", tk, err)
	}
	if tk, err := c.EnableTask(ctx, "a"); err != nil || !tk.Enabled {
		t.Fatalf("EnableTask = %+v, %v", tk, err)
	}

	want := []string{
		"GET /tasks",
		"GET /tasks/a",
		"GET /tasks/ghost",
		"GET /tasks/a/history?limit=7",
		"GET /tasks/a/history",
		"GET /history?limit=3",
		"GET /tasks/a/logs?run=20260101T070000.000Z",
		"GET /tasks/a/logs?run=x%26run%3Dy",
		"POST /tasks/a/run wait=false",
		"POST /tasks/a/run wait=true",
		"POST /tasks/busy/run wait=true",
		"POST /tasks/a/disable",
		"POST /tasks/a/enable",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// A task name that breaks the name rule never becomes a request.
func TestBadTaskNamesNeverReachTheSocket(t *testing.T) {
	h := newHome(t)
	var mu sync.Mutex
	var got []string
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		json.NewEncoder(w).Encode(api.Task{Name: "x"})
	}))
	c := client.New(h)
	ctx := context.Background()
	calls := map[string]func(string) error{
		"get":     func(n string) error { _, err := c.GetTask(ctx, n); return err },
		"history": func(n string) error { _, err := c.TaskHistory(ctx, n, 5); return err },
		"logs":    func(n string) error { _, err := c.TaskLog(ctx, n, ""); return err },
		"run":     func(n string) error { _, err := c.RunTask(ctx, n, true); return err },
		"enable":  func(n string) error { _, err := c.EnableTask(ctx, n); return err },
		"disable": func(n string) error { _, err := c.DisableTask(ctx, n); return err },
	}
	for _, name := range []string{"", ".", "..", "../history", "a/b", "Bob", "a b", "a?x=1", "\x00", strings.Repeat("a", 64)} {
		for call, fn := range calls {
			err := fn(name)
			want := fmt.Sprintf("invalid task name %q: use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit", name)
			if !client.IsInvalidArgs(err) || err.Error() != want {
				t.Errorf("%s %q: %v, want invalid_args %q", call, name, err, want)
			}
		}
	}
	if len(got) != 0 {
		t.Fatalf("requests reached the socket: %q", got)
	}
}

// Waiting for a run to a daemon that does not answer ends at the caller's
// deadline, and the message names that wait.
func TestRunTaskWaitEndsAtTheCallersDeadline(t *testing.T) {
	h := newHome(t)
	silentSocket(t, h.SocketPath())
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = client.New(h).RunTask(ctx, "a", true)
	want := regexp.MustCompile(fmt.Sprintf(`^leo daemon \(pid %d\) holds the socket but does not answer: no reply to POST /tasks/a/run within [0-9]+ms`, os.Getpid()))
	if !client.IsDaemonDown(err) || !want.MatchString(err.Error()) {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
