package opencode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const nudge = "Use the leo_skill MCP tool to learn how to message and schedule with leo."

func TestEnsureManagedBlockCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opencode")
	if err := EnsureManagedBlock(dir, nudge); err != nil {
		t.Fatal(err)
	}
	want := BlockBegin + "\n" + nudge + "\n" + BlockEnd + "\n"
	if got := readMD(t, dir); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestEnsureManagedBlockAppendsAndReplacesOnlyTheBlock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "AGENTS.md")
	mine := "# My rules\n\nAlways write tests.\r\nNo trailing newline here"
	if err := os.WriteFile(path, []byte(mine), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := EnsureManagedBlock(dir, nudge); err != nil {
		t.Fatal(err)
	}
	appended := mine + "\n\n" + BlockBegin + "\n" + nudge + "\n" + BlockEnd + "\n"
	if got := readMD(t, dir); got != appended {
		t.Fatalf("append\n got %q\nwant %q", got, appended)
	}

	// The user adds text after the block; a new body replaces the block only.
	after := "\n## Written after leo's block\n- keep me  \n"
	if err := os.WriteFile(path, []byte(appended+after), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := EnsureManagedBlock(dir, "new body\nline two\n"); err != nil {
		t.Fatal(err)
	}
	replaced := mine + "\n\n" + BlockBegin + "\nnew body\nline two\n" + BlockEnd + "\n" + after
	if got := readMD(t, dir); got != replaced {
		t.Fatalf("replace\n got %q\nwant %q", got, replaced)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}

	// Same body: not written at all.
	harnesstest.NotRewritten(t, path, func() error { return EnsureManagedBlock(dir, "new body\nline two\n") })

	// Empty body: the block goes, everything else stays.
	if err := EnsureManagedBlock(dir, ""); err != nil {
		t.Fatal(err)
	}
	if got, want := readMD(t, dir), mine+"\n\n"+after; got != want {
		t.Fatalf("remove\n got %q\nwant %q", got, want)
	}
}

func TestEnsureManagedBlockRefusesAHalfBlock(t *testing.T) {
	dir := t.TempDir()
	broken := "intro\n" + BlockBegin + "\nold\n(no end marker)\n"
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	err := EnsureManagedBlock(dir, nudge)
	if err == nil || !strings.Contains(err.Error(), "AGENTS.md") {
		t.Fatalf("EnsureManagedBlock on a half block = %v", err)
	}
	if got := readMD(t, dir); got != broken {
		t.Fatal("a file with a half block was changed")
	}
}

func TestEnsureManagedBlockDefaultDir(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if err := EnsureManagedBlock("", nudge); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(xdg, "opencode", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if got, want := ConfigDir(map[string]string{"XDG_CONFIG_HOME": "", "HOME": home}), filepath.Join(home, ".config", "opencode"); got != want {
		t.Fatalf("ConfigDir without XDG = %s, want %s", got, want)
	}
}

func TestEnsureManagedBlockEmptyBodyNoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opencode")
	if err := EnsureManagedBlock(dir, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("removing a block from no file created something")
	}
}

func readMD(t *testing.T, dir string) string {
	t.Helper()
	return harnesstest.ReadFile(t, filepath.Join(dir, "AGENTS.md"))
}
