package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/statefile"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// asides are the files kept beside agents.json with the given kind.
func (e *testEnv) asides(kind string) []string {
	e.t.Helper()
	m, err := filepath.Glob(e.home.AgentsPath() + "." + kind + "-*")
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// sessionPID is the pid of the first pane of a tmux session, 0 if none.
func (e *testEnv) sessionPID(session string) int {
	e.t.Helper()
	list, err := e.tmux.ListPanes(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list {
		if p.SessionName == session {
			return p.PID
		}
	}
	return 0
}

// A record whose state this leo does not know (hand edit, newer leo) is
// reported and left alone with its live session: never taken as stopped
// and killed. The file is kept aside before the next save drops it.
func TestRestoreLeavesRecordOfUnknownStateAndItsSessionAlone(t *testing.T) {
	e := newEnv(t)
	m1 := e.manager()
	for _, h := range []string{"codex", "opencode"} {
		if _, err := m1.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
			t.Fatal(err)
		}
		e.waitState(m1, h, api.StateRunning)
	}
	m1.Close()
	pid := e.sessionPID("leo-codex")
	data, err := os.ReadFile(e.home.AgentsPath())
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"state": "running"`, `"state": "paused"`, 1)
	if edited == string(data) {
		t.Fatalf("no running record to edit in %s", data)
	}
	if err := os.WriteFile(e.home.AgentsPath(), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}

	m2 := e.newManager()
	st, err := m2.restore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.run(m2)
	if st.Skipped != 1 || st.Adopted != 1 || st.Killed != 0 || st.Unclaimed != 1 {
		t.Fatalf("restore %+v, want 1 skipped, 1 adopted, 0 killed, 1 unclaimed", st)
	}
	if got := e.sessionPID("leo-codex"); got != pid || pid == 0 {
		t.Fatalf("leo-codex pane pid %d after restore, want %d: the session of a record leo does not understand was touched", got, pid)
	}
	if _, err := m2.Get("codex"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("Get codex: %v, want not_found (the record is not acted on)", err)
	}
	if p := m2.Problems(); len(p) != 1 || !strings.Contains(p[0], `unknown state "paused"`) {
		t.Fatalf("problems %q, want the unknown state reported", p)
	}
	if log := e.logBuf.String(); !strings.Contains(log, "agent record not understood") || !strings.Contains(log, "skipped=1") {
		t.Fatalf("log does not report the record:\n%s", log)
	}
	kept := e.asides("unknown")
	if len(kept) != 1 {
		t.Fatalf("kept aside %v, want one copy", kept)
	}
	if b, _ := os.ReadFile(kept[0]); string(b) != edited {
		t.Fatalf("aside copy differs from the file read:\n%s", b)
	}
	// A later save (a stop of the other agent) still leaves the session alone.
	if _, err := m2.Stop(context.Background(), "opencode"); err != nil {
		t.Fatal(err)
	}
	if got := e.sessionPID("leo-codex"); got != pid {
		t.Fatalf("leo-codex pane pid %d, want %d", got, pid)
	}
}

// Every tmux session leo kills is logged with why.
func TestEveryKilledSessionIsLogged(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	if _, err := m.Stop(context.Background(), "codex"); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(context.Background(), "codex"); err != nil {
		t.Fatal(err)
	}
	log := e.logBuf.String()
	for _, why := range []string{`why="agent stopped"`, `why="deleting its stopped agent"`} {
		found := false
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, `msg="killed tmux session"`) && strings.Contains(line, "session=leo-codex") && strings.Contains(line, why) {
				found = true
			}
		}
		if !found {
			t.Fatalf("no kill line with %s in:\n%s", why, log)
		}
	}
}

// A newer leo's agents.json (higher version) is kept aside whole and its
// agents' sessions are left alone.
func TestRestoreKeepsNewerVersionFileAsideAndItsSessionsAlone(t *testing.T) {
	e := newEnv(t)
	m1 := e.manager()
	if _, err := m1.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m1, "codex", api.StateRunning)
	m1.Close()
	pid := e.sessionPID("leo-codex")
	data, _ := os.ReadFile(e.home.AgentsPath())
	newer := strings.Replace(string(data), `"version": 1`, `"version": 2`, 1)
	if err := os.WriteFile(e.home.AgentsPath(), []byte(newer), 0o600); err != nil {
		t.Fatal(err)
	}
	m2 := e.newManager()
	st, err := m2.restore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Adopted != 0 || st.Killed != 0 || st.Unclaimed != 1 || len(m2.List()) != 0 {
		t.Fatalf("restore %+v, list %v", st, m2.List())
	}
	if got := e.sessionPID("leo-codex"); got != pid {
		t.Fatalf("leo-codex pane pid %d, want %d", got, pid)
	}
	kept := e.asides("unknown")
	if len(kept) != 1 {
		t.Fatalf("kept aside %v", kept)
	}
	if b, _ := os.ReadFile(kept[0]); string(b) != newer {
		t.Fatalf("aside holds %s", b)
	}
	if p := m2.Problems(); len(p) != 1 || !strings.Contains(p[0], "newer leo") {
		t.Fatalf("problems %q", p)
	}
}

// Valid JSON that is not the store's shape or version is never an empty
// fleet: it is kept aside, byte for byte, and reported.
func TestStoreLoadRefusesWrongShapes(t *testing.T) {
	for _, body := range []string{
		`null`, `[]`, `"agents"`, `42`, `{}`, `{"version":1}`, `{"agents":[]}`,
		`{"version":1,"agents":null}`, `{"version":1,"agents":{}}`, `{"version":"1","agents":[]}`,
		`{"version":2,"agents":[]}`, `{"version":0,"agents":[]}`, `{"version":1,"agents":[null]}`,
		`{"version":1,"agents":[1]}`, `{"version":1,"agents":[{"name":"x","state":7}]}`,
	} {
		t.Run(body, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agents.json")
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			recs, _, _, err := NewStore(path).Load()
			var ce *statefile.CorruptError
			if !errors.As(err, &ce) || len(recs) != 0 {
				t.Fatalf("Load = %v, %v; want a kept-aside report", recs, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s still there: %v", path, err)
			}
			if b, err := os.ReadFile(ce.Aside); err != nil || string(b) != body {
				t.Fatalf("aside %s holds %q (%v), want %q", ce.Aside, b, err, body)
			}
		})
	}
	// What Save writes, empty or not, reads back without complaint.
	path := filepath.Join(t.TempDir(), "agents.json")
	s := NewStore(path)
	for _, recs := range [][]*Record{nil, {{Name: "a", State: api.StateStopped}}} {
		if err := s.Save(func() []*Record { return append([]*Record{}, recs...) }); err != nil {
			t.Fatal(err)
		}
		got, skipped, _, err := s.Load()
		if err != nil || len(skipped) != 0 || len(got) != len(recs) {
			t.Fatalf("Load of a saved store: %v %v %v", got, skipped, err)
		}
	}
}

// Spawn never kills a leo-<name> session it has no record for: the name
// counts as taken and the agent gets the next free one.
func TestSpawnLeavesUnclaimedSessionAloneAndTakesNextName(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	raw := testutil.NewRawTmux(e.tmux)
	raw.NewSession(t, "leo-codex", t.TempDir(), "cat")
	pid := e.sessionPID("leo-codex")
	a, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex", Name: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "codex-2" {
		t.Fatalf("spawned %q, want codex-2", a.Name)
	}
	if got := e.sessionPID("leo-codex"); got != pid || pid == 0 {
		t.Fatalf("leo-codex pane pid %d, want %d: spawn took over a session it has no record for", got, pid)
	}
	e.waitState(m, "codex-2", api.StateRunning)

	// The session appearing between the listing and new-session: the
	// launch refuses it (agent_exists) and leaves it alone.
	raw.NewSession(t, "leo-late", t.TempDir(), "cat")
	pid = e.sessionPID("leo-late")
	res, err := m.resolve(e.cfg.Load(), "codex", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.spawnOnce(context.Background(), spawnScope{template: "codex"}, res, "late", map[string]bool{}, false)
	if !api.HasCode(err, api.CodeAgentExists) {
		t.Fatalf("spawn onto an unlisted session: %v, want agent_exists", err)
	}
	if got := e.sessionPID("leo-late"); got != pid {
		t.Fatalf("leo-late pane pid %d, want %d", got, pid)
	}
	if _, err := m.Get("late"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("failed spawn left a record: %v", err)
	}
}

// breakState makes state/ unwritable even for root: the directory is
// replaced by a file. It returns what puts it back.
func (e *testEnv) breakState() func() {
	e.t.Helper()
	dir := e.home.StateDir()
	if err := os.Rename(dir, dir+".saved"); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		e.t.Fatal(err)
	}
	return func() {
		e.t.Helper()
		if err := os.Remove(dir); err != nil {
			e.t.Fatal(err)
		}
		if err := os.Rename(dir+".saved", dir); err != nil {
			e.t.Fatal(err)
		}
	}
}

// A stop, start or delete whose save fails changes nothing in memory, and
// the answer says so: memory and disk never disagree.
func TestFailedSaveLeavesAgentAsItWas(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	pid := e.sessionPID("leo-codex")

	fix := e.breakState()
	_, err := m.Stop(context.Background(), "codex")
	if err == nil || !strings.Contains(err.Error(), "not stopped") {
		t.Fatalf("Stop with state/ unwritable: %v, want a failure saying it was not stopped", err)
	}
	if a := mustGet(t, m, "codex"); a.State != api.StateRunning {
		t.Fatalf("after a failed stop the agent is listed %s, want running", a.State)
	}
	if got := e.sessionPID("leo-codex"); got != pid {
		t.Fatalf("pane pid %d after a failed stop, want %d", got, pid)
	}
	fix()
	if _, err := m.Stop(context.Background(), "codex"); err != nil {
		t.Fatal(err)
	}

	fix = e.breakState()
	_, err = m.Start(context.Background(), "codex")
	if err == nil || !strings.Contains(err.Error(), "nothing was launched") {
		t.Fatalf("Start with state/ unwritable: %v, want a failure saying nothing was launched", err)
	}
	if a := mustGet(t, m, "codex"); a.State != api.StateStopped {
		t.Fatalf("after a failed start the agent is listed %s, want stopped", a.State)
	}
	if got := e.sessionPID("leo-codex"); got != 0 {
		t.Fatalf("a failed start left a session (pid %d)", got)
	}
	if err := m.Delete(context.Background(), "codex"); err == nil || !strings.Contains(err.Error(), "not deleted") {
		t.Fatalf("Delete with state/ unwritable: %v", err)
	}
	if _, err := m.Get("codex"); err != nil {
		t.Fatalf("after a failed delete: %v", err)
	}
	fix()
	// A later start does start it.
	if _, err := m.Start(context.Background(), "codex"); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	for _, r := range e.readRecords() {
		if r.Name == "codex" && r.State == api.StateStopped {
			t.Fatalf("disk says %s", r.State)
		}
	}
}

// A reset whose save fails keeps the conversation: memory still names the
// stored session id the file has.
func TestFailedSaveKeepsTheConversationOfAReset(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatal(err)
	}
	id := e.waitState(m, "claude", api.StateRunning).SessionID
	if id == "" {
		t.Fatal("claude agent without a pinned session id")
	}
	fix := e.breakState()
	if _, err := m.Reset(context.Background(), "claude"); err == nil || !strings.Contains(err.Error(), "nothing was launched") {
		t.Fatalf("Reset with state/ unwritable: %v", err)
	}
	if a := mustGet(t, m, "claude"); a.SessionID != id || a.State != api.StateRunning {
		t.Fatalf("after a failed reset: session %q state %s, want %q running", a.SessionID, a.State, id)
	}
	fix()
}
