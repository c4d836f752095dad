package binpath_test

import (
	"errors"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
)

// custom is codex in every respect but its name and its own not-found
// error: binpath gives whatever error the adapter names, for any harness.
type custom struct{ harness.Harness }

var errCustomMissing = errors.New("custom CLI missing: see its docs")

func (custom) Name() string    { return "custom" }
func (custom) NotFound() error { return errCustomMissing }

func init() {
	codex, _ := harness.Lookup("codex")
	harness.Register(custom{codex})
}

// A missing harness CLI is the error its adapter gives (claude's contract
// text, byte for byte), else harness_not_found naming program and PATH.
func TestLookupHarnessAsksTheAdapter(t *testing.T) {
	dir := t.TempDir()
	r := binpath.Resolver{Getenv: func(k string) string { return map[string]string{"PATH": dir}[k] }}

	_, err := r.LookupHarness("claude", "claude")
	if !api.HasCode(err, api.CodeClaudeNotFound) || err.Error() != "claude CLI not found; install it from https://claude.com/claude-code" {
		t.Errorf("claude missing: %v (code %s)", err, api.CodeOf(err))
	}
	_, err = r.LookupHarness("codex", "codex")
	if want := `codex CLI not found (harness "codex") on PATH ` + dir + `: install it or add its directory to PATH`; !api.HasCode(err, api.CodeHarnessNotFound) || err.Error() != want {
		t.Errorf("codex missing: %v (code %s), want harness_not_found %q", err, api.CodeOf(err), want)
	}
	if _, err = r.LookupHarness("codex", "custom"); !errors.Is(err, errCustomMissing) {
		t.Errorf("custom missing: %v, want the adapter's own error", err)
	}
}
