package testutil

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// ToolPATH is a hermetic PATH: the directories first (the test's fakes),
// then the directory of the tools tests drive (hermetic.Dir); never a
// system directory.
func ToolPATH(tb testing.TB, first ...string) string {
	tb.Helper()
	return hermetic.PATH(tb, first...)
}

// CheckHarnessPATH reports an error if a harness binary (claude, codex,
// opencode) resolves on path anywhere but in one of the fakes directories:
// the rule every test PATH keeps.
func CheckHarnessPATH(path string, fakes ...string) error {
	var errs []error
	for _, name := range FakeHarnessNames() {
		p, err := hermetic.LookPathIn(name, path)
		if err != nil {
			continue
		}
		if !slices.Contains(fakes, filepath.Dir(p)) {
			errs = append(errs, fmt.Errorf("%s resolves to %s, outside the test's fakes %v (PATH %s)", name, p, fakes, path))
		}
	}
	return errors.Join(errs...)
}
