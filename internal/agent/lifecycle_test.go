package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

func TestIdleSuspendThenMessageWakesWithResume(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withTemplateYAML("    idle_suspend_after: 2s\n"))
			m := e.manager()
			id := spawnWithSession(t, e, m, h)
			a := e.waitState(m, h, api.StateStopped)
			if !a.WakeOnMessage {
				t.Fatalf("suspended agent %+v lacks wake_on_message", a)
			}
			waitFor(t, "suspended agent's tmux session gone", 10*time.Second, func() bool {
				ok, err := e.tmux.HasSession(context.Background(), "leo-"+h)
				return err == nil && !ok
			})
			res, err := m.Send(context.Background(), h, "wake up "+h)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Woke {
				t.Fatalf("SendResult %+v, want woke", res)
			}
			waitDelivered(t, m, h, res.ID)
			l := e.launches(h)
			if len(l) != 2 || !testutil.HasSeq(l[1], resumeArgs(h, id)) {
				t.Fatalf("launches %q: the wake launch should resume %s", l, id)
			}
			if got := e.submitted(); got[len(got)-1] != "wake up "+h {
				t.Fatalf("last submitted %q", got)
			}
			if a := mustGet(t, m, h); a.WakeOnMessage || a.SessionID != id {
				t.Fatalf("after wake: %+v", a)
			}
		})
	}
}

func TestIdleSweepNeverSuspendsAttachedAgent(t *testing.T) {
	e := newEnv(t, withTemplateYAML("    idle_suspend_after: 1s\n"))
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	// A control-mode client counts as an attached client.
	ctl := attachClient(t, e, "leo-codex")
	// Wait until a sweep would suspend the agent but for the client, then
	// run one: "nothing happens" is checked by a sweep that surely ran.
	waitFor(t, "codex idle past idle_suspend_after", 20*time.Second, func() bool {
		return idleDueButForClients(t, m, "codex")
	})
	m.Sweep(context.Background())
	if a := mustGet(t, m, "codex"); a.State != api.StateRunning {
		t.Fatalf("attached agent was suspended: %+v", a)
	}
	ctl()
	e.waitState(m, "codex", api.StateStopped)
}

// idleDueButForClients reports whether a sweep now would suspend agent name
// if no client were attached to its pane.
func idleDueButForClients(t *testing.T, m *Manager, name string) bool {
	t.Helper()
	list, err := m.tmux.ListPanes(context.Background())
	if err != nil {
		return false
	}
	p, ok := panesBySession(list)[TmuxSession(name)]
	if !ok {
		return false
	}
	p.Attached = 0
	for _, v := range m.views() {
		if v.Name == name {
			return idleDue(m.clk.Now(), v, p)
		}
	}
	return false
}

func TestSlowStartingTUIStillGetsMessage(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withEnv(map[string]string{"FAKE_SLOW_START_MS": "3000"}))
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			if a := mustGet(t, m, h); a.State != api.StateStarting {
				t.Fatalf("state %s right after spawn, want starting", a.State)
			}
			res, err := m.Send(context.Background(), h, "sent during a slow start")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
			if got := e.submitted(); len(got) != 1 || got[0] != "sent during a slow start" {
				t.Fatalf("submitted %q", got)
			}
		})
	}
}

// The workspace could not be pre-trusted (claude's global config is not
// valid JSON, so leo leaves it alone): the trust dialog shows, and leo
// answers it from what the pane shows, then delivers.
func TestTrustDialogAnsweredFromPane(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_TRUST_DIALOG": "1"}))
	if err := os.WriteFile(filepath.Join(e.userHome["HOME"], ".claude.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Send(context.Background(), "claude", "past the dialog")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "claude", res.ID)
	accepted := 0
	for _, ev := range e.events() {
		if ev.Event == "trust_accepted" {
			accepted++
		}
	}
	if accepted != 1 {
		t.Fatalf("trust dialog accepted %d times, want 1", accepted)
	}
	if !strings.Contains(e.logBuf.String(), "preparing the harness failed") {
		t.Fatal("the failed pre-trust was not logged")
	}
}

// A workspace the adapter prepares (claude's and codex's are pre-trusted)
// never shows the trust dialog.
func TestWorkspacePreTrustedSoNoDialog(t *testing.T) {
	for _, h := range testutil.HarnessesWhere(preparesWorkspace) {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withEnv(map[string]string{"FAKE_TRUST_DIALOG": "1"}))
			m := e.manager()
			if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			res, err := m.Send(context.Background(), h, "no dialog")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
			for _, ev := range e.events() {
				if ev.Event == "trust_accepted" {
					t.Fatal("trust dialog showed although the workspace was pre-trusted")
				}
			}
		})
	}
}

func TestLifecycleVerbs(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	ctx := context.Background()

	a1, err := m.Spawn(ctx, api.SpawnRequest{Template: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	a2, err := m.Spawn(ctx, api.SpawnRequest{Template: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	a3, err := m.Spawn(ctx, api.SpawnRequest{Template: "claude", Name: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if a1.Name != "claude" || a2.Name != "claude-2" || a3.Name != "claude-3" {
		t.Fatalf("names %s %s %s, want claude claude-2 claude-3", a1.Name, a2.Name, a3.Name)
	}
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "claude", Name: "Bad_Name"}); !api.HasCode(err, api.CodeInvalidArgs) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "nope"}); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("unknown template: %v", err)
	}
	if _, err := m.Get("ghost"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("Get ghost: %v", err)
	}
	e.waitState(m, "claude-2", api.StateRunning)

	// Delete only when stopped.
	if err := m.Delete(ctx, "claude-2"); !api.HasCode(err, api.CodeAgentRunning) {
		t.Fatalf("delete running: %v, want agent_running", err)
	}
	st, err := m.Stop(ctx, "claude-2")
	if err != nil || st.State != api.StateStopped || st.WakeOnMessage {
		t.Fatalf("Stop: %+v %v", st, err)
	}
	if ok, _ := e.tmux.HasSession(ctx, "leo-claude-2"); ok {
		t.Fatal("stopped agent's session still exists")
	}
	// A stopped (not parked) agent does not take messages and is not
	// restarted by the supervisor.
	if _, err := m.Send(ctx, "claude-2", "hi"); !api.HasCode(err, api.CodeAgentStopped) {
		t.Fatalf("send to stopped: %v", err)
	}
	for range 3 { // sweeps that surely ran, whatever the supervisor's ticks did
		m.Sweep(ctx)
	}
	if a := mustGet(t, m, "claude-2"); a.State != api.StateStopped {
		t.Fatalf("stopped agent came back: %+v", a)
	}
	id := mustGet(t, m, "claude-2").SessionID
	if _, err := m.Start(ctx, "claude-2"); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "claude-2", api.StateRunning)
	if a := mustGet(t, m, "claude-2"); a.SessionID != id {
		t.Fatalf("start changed the session %s → %s", id, a.SessionID)
	}
	// Restart in place keeps the conversation.
	if _, err := m.Restart(ctx, "claude-2"); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "claude-2", api.StateRunning)
	// Reset: new conversation.
	r, err := m.Reset(ctx, "claude-2")
	if err != nil {
		t.Fatal(err)
	}
	if r.SessionID == "" || r.SessionID == id {
		t.Fatalf("reset kept session %s", r.SessionID)
	}
	waitFor(t, "reset launch with a new pinned id", 10*time.Second, func() bool {
		for _, argv := range e.launches("claude") {
			if testutil.HasSeq(argv, []string{"--session-id", r.SessionID}) {
				return true
			}
		}
		return false
	})
	e.waitState(m, "claude-2", api.StateRunning)
	if _, err := m.Stop(ctx, "claude-2"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.tmux.HasSession(ctx, "leo-claude-2"); ok {
		t.Fatal("Stop returned before the session was gone")
	}
	if err := m.Delete(ctx, "claude-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get("claude-2"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("deleted agent still there: %v", err)
	}
	// Records survive a new manager; env values never reach the state file.
	data, err := os.ReadFile(e.home.AgentsPath())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), e.userHome["HOME"]) {
		t.Fatal("agents.json holds an env value")
	}
	fi, _ := os.Stat(e.home.AgentsPath())
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("agents.json mode %v", fi.Mode().Perm())
	}
	names := []string{}
	for _, a := range m.List() {
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "claude,claude-3" {
		t.Fatalf("list %v", names)
	}
	logs, err := m.Logs(ctx, "claude", 50)
	if err != nil || !strings.Contains(logs.Text, "for shortcuts") {
		t.Fatalf("logs %q %v", logs.Text, err)
	}
}

func TestCorruptStateFileKeptAsideNotReset(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(e.home.AgentsPath(), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := e.manager()
	if len(m.List()) != 0 {
		t.Fatal("agents from a corrupt file")
	}
	matches, _ := filepath.Glob(e.home.AgentsPath() + ".corrupt-*")
	if len(matches) != 1 {
		t.Fatalf("corrupt file not kept aside: %v", matches)
	}
	if data, _ := os.ReadFile(matches[0]); string(data) != "{broken" {
		t.Fatalf("kept-aside file changed: %q", data)
	}
	if !strings.Contains(e.logBuf.String(), "corrupt") {
		t.Fatal("corruption not logged")
	}
}

func TestBusyWhileTurnRuns(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "1500"}))
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "opencode"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "opencode", api.StateRunning)
	if busy, err := m.Busy(ctx, "opencode"); err != nil || busy {
		t.Fatalf("idle agent: busy=%v err=%v", busy, err)
	}
	res, err := m.Send(ctx, "opencode", "a long turn")
	if err != nil {
		t.Fatal(err)
	}
	if busy, _ := m.Busy(ctx, "opencode"); !busy {
		t.Fatal("agent with a queued message reported idle")
	}
	waitDelivered(t, m, "opencode", res.ID)
	if busy, _ := m.Busy(ctx, "opencode"); !busy {
		t.Fatal("agent in a turn reported idle")
	}
	waitFor(t, "turn end", 10*time.Second, func() bool {
		busy, _ := m.Busy(ctx, "opencode")
		return !busy
	})
}

// Env values reach the pane through tmux -e, never a command line: not the
// pane's start command, not the tmux server's own argv (a server keeps the
// argv of the client that started it, for ps to show), not the listings.
func TestEnvValuesNeverOnACommandLine(t *testing.T) {
	const secret = "sk-test-0123456789-secret"
	e := newEnv(t, withEnv(map[string]string{"LEO_TEST_TOKEN": secret}))
	m := e.manager()
	ctx := context.Background()
	a, err := m.Spawn(ctx, api.SpawnRequest{Template: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "claude", api.StateRunning)
	if !containsStr(a.EnvKeys, "LEO_TEST_TOKEN") {
		t.Fatalf("env keys %v lack LEO_TEST_TOKEN", a.EnvKeys)
	}
	list, err := e.tmux.ListPanes(ctx)
	if err != nil || len(list) == 0 {
		t.Fatalf("panes %v %v", list, err)
	}
	for _, pid := range []int{list[0].ServerPID, list[0].PID} {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cmdline), secret) {
			t.Fatalf("pid %d's command line holds an env value: %q", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	// The pane does get it.
	environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(list[0].PID), "environ"))
	if err != nil || !strings.Contains(string(environ), "LEO_TEST_TOKEN="+secret) {
		t.Fatalf("pane environment lacks the value (err %v)", err)
	}
	data, _ := os.ReadFile(e.home.AgentsPath())
	if strings.Contains(string(data), secret) || strings.Contains(e.logBuf.String(), secret) {
		t.Fatal("an env value reached agents.json or the log")
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A Stop, Restart or Delete looks the agent up, then waits for its op lock.
// When a Delete and a Spawn of the same name ran in between, what it holds
// is the deleted agent's runtime: it must answer not_found and leave the new
// agent's tmux session alone (the session is named after the agent, so a
// stop or a delete would kill it and a restart would replace it).
func TestStaleHandleAfterDeleteAndRespawnLeavesTheNewAgentAlone(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	if _, err := m.Stop(ctx, "codex"); err != nil {
		t.Fatal(err)
	}
	stale, err := m.lookup("codex") // what a Stop that is about to wait holds
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, "codex"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	pid := e.panePID("codex")

	ops := []struct {
		name string
		run  func() error
	}{
		{"stop", func() error { return stale.stop(ctx, false, "stopped") }},
		{"restart", func() error { return stale.relaunch(ctx, "restart", nil) }},
		{"delete", func() error { return stale.delete(ctx) }},
	}
	for _, op := range ops {
		stale.op.Lock()
		err := op.run()
		stale.op.Unlock()
		if !api.HasCode(err, api.CodeNotFound) {
			t.Errorf("%s on the deleted agent's runtime: %v, want not_found", op.name, err)
		}
		if got := e.panePID("codex"); got != pid {
			t.Fatalf("%s on the deleted agent's runtime: the new agent's pane pid is %d, was %d", op.name, got, pid)
		}
		if a := mustGet(t, m, "codex"); a.State != api.StateRunning {
			t.Fatalf("%s on the deleted agent's runtime: the new agent is %s", op.name, a.State)
		}
	}
}
