package codex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

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

// Every TOML spelling of projects."/w" is an existing entry: the file is
// left byte for byte as it was. A hand scan missed several of these and
// appended a second [projects."/w"], which codex then refused to read.
func TestPrepareRespectsAnExistingEntryInEverySpelling(t *testing.T) {
	for name, orig := range map[string]string{
		"header basic":           "[projects.\"/w\"]\ntrust_level = \"untrusted\"\n",
		"header literal":         "[projects.'/w']\ntrust_level = \"trusted\"\n",
		"header spaced":          "[ projects . \"/w\" ]\ntrust_level = \"trusted\"\n",
		"header unicode escape":  "[projects.\"\\u002Fw\"]\ntrust_level = \"trusted\"\n",
		"top-level dotted":       "projects.\"/w\".trust_level = \"trusted\"\n",
		"projects table, inline": "[projects]\n\"/w\" = { trust_level = \"trusted\" }\n",
		"projects table, dotted": "[projects]\n'/w'.trust_level = \"untrusted\"\n",
		"inline projects":        "model = \"o3\"\nprojects = { \"/w\" = { trust_level = \"trusted\" } }\n",
		"inline, among others":   "projects = { \"/a\" = { trust_level = \"trusted\" }, '/w' = {} }\n",
		"empty entry table":      "[projects.\"/w\"]\n",
		"after other tables":     "# c\n[mcp_servers.x]\ncommand = \"y\"\n[projects.\"/w\"] # mine\ntrust_level = \"trusted\"\n",
		"crlf":                   "[projects.\"/w\"]\r\ntrust_level = \"trusted\"\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			harnesstest.NotRewritten(t, path, func() error { return TrustWorkspace(path, "/w") })
			if got := harnesstest.ReadFile(t, path); got != orig {
				t.Errorf("existing entry %q was changed to %q", orig, got)
			}
		})
	}
}

// A missing entry is appended after whatever spelling the other projects
// use, and the result is valid TOML holding the entry; the user's bytes
// come first, unchanged.
func TestPrepareAppendsNextToEveryExtensibleSpelling(t *testing.T) {
	for name, orig := range map[string]string{
		"prefix sibling":         "[projects.\"/w2\"]\ntrust_level = \"trusted\"\n",
		"projects table, inline": "[projects]\n\"/a\" = { trust_level = \"trusted\" } # keep\n",
		"top-level dotted":       "projects.\"/a\".trust_level = \"trusted\"\n",
		"no trailing newline":    "model = \"o3\"",
		"ends inside a table":    "[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
		"crlf":                   "model = \"o3\"\r\n",
		"empty file":             "",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := TrustWorkspace(path, "/w"); err != nil {
				t.Fatal(err)
			}
			got := harnesstest.ReadFile(t, path)
			if !strings.HasPrefix(got, orig) {
				t.Fatalf("the user's text was changed:\n%q", got)
			}
			var doc struct {
				Projects map[string]struct {
					TrustLevel string `toml:"trust_level"`
				} `toml:"projects"`
			}
			if err := toml.Unmarshal([]byte(got), &doc); err != nil {
				t.Fatalf("result does not parse: %v\n%s", err, got)
			}
			if doc.Projects["/w"].TrustLevel != "trusted" {
				t.Fatalf("no trusted entry for /w:\n%s", got)
			}
			if strings.Contains(orig, "\r\n") && strings.Count(got, "\n") != strings.Count(got, "\r\n") {
				t.Fatalf("mixed line endings: %q", got)
			}
			harnesstest.NotRewritten(t, path, func() error { return TrustWorkspace(path, "/w") })
		})
	}
}

// What leo cannot extend safely, or cannot read, is left alone and the
// error says so; nothing that does not parse is ever written.
func TestPrepareLeavesAloneWhatItCannotExtend(t *testing.T) {
	for name, orig := range map[string]string{
		"inline projects without the entry": "projects = { \"/a\" = { trust_level = \"trusted\" } }\n",
		"projects is a string":              "projects = \"none\"\n",
		"projects is an array of tables":    "[[projects]]\nname = \"x\"\n",
		"not TOML":                          "[projects.\"/a\"\ntrust_level = \n",
		"duplicate key already":             "a = 1\na = 2\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			err := TrustWorkspace(path, "/w")
			if err == nil || !strings.Contains(err.Error(), "by hand") {
				t.Fatalf("err = %v, want one telling the user to trust /w by hand", err)
			}
			if got := harnesstest.ReadFile(t, path); got != orig {
				t.Fatalf("file changed to %q", got)
			}
		})
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
