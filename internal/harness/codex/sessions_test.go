package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// rollout writes a rollout the way codex does (and the fake does):
// sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl whose first line is
// session_meta, or with dirLayout the rollout-<…>/rollout.jsonl form.
func rollout(t *testing.T, home string, at time.Time, id, cwd string, mtime time.Time, dirLayout bool) string {
	t.Helper()
	day := filepath.Join(home, "sessions", at.Format("2006"), at.Format("01"), at.Format("02"))
	name := "rollout-" + at.Format("2006-01-02T15-04-05") + "-" + id
	p := filepath.Join(day, name+".jsonl")
	if dirLayout {
		p = filepath.Join(day, name, "rollout.jsonl")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":%q,"originator":"codex-tui","cli_version":"0.0.0-fake","instructions":%q}}`,
		at.UTC().Format(time.RFC3339Nano), id, at.UTC().Format(time.RFC3339Nano), cwd, strings.Repeat("x", 100_000))
	body := meta + "\n" + `{"type":"response_item","payload":{}}` + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiscoverNewestRolloutOfWorkspace(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CODEX_HOME": home}
	ws := "/home/u/agents/coder"
	now := time.Now()
	since := now.Add(-time.Minute)

	rollout(t, home, now.Add(-2*time.Hour), "old-0000", ws, now.Add(-2*time.Hour), false)       // before since
	rollout(t, home, now.Add(-30*time.Second), "mine-0001", ws, now, false)                     // match
	rollout(t, home, now.Add(-10*time.Second), "mine-0002", ws, now.Add(-20*time.Second), true) // newer by timestamp, dir layout
	rollout(t, home, now.Add(-5*time.Second), "other-0003", "/home/u/agents/other", now, false) // other cwd
	rollout(t, home, now.Add(-20*time.Second), "mine-0004", ws+"/sub", now, false)              // a subdir is not the workspace

	s := Codex{}.Sessions()
	got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: since})
	if err != nil || got != "mine-0002" {
		t.Fatalf("Discover = %q, %v; want mine-0002 (newest by its own timestamp)", got, err)
	}
	got, err = s.Discover(context.Background(), harness.SessionQuery{Workspace: ws + "/", Env: env, Since: since})
	if err != nil || got != "mine-0002" {
		t.Fatalf("Discover with a trailing slash = %q, %v", got, err)
	}
	got, err = s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: now.Add(time.Minute)})
	if err != nil || got != "" {
		t.Fatalf("Discover after every rollout = %q, %v", got, err)
	}
	// Another agent of the workspace owns the newest: the next one is found.
	got, err = s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: since, Exclude: []string{"mine-0002"}})
	if err != nil || got != "mine-0001" {
		t.Fatalf("Discover excluding mine-0002 = %q, %v; want mine-0001", got, err)
	}
}

func TestDiscoverSkipsDayDirsBeforeSince(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CODEX_HOME": home}
	ws := "/w"
	now := time.Now()
	// Filed under a day long before Since, though touched just now: the scan
	// must not even open that day.
	rollout(t, home, now.AddDate(0, 0, -10), "ancient", ws, now, false)
	got, err := Codex{}.Sessions().Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: now.Add(-time.Minute)})
	if err != nil || got != "" {
		t.Fatalf("Discover = %q, %v; want the old day skipped", got, err)
	}
	got, err = Codex{}.Sessions().Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env})
	if err != nil || got != "ancient" {
		t.Fatalf("Discover with zero Since = %q, %v; want every day scanned", got, err)
	}
}

func TestDiscoverUsesHomeAndToleratesJunk(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "CODEX_HOME": ""}
	t.Setenv("CODEX_HOME", "")
	codexHome := filepath.Join(home, ".codex")
	now := time.Now()
	day := filepath.Join(codexHome, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"rollout-junk.jsonl":     "not json\n",
		"rollout-empty.jsonl":    "",
		"rollout-other.jsonl":    `{"type":"response_item"}` + "\n",
		"notes.txt":              "x",
		"rollout-no-id.jsonl":    `{"type":"session_meta","payload":{"cwd":"/w"}}` + "\n",
		"rollout-no-newline.txt": `{"type":"session_meta","payload":{"id":"x","cwd":"/w"}}`,
	} {
		if err := os.WriteFile(filepath.Join(day, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(codexHome, "sessions", "notayear"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := Codex{}.Sessions().Discover(context.Background(), harness.SessionQuery{Workspace: "/w", Env: env, Since: now.Add(-time.Hour)})
	if err != nil || got != "" {
		t.Fatalf("Discover over junk = %q, %v", got, err)
	}
	rollout(t, codexHome, now, "real-id", "/w", now, false)
	got, err = Codex{}.Sessions().Discover(context.Background(), harness.SessionQuery{Workspace: "/w", Env: env, Since: now.Add(-time.Hour)})
	if err != nil || got != "real-id" {
		t.Fatalf("Discover via HOME = %q, %v", got, err)
	}
	// A missing sessions tree is simply empty.
	got, err = Codex{}.Sessions().Discover(context.Background(), harness.SessionQuery{Workspace: "/w", Env: map[string]string{"CODEX_HOME": t.TempDir()}})
	if err != nil || got != "" {
		t.Fatalf("Discover without sessions = %q, %v", got, err)
	}
}

func TestExists(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CODEX_HOME": home}
	now := time.Now()
	id := "0199a213-81c0-7800-8aa1-bbab2a035a53"
	rollout(t, home, now.AddDate(0, -2, 0), id, "/w", now, false)
	dirID := "0199a213-81c0-7800-8aa1-000000000002"
	rollout(t, home, now, dirID, "/w", now, true)
	s := Codex{}.Sessions()
	q := harness.SessionQuery{Workspace: "/w", Env: env, Since: now}
	for _, c := range []struct {
		id   string
		want bool
	}{{id, true}, {dirID, true}, {"0199a213-81c0-7800-8aa1-bbab2a035a54", false}, {"", false}, {"../x", false}} {
		got, err := s.Exists(context.Background(), q, c.id)
		if err != nil || got != c.want {
			t.Errorf("Exists(%q) = %v, %v; want %v", c.id, got, err, c.want)
		}
	}
	if s.PinsID() || s.NewID() != "" {
		t.Fatal("codex must not pin ids")
	}
}

func TestRolloutID(t *testing.T) {
	cases := map[string]string{
		"/s/2026/11/29/rollout-2026-11-29T10-11-12-0199a213-81c0-7800.jsonl":         "0199a213-81c0-7800",
		"/s/2026/11/29/rollout-2026-11-29T10-11-12-0199a213-81c0-7800/rollout.jsonl": "0199a213-81c0-7800",
		"/s/2026/11/29/rollout-short.jsonl":                                          "",
	}
	for in, want := range cases {
		if got := rolloutID(in); got != want {
			t.Errorf("rolloutID(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestDiscoverHonoursContext(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	rollout(t, home, now, "x", "/w", now, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Codex{}).Sessions().Discover(ctx, harness.SessionQuery{Workspace: "/w", Env: map[string]string{"CODEX_HOME": home}}); err == nil {
		t.Fatal("Discover ignored a cancelled context")
	}
}

// codex records the real path of its working directory: a workspace
// reached through a symlink finds its rollouts, and its turns, by it.
func TestDiscoverAndUserTurnsThroughASymlinkedWorkspace(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CODEX_HOME": home}
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p := rollout(t, home, now, "real-0001", resolved, now, false)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"timestamp":%q,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"hi"}]}}}`+"\n", now.UTC().Format(time.RFC3339Nano))
	f.Close()

	q := harness.SessionQuery{Workspace: link, Env: env, Since: now.Add(-time.Minute)}
	if got, err := (Codex{}).Sessions().Discover(context.Background(), q); err != nil || got != "real-0001" {
		t.Fatalf("Discover through the symlink = %q, %v", got, err)
	}
	turns, err := Codex{}.UserTurns(context.Background(), q, "")
	if err != nil || len(turns) != 1 || turns[0].Text != "hi" || turns[0].SessionID != "real-0001" {
		t.Fatalf("UserTurns through the symlink = %+v, %v", turns, err)
	}
}
