package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

var (
	fakeOnce sync.Once
	fakeDir  string
	fakeErr  error
)

// FakeHarnessDir builds internal/testutil/fakeharness once per test binary
// and returns a directory holding the binary of every registered harness
// (symlinks to it; the fake picks its role from the name it was run as). Put the
// directory first on PATH.
func FakeHarnessDir(t testing.TB) string {
	t.Helper()
	fakeOnce.Do(func() { fakeDir, fakeErr = buildFakeHarness() })
	if fakeErr != nil {
		t.Fatalf("building the fake harness: %v", fakeErr)
	}
	return fakeDir
}

// buildFakeHarness builds into a per-process temp dir. The dir outlives the
// test binary (there is no per-binary cleanup hook), so each build first
// removes the dirs of test processes that are gone.
func buildFakeHarness() (string, error) {
	hermetic.RemoveStale("leo-fakeharness-")
	dir, err := os.MkdirTemp("", fmt.Sprintf("leo-fakeharness-%d-", os.Getpid()))
	if err != nil {
		return "", err
	}
	if err := GoBuild("github.com/blackpaw-studio/leo/internal/testutil/fakeharness", filepath.Join(dir, "fakeharness")); err != nil {
		return "", err
	}
	for _, name := range FakeHarnessNames() {
		if err := os.Symlink("fakeharness", filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// GoBuild builds the package importPath into the executable out, without
// cgo, with the toolchain running the tests: `go test` puts its own
// GOROOT/bin first on the PATH the test binary starts with.
func GoBuild(importPath, out string) error {
	goBin, err := hermetic.LookPathIn("go", hermetic.StartPATH())
	if err != nil {
		return fmt.Errorf("go build %s: go toolchain not found: %w", importPath, err)
	}
	cmd := exec.Command(goBin, "build", "-o", out, importPath)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", importPath, err, output)
	}
	return nil
}
