package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestEncodeWorkspace(t *testing.T) {
	cases := map[string]string{
		"/home/u/agents/assistant":  "-home-u-agents-assistant",
		"/home/u/my agents/x.y_z-1": "-home-u-my-agents-x-y-z-1",
		"/tmp/é":                    "-tmp--",
		"/tmp/😀":                    "-tmp---",
	}
	for in, want := range cases {
		if got := EncodeWorkspace(in); got != want {
			t.Errorf("EncodeWorkspace(%q) = %q, want %q", in, got, want)
		}
	}
}

func writeTranscript(t *testing.T, env map[string]string, ws, id string, mtime time.Time) string {
	t.Helper()
	p := TranscriptPath(env, ws, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSessionPolicyPinsUUIDs(t *testing.T) {
	p := Claude{}.Sessions()
	if !p.PinsID() {
		t.Fatal("claude must pin ids")
	}
	id := p.NewID()
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 4 {
		t.Fatalf("NewID() = %q: want a v4 UUID (%v)", id, err)
	}
}

func TestExistsFollowsConfigDirAndHome(t *testing.T) {
	ctx := context.Background()
	ws := "/home/u/agents/assistant"
	home := t.TempDir()
	cfg := t.TempDir()
	id := uuid.NewString()

	viaHome := map[string]string{"HOME": home}
	viaCfg := map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": cfg}
	p := writeTranscript(t, viaHome, ws, id, time.Now())
	if want := filepath.Join(home, ".claude", "projects", "-home-u-agents-assistant", id+".jsonl"); p != want {
		t.Fatalf("transcript path %s, want %s", p, want)
	}
	s := Claude{}.Sessions()
	if ok, err := s.Exists(ctx, harness.SessionQuery{Workspace: ws, Env: viaHome}, id); !ok || err != nil {
		t.Fatalf("Exists via HOME = %v, %v", ok, err)
	}
	if ok, err := s.Exists(ctx, harness.SessionQuery{Workspace: ws, Env: viaCfg}, id); ok || err != nil {
		t.Fatalf("CLAUDE_CONFIG_DIR must replace ~/.claude: Exists = %v, %v", ok, err)
	}
	writeTranscript(t, viaCfg, ws, id, time.Now())
	if ok, err := s.Exists(ctx, harness.SessionQuery{Workspace: ws, Env: viaCfg}, id); !ok || err != nil {
		t.Fatalf("Exists via CLAUDE_CONFIG_DIR = %v, %v", ok, err)
	}
	if ok, _ := s.Exists(ctx, harness.SessionQuery{Workspace: "/other", Env: viaHome}, id); ok {
		t.Fatal("a transcript of another workspace counted")
	}
	if ok, _ := s.Exists(ctx, harness.SessionQuery{Workspace: ws, Env: viaHome}, "../../etc/passwd"); ok {
		t.Fatal("a non-UUID id counted")
	}
}

func TestExistsFallsBackToProcessHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	id := uuid.NewString()
	writeTranscript(t, map[string]string{"HOME": home}, "/w", id, time.Now())
	ok, err := Claude{}.Sessions().Exists(context.Background(), harness.SessionQuery{Workspace: "/w"}, id)
	if !ok || err != nil {
		t.Fatalf("Exists with no launch env = %v, %v", ok, err)
	}
}

func TestDiscoverNewestSince(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir()}
	ws := "/srv/ws"
	since := time.Now().Add(-time.Minute)
	old, mid, newest := uuid.NewString(), uuid.NewString(), uuid.NewString()
	writeTranscript(t, env, ws, old, since.Add(-time.Hour))
	writeTranscript(t, env, ws, mid, since.Add(10*time.Second))
	writeTranscript(t, env, ws, newest, since.Add(20*time.Second))
	// Not transcripts: wrong name, and a directory.
	writeTranscript(t, env, ws, "notes", since.Add(time.Hour))
	if err := os.MkdirAll(filepath.Join(ProjectDir(env, ws), uuid.NewString()+".jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := Claude{}.Sessions()
	got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: since})
	if err != nil || got != newest {
		t.Fatalf("Discover = %q, %v; want %q", got, err, newest)
	}
	got, err = s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: time.Now().Add(time.Hour)})
	if err != nil || got != "" {
		t.Fatalf("Discover after every transcript = %q, %v", got, err)
	}
	got, err = s.Discover(context.Background(), harness.SessionQuery{Workspace: "/none", Env: env})
	if err != nil || got != "" {
		t.Fatalf("Discover in a workspace without transcripts = %q, %v", got, err)
	}
}

func TestPrepareTrustsWorkspaceKeepingEverythingElse(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude.json")
	orig := `{
  "hasCompletedOnboarding": true,
  "theme": "dark",
  "numStartups": 12345678901234567890,
  "customApiKeyResponses": {"approved": ["abc"], "rejected": []},
  "projects": {
    "/other": {"hasTrustDialogAccepted": false, "allowedTools": ["Read"], "lastCost": 0.125},
    "/ws": {"history": [{"display": "hi"}]}
  }
}`
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	spec := harness.LaunchSpec{Workspace: "/ws", Env: map[string]string{"HOME": home}}
	if err := (Claude{}).Prepare(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	data := []byte(harnesstest.ReadFile(t, path))
	mustUnmarshal(t, data, &got)
	mustUnmarshal(t, []byte(orig), &want)
	want["projects"].(map[string]any)["/ws"].(map[string]any)["hasTrustDialogAccepted"] = true
	if gj, wj := mustJSON(t, got), mustJSON(t, want); gj != wj {
		t.Fatalf("after Prepare\n got %s\nwant %s", gj, wj)
	}
	if !strings.Contains(string(data), "12345678901234567890") {
		t.Fatal("a large number lost precision")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}

	// Already trusted: not rewritten at all.
	harnesstest.NotRewritten(t, path, func() error { return (Claude{}).Prepare(context.Background(), spec) })
}

func TestPrepareCreatesMinimalConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "claude-cfg")
	spec := harness.LaunchSpec{Workspace: "/ws", Env: map[string]string{"CLAUDE_CONFIG_DIR": cfg, "HOME": t.TempDir()}}
	if err := (Claude{}).Prepare(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg, ".claude.json")
	var got map[string]any
	mustUnmarshal(t, []byte(harnesstest.ReadFile(t, path)), &got)
	if mustJSON(t, got) != `{"projects":{"/ws":{"hasTrustDialogAccepted":true}}}` {
		t.Fatalf("created %s", mustJSON(t, got))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestPrepareLeavesCorruptConfigAlone(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude.json")
	for _, bad := range []string{`{"projects": `, `{"projects": []}`, `{"projects": {"/ws": 3}}`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		err := (Claude{}).Prepare(context.Background(), harness.LaunchSpec{Workspace: "/ws", Env: map[string]string{"HOME": home}})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("Prepare on %q = %v: want an error naming the file", bad, err)
		}
		if harnesstest.ReadFile(t, path) != bad {
			t.Fatalf("Prepare changed a file it could not parse: %q", bad)
		}
	}
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestPrepareTrustsRealPathOfSymlinkedWorkspace: claude checks trust for the
// real path (its cwd) and showed its trust dialog for a workspace leo had
// trusted only as written (through a symlink).
func TestPrepareTrustsRealPathOfSymlinkedWorkspace(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(real) // the temp dir may itself be behind a symlink
	if err != nil {
		t.Fatal(err)
	}
	spec := harness.LaunchSpec{Workspace: link, Env: map[string]string{"HOME": home}}
	if err := (Claude{}).Prepare(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	mustUnmarshal(t, []byte(harnesstest.ReadFile(t, filepath.Join(home, ".claude.json"))), &got)
	for _, ws := range []string{link, real} {
		if !got.Projects[ws].HasTrustDialogAccepted {
			t.Errorf("projects[%q] not trusted: %+v", ws, got.Projects)
		}
	}
	harnesstest.NotRewritten(t, filepath.Join(home, ".claude.json"), func() error { return (Claude{}).Prepare(context.Background(), spec) })
}

// TestSessionsFollowRealPath: claude files a symlinked workspace's
// transcripts under its real path (-tmp-hc-real-ws for /tmp/hc/link_ws).
func TestSessionsFollowRealPath(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	id := "22222222-2222-4333-8444-000000000001"
	path := filepath.Join(home, ".claude", "projects", EncodeWorkspace(resolved), id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Claude{}.Sessions()
	if ok, err := s.Exists(context.Background(), harness.SessionQuery{Workspace: link, Env: env}, id); !ok || err != nil {
		t.Fatalf("Exists through the symlink = %v, %v", ok, err)
	}
	if got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: link, Env: env}); got != id || err != nil {
		t.Fatalf("Discover through the symlink = %q, %v", got, err)
	}
}
