package handover

import (
	"path/filepath"
	"strings"
	"testing"
)

// execVersion runs `<bin> version --json` with an empty environment.
func TestExecVersion(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "leo")
	writeFile(t, good, "#!/bin/sh\n[ \"$1 $2\" = \"version --json\" ] || exit 9\n[ -z \"$HOME\" ] || exit 8\necho '{\"version\": \"1.3.0\", \"go\": \"go1\"}'\n", 0o755)
	v, err := execVersion(t.Context(), good)
	if err != nil || v != "1.3.0" {
		t.Fatalf("version %q, %v", v, err)
	}
	bad := filepath.Join(dir, "old")
	writeFile(t, bad, "#!/bin/sh\necho 'unknown flag: --json' >&2\nexit 2\n", 0o755)
	if _, err := execVersion(t.Context(), bad); err == nil {
		t.Fatal("a failing binary gave a version")
	}
	// Through the release: an unreadable version is a warning, not a stop.
	w := managedWorld(t)
	o := w.opts()
	o.BinaryVersion = nil
	res, err := Run(t.Context(), o, toCLI)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Warning, "could not tell the version") {
		t.Fatalf("warning %q", res.Warning)
	}
}
