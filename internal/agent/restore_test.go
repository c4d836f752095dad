package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// A daemon killed with SIGKILL leaves its agents running in tmux; the next
// one must adopt every live agent, relaunching none.
func TestNewManagerAdoptsLiveAgentsWithoutRelaunch(t *testing.T) {
	e := newEnv(t)
	m1 := e.newManager()
	if err := m1.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan struct{})
	go func() { m1.Run(ctx1); close(done1) }()

	ids := map[string]string{}
	for _, h := range harnesses {
		ids[h] = spawnWithSession(t, e, m1, h)
	}
	pids := map[string]int{}
	panes := map[string]string{}
	for _, h := range harnesses {
		pids[h] = e.panePID(h)
		panes[h] = e.paneID(h)
	}
	launchesBefore := len(e.events())
	// The "crash": the first manager stops without any shutdown work
	// reaching tmux (Close never touches sessions).
	stop1()
	<-done1
	m1.Close()

	m2 := e.newManager()
	start := time.Now()
	st, err := m2.restore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restore of %d live agents took %v", st.Adopted, time.Since(start))
	e.run(m2)
	if st.Adopted != len(harnesses) || st.Relaunched != 0 {
		t.Fatalf("restore %+v, want %d adopted and 0 relaunched", st, len(harnesses))
	}
	for _, h := range harnesses {
		a := mustGet(t, m2, h)
		if a.State != api.StateRunning || a.SessionID != ids[h] {
			t.Fatalf("%s after restore: %+v (want running, session %s)", h, a, ids[h])
		}
		if got := e.panePID(h); got != pids[h] {
			t.Fatalf("%s pane pid %d, want %d (no relaunch)", h, got, pids[h])
		}
		if got := e.paneID(h); got != panes[h] {
			t.Fatalf("%s pane id %s, want %s", h, got, panes[h])
		}
		if n := len(e.launches(h)); n != 1 {
			t.Fatalf("%s launched %d times, want 1", h, n)
		}
	}
	// The adopted agents are supervised and take messages.
	for _, h := range harnesses {
		res, err := m2.Send(context.Background(), h, "after adoption "+h)
		if err != nil {
			t.Fatal(err)
		}
		waitDelivered(t, m2, h, res.ID)
	}
	_ = launchesBefore
}

// A reboot (tmux server gone) relaunches agents that should run, resuming
// their conversations; a claude agent with claude missing is kept stopped
// with the reason, and the other harnesses are unaffected.
func TestRestoreAfterRebootResumesAndKeepsClaudeStoppedWhenMissing(t *testing.T) {
	e := newEnv(t)
	m1 := e.manager()
	ids := map[string]string{}
	for _, h := range harnesses {
		ids[h] = spawnWithSession(t, e, m1, h)
	}
	if _, err := m1.Stop(context.Background(), "opencode"); err != nil {
		t.Fatal(err)
	}
	m1.Close()
	if err := e.tmux.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}

	var others []string // every fake but claude
	for _, h := range harnesses {
		if h != "claude" {
			others = append(others, h)
		}
	}
	noClaude := dirWith(t, e.fakeDir, others...)
	m2 := e.newManager(binpath.Resolver{Getenv: func(k string) string {
		if k == "PATH" {
			return noClaude
		}
		return ""
	}})
	st, err := m2.restore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.run(m2)
	// All but claude (missing) and opencode (stopped by a person) relaunch.
	if st.Relaunched != len(harnesses)-2 || st.Stopped != 1 || st.Adopted != 0 {
		t.Fatalf("restore %+v, want %d relaunched and claude stopped", st, len(harnesses)-2)
	}
	cl := mustGet(t, m2, "claude")
	if cl.State != api.StateStopped || cl.LastError != claude.NotFoundMessage || cl.SessionID != ids["claude"] {
		t.Fatalf("claude after restore: %+v", cl)
	}
	if op := mustGet(t, m2, "opencode"); op.State != api.StateStopped {
		t.Fatalf("stopped opencode agent was started: %+v", op)
	}
	cx := e.waitState(m2, "codex", api.StateRunning)
	if cx.SessionID != ids["codex"] {
		t.Fatalf("codex session %q, want %q", cx.SessionID, ids["codex"])
	}
	l := e.launches("codex")
	if !testutil.HasSeq(l[len(l)-1], resumeArgs("codex", ids["codex"])) {
		t.Fatalf("codex relaunch %q does not resume %s", l[len(l)-1], ids["codex"])
	}
	if _, err := m2.Start(context.Background(), "claude"); !api.HasCode(err, api.CodeClaudeNotFound) {
		t.Fatalf("Start claude without claude: %v, want claude_not_found", err)
	}
}

func TestSpawnClaudeWithoutClaudeFailsOthersUnaffected(t *testing.T) {
	e := newEnv(t)
	var others []string // every fake but claude
	for _, h := range harnesses {
		if h != "claude" {
			others = append(others, h)
		}
	}
	noClaude := dirWith(t, e.fakeDir, others...)
	path := noClaude
	m := e.manager(binpath.Resolver{Getenv: func(k string) string {
		if k == "PATH" {
			return path
		}
		return ""
	}})
	_, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "claude"})
	var ae *api.Error
	if !api.HasCode(err, api.CodeClaudeNotFound) || err.Error() != claude.NotFoundMessage {
		t.Fatalf("spawn claude: %v (%T), want claude_not_found with the contract text", err, ae)
	}
	if len(m.List()) != 0 {
		t.Fatalf("a failed spawn left a record: %+v", m.List())
	}
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatalf("codex spawn: %v", err)
	}
	e.waitState(m, "codex", api.StateRunning)
	// Installing claude needs no restart: it is looked up every time.
	path = noClaude + string(os.PathListSeparator) + e.fakeDir
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatalf("spawn claude once installed: %v", err)
	}
}

// dirWith makes a directory holding only the named fake harnesses.
func dirWith(t *testing.T, fakeDir string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(fakeDir, "fakeharness"), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
