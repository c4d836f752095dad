package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func TestSaveWritesAtomically0600(t *testing.T) {
	h := newTestHome(t)
	path := filepath.Join(h.User, "fresh", "home", "leo.yaml") // parents missing
	data := DefaultConfig()
	if err := Save(path, data, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("content %q, %v", got, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	dst, _ := os.Stat(filepath.Dir(path))
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("parent mode %v, want 0700", dst.Mode().Perm())
	}

	// A second save replaces the file through a rename: a new inode, and
	// no temp file left behind.
	before := inode(t, path)
	next := append(append([]byte{}, data...), []byte("# edited\n")...)
	if err := os.Chmod(path, 0o644); err != nil { // a widened file is narrowed again
		t.Fatal(err)
	}
	if err := Save(path, next, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
	if inode(t, path) == before {
		t.Error("file was rewritten in place, not renamed over")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite %v", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

func TestSaveRejectsInvalidConfigAndKeepsTheOldFile(t *testing.T) {
	h := newTestHome(t)
	old := []byte("# my config, exactly as I wrote it\ntemplates:\n  assistant: {}   # keep this comment\n")
	if err := os.WriteFile(h.Path, old, 0o640); err != nil {
		t.Fatal(err)
	}
	before := inode(t, h.Path)
	bad := map[string]string{
		"validation": "templates:\n  foo:\n    harness: codex\n    channels: [plugin:x@y]\nproviders: {}\n",
		"syntax":     "templates:\n  foo: [\n",
		"not a map":  "- a\n",
	}
	for name, data := range bad {
		err := Save(h.Path, []byte(data), WithGetenv(h.getenv))
		var ve *ValidationError
		var pe *ParseError
		if err == nil || !(errors.As(err, &ve) || errors.As(err, &pe)) {
			t.Errorf("%s: Save = %v", name, err)
		}
		got, _ := os.ReadFile(h.Path)
		if !bytes.Equal(got, old) {
			t.Errorf("%s: old file changed:\n%s", name, got)
		}
		st, _ := os.Stat(h.Path)
		if st.Mode().Perm() != 0o640 || inode(t, h.Path) != before {
			t.Errorf("%s: old file touched (mode %v)", name, st.Mode().Perm())
		}
	}
	err := Save(h.Path, []byte(bad["validation"]), WithGetenv(h.getenv))
	for _, want := range []string{
		"providers: this section has been removed — see docs/configuration/harnesses.md",
		"templates.foo.channels: the codex harness does not support channel plugins; use leo's MCP tools for messaging",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Save error lacks %q:\n%v", want, err)
		}
	}
	entries, _ := os.ReadDir(h.Leo)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// Warnings do not block a save.
func TestSaveAcceptsWarnings(t *testing.T) {
	h := newTestHome(t)
	data := []byte("templates:\n  a:\n    harness: codex\n    max_turns: 5\n")
	if err := Save(h.Path, data, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
}

// The setup wizard's default config is valid in any home and has what the
// managed first start promises: an assistant template, the default model and
// turn limit, and the web UI on loopback port 8370.
func TestDefaultConfig(t *testing.T) {
	h := newTestHome(t)
	c := h.parse(t, string(DefaultConfig()))
	wantClean(t, c)
	r, err := c.ResolveTemplate("assistant")
	if err != nil {
		t.Fatal(err)
	}
	if r.HarnessName != "claude" || r.Model != "sonnet" || r.MaxTurns != 200 {
		t.Errorf("assistant: %s %s %d", r.HarnessName, r.Model, r.MaxTurns)
	}
	if v, _ := r.Options.Bool("remote_control"); !v {
		t.Error("assistant is not remote-controllable")
	}
	if !c.WebEnabled() || c.WebAddr() != "127.0.0.1:8370" {
		t.Errorf("web: %v %s", c.WebEnabled(), c.WebAddr())
	}
	a := DefaultConfig()
	a[0] = 'X'
	if DefaultConfig()[0] == 'X' {
		t.Error("DefaultConfig must return a fresh copy")
	}
}

func TestLoad(t *testing.T) {
	h := newTestHome(t)
	if _, err := Load(h.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	h.file(t, "leo.yaml", "templates:\n  a: {harness: nope}\n")
	c, err := Load(h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != h.Path || c.Home != h.Leo {
		t.Errorf("path %s home %s", c.Path, c.Home)
	}
	if _, err := LoadValid(h.Path, WithGetenv(h.getenv)); err == nil {
		t.Error("LoadValid accepted an invalid config")
	}
}

// The first config is rendered from the harness registry and the adapters'
// schemas: another harness gets no claude option and no claude model, and
// the default config is FirstConfig with the built-in harness and model.
func TestFirstConfigComesFromTheAdapters(t *testing.T) {
	claude, _ := harness.Lookup(harness.Default)
	if got, want := string(DefaultConfig()), string(FirstConfig(harness.Default, harness.DefaultModel(claude), true)); got != want {
		t.Fatalf("DefaultConfig\n%s\nis not FirstConfig of the built-ins\n%s", got, want)
	}
	for _, name := range harness.Names() {
		h := newTestHome(t)
		c := h.parse(t, string(FirstConfig(name, "", false)))
		wantClean(t, c)
		r, err := c.ResolveTemplate("assistant")
		if err != nil {
			t.Fatal(err)
		}
		if r.HarnessName != name || c.WebEnabled() || c.Defaults.Model != "" {
			t.Errorf("%s: harness %s web %v model %q", name, r.HarnessName, c.WebEnabled(), c.Defaults.Model)
		}
		a, _ := harness.Lookup(name)
		for k := range c.Templates["assistant"].HarnessOptions {
			if f, ok := field(a.OptionsSchema(), k); !ok || !f.TemplateOwn {
				t.Errorf("%s: the first config writes %s, which is no template-own option of %s", name, k, name)
			}
		}
	}
}

// Harness knowledge stays in the adapters: the config layer and the setup
// wizard name no claude option or model.
func TestNoClaudeKnowledgeInConfigOrSetup(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	files = append(files, filepath.Join("..", "cli", "setup.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, word := range []string{"remote_control", `"sonnet"`} {
			if strings.Contains(string(data), word) {
				t.Errorf("%s names %s: that is the claude adapter's knowledge", f, word)
			}
		}
	}
}
