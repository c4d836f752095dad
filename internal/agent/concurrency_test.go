package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// spawnConcurrently spawns n agents from template h at once and returns
// their names.
func spawnConcurrently(t *testing.T, m *Manager, h string, n int) []string {
	t.Helper()
	names := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h})
			names[i], errs[i] = a.Name, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Spawn: %v", err)
		}
	}
	sort.Strings(names)
	return names
}

// sessionOwner maps each conversation id a fake harness created to the pid
// of the TUI that created it.
func (e *testEnv) sessionOwner() map[string]int {
	out := map[string]int{}
	for _, ev := range e.events() {
		if ev.Event == "session" && ev.SessionID != "" {
			out[ev.SessionID] = ev.PID
		}
	}
	return out
}

// Two agents of one template share its workspace. Spawned together and sent
// their first messages together, each must end up with the conversation its
// own TUI started: neither may take the other's (it would resume someone
// else's conversation) nor be left without one (it would restart fresh).
func TestTwoAgentsInOneWorkspaceEachDiscoverTheirOwnConversation(t *testing.T) {
	for _, h := range testutil.HarnessesWhere(discoversIDs) {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			names := spawnConcurrently(t, m, h, 2)
			if names[0] != h || names[1] != h+"-2" {
				t.Fatalf("names %v, want %s and %s-2", names, h, h)
			}
			list, err := e.tmux.ListPanes(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sessions := map[string]int{}
			for _, p := range list {
				sessions[p.SessionName]++
			}
			if len(sessions) != 2 || sessions["leo-"+names[0]] != 1 || sessions["leo-"+names[1]] != 1 {
				t.Fatalf("tmux sessions %v, want one each for %v", sessions, names)
			}
			for _, n := range names {
				e.waitState(m, n, api.StateRunning)
			}
			pids := map[string]int{}
			for _, n := range names {
				pids[n] = e.panePID(n)
			}
			ids := make([]string, len(names))
			var wg sync.WaitGroup
			for _, n := range names {
				res, err := m.Send(context.Background(), n, "first message to "+n)
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					waitDelivered(t, m, n, res.ID)
				}()
			}
			wg.Wait()
			waitFor(t, "both conversation ids discovered", 40*time.Second, func() bool {
				for i, n := range names {
					ids[i] = mustGet(t, m, n).SessionID
				}
				return ids[0] != "" && ids[1] != ""
			})
			owners := e.sessionOwner()
			for i, n := range names {
				if owners[ids[i]] != pids[n] {
					t.Fatalf("agent %s holds conversation %s, created by pid %d; its own TUI is pid %d (owners %v)", n, ids[i], owners[ids[i]], pids[n], owners)
				}
			}
		})
	}
}

// reloadWithout reloads the config with template h removed.
func (e *testEnv) reloadWithout(m *Manager, h string) {
	e.t.Helper()
	if e.dropped == nil {
		e.dropped = map[string]bool{}
	}
	e.dropped[h] = true
	e.writeConfig()
	m.ConfigChanged()
}

// A reload removes a running agent's template: the agent keeps running
// (its launch is not redone), but when its TUI exits it is stopped with the
// reason instead of restart-looping — and the messages queued behind the
// exit fail at once with that reason, rather than each waiting out the
// readiness timeout for a TUI that will never come back.
func TestTemplateRemovedWhileRunningStopsOnExitAndFailsQueuedMessages(t *testing.T) {
	e := newEnv(t, withReadyTimeout(25*time.Second))
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	pid := e.panePID("codex")
	e.reloadWithout(m, "codex")
	// Several sweeps later it still runs, untouched.
	if res, err := m.Send(ctx, "codex", "still works"); err != nil {
		t.Fatal(err)
	} else {
		waitDelivered(t, m, "codex", res.ID)
	}
	if got := e.panePID("codex"); got != pid {
		t.Fatalf("pane pid %d → %d: the reload relaunched the agent", pid, got)
	}

	exit, err := m.Send(ctx, "codex", "fake-exit 3")
	if err != nil {
		t.Fatal(err)
	}
	var queued []string
	for i := range 3 {
		res, err := m.Send(ctx, "codex", fmt.Sprintf("queued behind the exit %d", i))
		if err != nil {
			t.Fatal(err)
		}
		queued = append(queued, res.ID)
	}
	waitDelivered(t, m, "codex", exit.ID)
	a := e.waitState(m, "codex", api.StateStopped)
	if !strings.Contains(a.LastError, `template "codex" not found`) {
		t.Fatalf("stopped agent's error %q does not say its template is gone", a.LastError)
	}
	for _, id := range queued {
		d := waitOutcome(t, m, "codex", id)
		if d.Status != "failed" || !strings.Contains(d.Error, `template "codex" not found`) {
			t.Fatalf("queued message %s: %s (%s); want failed with the reason the agent stopped", id, d.Status, d.Error)
		}
	}
	if n := len(e.launches("codex")); n != 1 {
		t.Fatalf("%d launches; the agent without a template must not be relaunched", n)
	}
	for _, msg := range e.submitted() {
		if strings.HasPrefix(msg, "queued behind") {
			t.Fatalf("%q was submitted", msg)
		}
	}
}

// Restart resumes the claude conversation (--resume <id>); Reset launches a
// new pinned one (--session-id <new>); and an exit right after Reset's fresh
// launch is an ordinary crash, not a poisoned resume: the new id is kept
// and the restart resumes it.
func TestRestartResumesResetStartsNewAndQuickExitAfterResetKeepsIt(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	ctx := context.Background()
	id := spawnWithSession(t, e, m, "claude")
	if _, err := m.Restart(ctx, "claude"); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "claude", api.StateRunning)
	l := e.launches("claude")
	if len(l) != 2 || !testutil.HasSeq(l[1], []string{"--resume", id}) {
		t.Fatalf("launches %q: Restart should resume %s", l, id)
	}
	if a := mustGet(t, m, "claude"); a.SessionID != id {
		t.Fatalf("session %s after Restart, want %s", a.SessionID, id)
	}

	r, err := m.Reset(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	fresh := r.SessionID
	if fresh == "" || fresh == id {
		t.Fatalf("session %q after Reset (was %s)", fresh, id)
	}
	e.waitState(m, "claude", api.StateRunning)
	l = e.launches("claude")
	if len(l) != 3 || !testutil.HasSeq(l[2], []string{"--session-id", fresh}) || isResume("claude", l[2]) {
		t.Fatalf("launches %q: Reset should launch fresh on --session-id %s", l, fresh)
	}
	// Exit at once (well within the 15 s quick-exit window).
	res, err := m.Send(ctx, "claude", "fake-exit 3")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "claude", res.ID)
	waitFor(t, "restart after the exit", 20*time.Second, func() bool {
		a := mustGet(t, m, "claude")
		return a.Restarts == 1 && a.State == api.StateRunning
	})
	l = e.launches("claude")
	if len(l) != 4 || !testutil.HasSeq(l[3], []string{"--resume", fresh}) {
		t.Fatalf("launches %q: the restart after Reset should resume %s", l, fresh)
	}
	if a := mustGet(t, m, "claude"); a.SessionID != fresh {
		t.Fatalf("session %s after the quick exit, want %s kept", a.SessionID, fresh)
	}
	if strings.Contains(e.logBuf.String(), "dropped_session") {
		t.Fatal("the exit after a fresh launch was taken for a poisoned resume")
	}
}

// A reload that changes a template's env is picked up by the agent's next
// launch (here a Restart): the new value reaches the pane, and the listing
// shows the new key names.
func TestReloadedTemplateEnvReachesNextLaunch(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"LEO_PROBE_OLD": "one"}))
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "opencode"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "opencode", api.StateRunning)
	delete(e.extraEnv, "LEO_PROBE_OLD")
	e.extraEnv["LEO_PROBE_NEW"] = "two"
	e.writeConfig()
	m.ConfigChanged()
	if env := paneEnviron(t, e.panePID("opencode")); !strings.Contains(env, "LEO_PROBE_OLD=one") {
		t.Fatal("the running agent's environment changed without a relaunch")
	}
	a, err := m.Restart(ctx, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	if !containsStr(a.EnvKeys, "LEO_PROBE_NEW") || containsStr(a.EnvKeys, "LEO_PROBE_OLD") {
		t.Fatalf("env keys %v after reload and restart", a.EnvKeys)
	}
	e.waitState(m, "opencode", api.StateRunning)
	env := paneEnviron(t, e.panePID("opencode"))
	if !strings.Contains(env, "LEO_PROBE_NEW=two") || strings.Contains(env, "LEO_PROBE_OLD") {
		t.Fatalf("relaunched pane: new=%v old=%v", strings.Contains(env, "LEO_PROBE_NEW=two"), strings.Contains(env, "LEO_PROBE_OLD"))
	}
}

func paneEnviron(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), "\x00", "\n")
}

// idle_suspend_after added by a reload applies to agents already running.
func TestReloadedIdleSuspendAfterAppliesToRunningAgents(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	for _, h := range harnesses {
		e.tmpl[h] += "    idle_suspend_after: 1s\n"
	}
	e.writeConfig()
	m.ConfigChanged()
	a := e.waitState(m, "codex", api.StateStopped)
	if !a.WakeOnMessage {
		t.Fatalf("suspended after the reload, but %+v lacks wake_on_message", a)
	}
}

// Sends racing a Stop: every accepted message is delivered before the stop
// or cancelled by it (docs/agents.md: a stop fails pending messages) — none
// is left queued behind it for a TUI that is not coming back, to wait out
// the readiness timeout or reach the agent after someone starts it again.
func TestSendsRacingStopAreDeliveredOrCancelledNeverStranded(t *testing.T) {
	e := newEnv(t, withReadyTimeout(20*time.Second))
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "opencode"}); err != nil {
		t.Fatal(err)
	}
	for round := range 8 {
		e.waitState(m, "opencode", api.StateRunning)
		var mu sync.Mutex
		var accepted []*delivery.Item
		stop := make(chan struct{})
		first := make(chan struct{})
		var firstOnce sync.Once
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					it, _, err := m.Enqueue(ctx, "opencode", fmt.Sprintf("round %d sender %d message %d", round, g, i))
					if err == nil {
						mu.Lock()
						accepted = append(accepted, it)
						mu.Unlock()
						firstOnce.Do(func() { close(first) })
					}
				}
			}()
		}
		<-first // the senders are going
		if _, err := m.Stop(ctx, "opencode"); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		for _, it := range accepted {
			select {
			case <-it.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: message %q still queued 10 s after the stop", round, it.Message)
			}
			if err := it.Err(); err != nil && !errors.Is(err, delivery.ErrCancelled) {
				t.Fatalf("round %d: message %q: %v, want delivered or cancelled by the stop", round, it.Message, err)
			}
		}
		if _, err := m.Start(ctx, "opencode"); err != nil {
			t.Fatal(err)
		}
	}
	e.waitState(m, "opencode", api.StateRunning)
}
