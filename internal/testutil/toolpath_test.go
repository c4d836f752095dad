package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

func TestMain(m *testing.M) { os.Exit(hermetic.Main(m)) }

// systemWithHarnesses is a stand-in for /usr/bin on a machine where every
// harness CLI is installed system-wide: each one fails loudly if run.
func systemWithHarnesses(t *testing.T) string {
	t.Helper()
	sys := t.TempDir()
	for _, name := range FakeHarnessNames() {
		script := "#!/bin/sh\necho 'the system " + name + " ran in a test' >&2\nexit 97\n"
		if err := os.WriteFile(filepath.Join(sys, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return sys
}

// TestPATHRuleKeepsSystemHarnessesOut: with claude, codex and opencode in
// a "system" directory of the PATH the tests start with, the tool
// directory links tmux but no harness, the test binary's own PATH (set by
// Main) finds no harness, and the check names a PATH that would.
func TestPATHRuleKeepsSystemHarnessesOut(t *testing.T) {
	sys := systemWithHarnesses(t)
	start := sys + string(os.PathListSeparator) + hermetic.StartPATH()
	if err := CheckHarnessPATH(start); err == nil || !strings.Contains(err.Error(), filepath.Join(sys, "claude")) {
		t.Fatalf("the check missed claude in %s: %v", sys, err)
	}
	tools := t.TempDir()
	if err := hermetic.Link(tools, start, hermetic.Tools); err != nil {
		t.Fatal(err)
	}
	if err := CheckHarnessPATH(tools); err != nil {
		t.Errorf("tool dir: %v", err)
	}
	if _, err := hermetic.LookPathIn("tmux", tools); err != nil {
		t.Errorf("tool dir has no tmux: %v", err)
	}
	for _, name := range FakeHarnessNames() {
		if slices.Contains(hermetic.Tools, name) {
			t.Errorf("hermetic.Tools lists the harness binary %q", name)
		}
	}
	if err := CheckHarnessPATH(os.Getenv("PATH")); err != nil {
		t.Errorf("the test binary's PATH: %v", err)
	}
	if p := os.Getenv("PATH"); p != hermetic.Dir(t) {
		t.Errorf("the test binary's PATH is %q, want only the tool dir %q", p, hermetic.Dir(t))
	}
	fakes := FakeHarnessDir(t)
	path := ToolPATH(t, fakes)
	if err := CheckHarnessPATH(path, fakes); err != nil {
		t.Errorf("fakes first: %v", err)
	}
	if err := CheckHarnessPATH(path); err == nil {
		t.Error("the check allowed the fakes without being told they are fakes")
	}
}

// TestTmuxServersLeaveNoSocketFile: kill-server leaves the socket file in
// $TMUX_TMPDIR; a test's server (NewTmux, or one run by other means under
// KillTmuxAtEnd) leaves nothing once its test ends.
func TestTmuxServersLeaveNoSocketFile(t *testing.T) {
	var files []string
	t.Run("servers", func(t *testing.T) {
		s := NewTmux(t, WithoutControl())
		if _, err := s.NewSession(t.Context(), tmux.SessionSpec{Name: "leo-sock", Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
		other := UniqueSocket()
		KillTmuxAtEnd(t, other)
		if out, err := exec.Command("tmux", "-L", other, "-f", "/dev/null", "new-session", "-d", "sleep 600").CombinedOutput(); err != nil {
			t.Fatalf("tmux new-session: %v %s", err, out)
		}
		files = []string{s.SocketPath(), tmux.SocketPathOf(other, os.Environ())}
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("no socket file where tmux keeps it: %v", err)
			}
		}
	})
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is left behind", f)
		}
	}
}
