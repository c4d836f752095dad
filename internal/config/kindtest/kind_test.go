// Package kindtest checks the SupportsKind errors of the config layer. Every
// built-in harness runs every primitive, so the check is dead code for them;
// this test binary registers one more harness that runs none. It lives in
// its own package so the extra harness never shows up in the
// "(available: …)" list that the main config tests assert literally.
package kindtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
)

// limited is claude in every respect except its name and SupportsKind.
type limited struct{ harness.Harness }

func (limited) Name() string                   { return "limited" }
func (limited) SupportsKind(harness.Kind) bool { return false }

func TestMain(m *testing.M) {
	claude, ok := harness.Lookup("claude")
	if !ok {
		panic("harness/all did not register claude")
	}
	harness.Register(limited{claude})
	os.Exit(m.Run())
}

func TestSupportsKindTexts(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "p.md"), []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := `
templates:
  foo:
    harness: limited
  ok: {}
tasks:
  once:
    harness: limited
    prompt_file: p.md
  foo:
    harness: limited
    runtime: persistent
    prompt_file: p.md
  into:
    runtime: persistent
    template: foo
    prompt_file: p.md
  fine:
    runtime: persistent
    template: ok
    prompt_file: p.md
`
	c, err := config.Parse([]byte(yaml), filepath.Join(dir, "leo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tasks.foo.harness: the limited harness cannot run persistent tasks yet (persistent tasks deliver into agents) — see docs/configuration/harnesses.md",
		"tasks.into.template: templates.foo uses the limited harness, which cannot run persistent tasks yet (persistent tasks deliver into agents) — see docs/configuration/harnesses.md",
		"tasks.once.harness: the limited harness cannot run scheduled tasks yet (scheduled tasks run it headless) — see docs/configuration/harnesses.md",
		"templates.foo.harness: the limited harness cannot run ephemeral agents yet (only scheduled tasks) — see docs/configuration/harnesses.md",
	}
	err = c.Validate()
	if err == nil {
		t.Fatal("Validate accepted kinds the harness cannot run")
	}
	got := strings.Split(err.Error(), "\n")
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if _, err := c.ResolveTemplate("foo"); err == nil || err.Error() != want[3] {
		t.Errorf("ResolveTemplate: %v", err)
	}
}
