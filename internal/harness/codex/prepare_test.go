package codex

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestPrepareAppendsTrustKeepingEveryByte(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	orig := "# my codex config\nmodel = \"o3\"  # keep this comment\n\n[projects.\"/home/u/other\"]\ntrust_level = \"untrusted\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\""
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := harness.LaunchSpec{Workspace: "/home/u/agents/coder", Env: map[string]string{"CODEX_HOME": home}}
	if err := (Codex{}).Prepare(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	want := orig + "\n\n[projects.\"/home/u/agents/coder\"]\ntrust_level = \"trusted\"\n"
	if got := harnesstest.ReadFile(t, path); got != want {
		t.Fatalf("config.toml\n got %q\nwant %q", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want the file's own 0644 kept", fi.Mode().Perm())
	}

	harnesstest.NotRewritten(t, path, func() error { return (Codex{}).Prepare(context.Background(), spec) })
}

func TestPrepareRespectsAnExistingEntry(t *testing.T) {
	for _, orig := range []string{
		"[projects.\"/w\"]\ntrust_level = \"untrusted\"\n",
		"[projects.'/w']\ntrust_level = \"trusted\"\n",
		"[ projects . \"/w\" ]\ntrust_level = \"trusted\"\n",
		"projects.\"/w\".trust_level = \"trusted\"\n",
	} {
		home := t.TempDir()
		path := filepath.Join(home, "config.toml")
		if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := TrustWorkspace(path, "/w"); err != nil {
			t.Fatal(err)
		}
		if got := harnesstest.ReadFile(t, path); got != orig {
			t.Errorf("existing entry %q was changed to %q", orig, got)
		}
	}
	// A different dir sharing a prefix is not an entry for /w.
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte("[projects.\"/w2\"]\ntrust_level = \"trusted\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := TrustWorkspace(path, "/w"); err != nil {
		t.Fatal(err)
	}
	if got := harnesstest.ReadFile(t, path); got != "[projects.\"/w2\"]\ntrust_level = \"trusted\"\n\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n" {
		t.Fatalf("got %q", got)
	}
}

func TestPrepareCreatesConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", "")
	spec := harness.LaunchSpec{Workspace: `/srv/a "quoted" dir\x`, Env: map[string]string{"HOME": home}}
	if err := (Codex{}).Prepare(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".codex", "config.toml")
	if got, want := harnesstest.ReadFile(t, path), "[projects.\"/srv/a \\\"quoted\\\" dir\\\\x\"]\ntrust_level = \"trusted\"\n"; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

// codex checks trust by the real path (observed with 0.171.0: a workspace
// trusted only as a symlink got the folder-access dialog naming its
// target), so Prepare trusts both.
func TestPrepareTrustsASymlinkedWorkspaceByItsRealPathToo(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(real) // the temp dir itself may sit behind a symlink
	if err != nil {
		t.Fatal(err)
	}
	spec := harness.LaunchSpec{Workspace: link, Env: map[string]string{"CODEX_HOME": home}}
	if err := (Codex{}).Prepare(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	got := harnesstest.ReadFile(t, filepath.Join(home, "config.toml"))
	want := "[projects.\"" + link + "\"]\ntrust_level = \"trusted\"\n\n[projects.\"" + resolved + "\"]\ntrust_level = \"trusted\"\n"
	if got != want {
		t.Fatalf("config.toml\n got %q\nwant %q", got, want)
	}
	harnesstest.NotRewritten(t, filepath.Join(home, "config.toml"), func() error { return (Codex{}).Prepare(context.Background(), spec) })
}
