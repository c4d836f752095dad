package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/task"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// ensure calls Manager.Ensure and checks what it did.
func ensure(t *testing.T, m *Manager, name string, target EnsureTarget, want string) {
	t.Helper()
	got, err := m.Ensure(context.Background(), name, target)
	if err != nil {
		t.Fatalf("Ensure %s %+v: %v", name, target, err)
	}
	if got != want {
		t.Fatalf("Ensure %s %+v did %q, want %q", name, target, got, want)
	}
}

// The ensure-exists ladder of a persistent task with template: missing →
// spawned under the template's name; running → nothing; stopped by hand →
// started, resuming its conversation.
func TestEnsureLadderTemplate(t *testing.T) {
	for _, h := range []string{firstHarness(t, pinsIDs), firstHarness(t, discoversIDs)} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := context.Background()
			m := e.manager()
			target := EnsureTarget{Template: h}
			ensure(t, m, h, target, EnsureSpawned)
			a := e.waitState(m, h, api.StateRunning)
			if a.Template != h || a.Task != "" {
				t.Fatalf("ensured agent %+v, want template %s", a, h)
			}
			id := a.SessionID
			if !testutil.PinsID(h) {
				res, err := m.Send(ctx, h, "first turn")
				if err != nil {
					t.Fatal(err)
				}
				waitDelivered(t, m, h, res.ID)
				waitFor(t, "session id discovered", 20*time.Second, func() bool {
					id = mustGet(t, m, h).SessionID
					return id != ""
				})
			}
			ensure(t, m, h, target, EnsureRunning)
			if n := len(e.launches(h)); n != 1 {
				t.Fatalf("%d launches after ensuring a running agent, want 1", n)
			}
			if _, err := m.Stop(ctx, h); err != nil {
				t.Fatal(err)
			}
			ensure(t, m, h, target, EnsureStarted)
			l := e.waitLaunches(h, 2)
			if len(l) != 2 || !testutil.HasSeq(l[1], resumeArgs(h, id)) {
				t.Fatalf("launches %q: the start should resume %s", l, id)
			}
			e.waitState(m, h, api.StateRunning)
		})
	}
}

// An agent the idle sweep parked is started with resume by Ensure.
func TestEnsureStartsParkedAgent(t *testing.T) {
	h := "claude"
	e := newEnv(t, withTemplateYAML("    idle_suspend_after: 1s\n"))
	m := e.manager()
	ensure(t, m, h, EnsureTarget{Template: h}, EnsureSpawned)
	id := e.waitState(m, h, api.StateRunning).SessionID
	if a := e.waitState(m, h, api.StateStopped); !a.WakeOnMessage {
		t.Fatalf("agent %+v not parked", a)
	}
	ensure(t, m, h, EnsureTarget{Template: h}, EnsureStarted)
	l := e.waitLaunches(h, 2)
	if len(l) != 2 || !testutil.HasSeq(l[1], resumeArgs(h, id)) {
		t.Fatalf("launches %q: the start should resume %s", l, id)
	}
}

// A persistent task without template: gets an implicit agent named after
// it, launched from the task's own scope (workspace, env, queue_max), and
// its record remembers that scope across a restart.
func TestEnsureImplicitAgentFromTaskScope(t *testing.T) {
	e := newEnv(t, withReadyTimeout(time.Minute))
	e.tasks = map[string]taskSpec{"nightly": {harness: "codex", yaml: "    queue_max: 1\n",
		env: map[string]string{"TASK_SCOPE_KEY": "secret-value-never-listed"}}}
	e.writeConfig()
	ctx := context.Background()
	m1 := e.manager()
	target := EnsureTarget{Task: "nightly"}
	ensure(t, m1, "nightly", target, EnsureSpawned)
	a := e.waitState(m1, "nightly", api.StateRunning)
	if a.Task != "nightly" || a.Template != "" || a.Harness != "codex" || !strings.HasSuffix(a.Workspace, "task-nightly") {
		t.Fatalf("implicit agent %+v, want task nightly, codex, the task's workspace", a)
	}
	if !containsStr(a.EnvKeys, "TASK_SCOPE_KEY") {
		t.Fatalf("env keys %v, want the task's own", a.EnvKeys)
	}
	if env := "\n" + paneEnviron(t, e.panePID("nightly")) + "\n"; !strings.Contains(env, "\nTASK_SCOPE_KEY=secret-value-never-listed\n") {
		t.Fatalf("the task's env did not reach its agent's TUI")
	}
	// queue_max from the task's scope (1), not a template's (5).
	e.typeDraft("nightly", "codex", "a draft")
	var accepted, full int
	for range 4 {
		_, err := m1.Send(ctx, "nightly", "firing")
		switch {
		case err == nil:
			accepted++
		case api.CodeOf(err) == api.CodeQueueFull && strings.Contains(err.Error(), "queue_max 1"):
			full++
		default:
			t.Fatal(err)
		}
	}
	if accepted > 2 || full < 2 {
		t.Fatalf("accepted %d, refused %d; want at most 2 accepted with the task's queue_max 1", accepted, full)
	}
	if n := len(e.savedQueue("nightly")); n != accepted {
		t.Fatalf("%d saved, want the %d accepted", n, accepted)
	}

	m1.Close()
	for _, r := range e.readRecords() {
		if r.Name == "nightly" && (r.Task != "nightly" || r.Template != "") {
			t.Fatalf("saved record %+v does not name its task scope", r)
		}
	}
	e.clearDraft("nightly", "codex")
	m2 := e.manager()
	if _, err := m2.Stop(ctx, "nightly"); err != nil {
		t.Fatal(err)
	}
	ensure(t, m2, "nightly", target, EnsureStarted)
	a = e.waitState(m2, "nightly", api.StateRunning)
	if a.Task != "nightly" || !strings.HasSuffix(a.Workspace, "task-nightly") {
		t.Fatalf("after restart and start: %+v", a)
	}
	// Another scope's agent of the name is not taken over.
	if _, err := m2.Ensure(ctx, "nightly", EnsureTarget{Template: "codex"}); !api.HasCode(err, api.CodeAgentExists) {
		t.Fatalf("Ensure from another scope: %v, want agent_exists", err)
	}
	// A task not in the config says so, naming it.
	if _, err := m2.Ensure(ctx, "gone", EnsureTarget{Task: "gone"}); !api.HasCode(err, api.CodeNotFound) || !strings.Contains(err.Error(), `task "gone"`) {
		t.Fatalf("Ensure of a missing task: %v", err)
	}
}

// Concurrent Ensure calls for one name spawn it once.
func TestConcurrentEnsureSpawnsOnce(t *testing.T) {
	h := "opencode"
	e := newEnv(t)
	m := e.manager()
	const n = 6
	whats := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			whats[i], errs[i] = m.Ensure(context.Background(), h, EnsureTarget{Template: h})
		}()
	}
	close(start)
	wg.Wait()
	spawned := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Ensure %d: %v", i, errs[i])
		}
		if whats[i] == EnsureSpawned {
			spawned++
		} else if whats[i] != EnsureRunning {
			t.Fatalf("Ensure %d did %q", i, whats[i])
		}
	}
	if spawned != 1 {
		t.Fatalf("%d Ensure calls spawned, want exactly 1 (%v)", spawned, whats)
	}
	if l := m.List(); len(l) != 1 {
		t.Fatalf("agents %+v, want one", l)
	}
	e.waitState(m, h, api.StateRunning)
	if n := len(e.launches(h)); n != 1 {
		t.Fatalf("%d launches, want 1", n)
	}
}

// A tmux session of the name that no record claims is never taken over.
func TestEnsureLeavesUnclaimedSessionAlone(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	raw := testutil.NewRawTmux(e.tmux)
	raw.NewSession(t, "leo-ghost", t.TempDir(), "cat")
	_, err := m.Ensure(context.Background(), "ghost", EnsureTarget{Template: "codex"})
	if !api.HasCode(err, api.CodeAgentExists) {
		t.Fatalf("Ensure over an unclaimed session: %v, want agent_exists", err)
	}
	if ok, err := e.tmux.HasSession(context.Background(), "leo-ghost"); err != nil || !ok {
		t.Fatalf("the unclaimed session was touched (alive %v, %v)", ok, err)
	}
	if _, err := m.Get("ghost"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("a record was left behind: %v", err)
	}
}

// The adapter persistent firings use reaches the same ladder and queue: a
// template scope and a task scope each ensure their own agent, and a
// firing's outcome is found by its id.
func TestTaskAgentsPort(t *testing.T) {
	var _ task.AgentPort = TaskAgents{}
	e := newEnv(t)
	e.tasks = map[string]taskSpec{"solo": {harness: "opencode"}}
	e.writeConfig()
	cfg := e.cfg.Load()
	m := e.manager()
	port := TaskAgents{M: m}
	ctx := context.Background()
	tmpl, err := cfg.ResolveTemplate("claude")
	if err != nil {
		t.Fatal(err)
	}
	if what, err := port.Ensure(ctx, "claude", tmpl); err != nil || what != EnsureSpawned {
		t.Fatalf("Ensure from a template scope: %q %v", what, err)
	}
	own, err := cfg.ResolveTask("solo")
	if err != nil {
		t.Fatal(err)
	}
	if what, err := port.Ensure(ctx, "solo", own); err != nil || what != EnsureSpawned {
		t.Fatalf("Ensure from a task scope: %q %v", what, err)
	}
	if a := e.waitState(m, "solo", api.StateRunning); a.Task != "solo" || a.Harness != "opencode" {
		t.Fatalf("implicit agent %+v", a)
	}
	e.waitState(m, "claude", api.StateRunning)
	id, err := port.Enqueue(ctx, "solo", "the prompt\n\n[leo task solo run 20260101T070000.000Z]")
	if err != nil {
		t.Fatal(err)
	}
	done, errf, ok := port.Delivery("solo", id)
	if !ok {
		t.Fatalf("Delivery does not know message %s", id)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no outcome within 30s")
	}
	if err := errf(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := port.Delivery("solo", "no-such-id"); ok {
		t.Fatal("Delivery found an id never sent")
	}
}
