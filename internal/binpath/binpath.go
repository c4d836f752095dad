// Package binpath is the one resolver for external programs (claude, codex,
// opencode, tmux). It looks a name up on an optional PATH first (the managed
// marker's env.PATH), then on leo's own PATH, every time it is asked, so a
// program installed while the daemon runs is found without a restart.
package binpath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Resolver finds executables. The zero value searches leo's own PATH.
type Resolver struct {
	// PathFirst is searched before the process PATH (e.g. the marker's PATH).
	PathFirst string
	// Getenv reads the process environment; nil means os.Getenv.
	Getenv func(string) string
}

// ErrNotFound is returned (wrapped) when no executable of that name exists.
var ErrNotFound = errors.New("executable not found")

// Lookup returns the absolute path of name. A name with a slash is checked as is.
func (r Resolver) Lookup(name string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if isExecutable(name) {
			return filepath.Abs(name)
		}
		return "", &NotFoundError{Name: name}
	}
	for _, dir := range filepath.SplitList(r.SearchPath()) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", &NotFoundError{Name: name}
}

// SearchPath is the PATH the resolver searches, PathFirst leading. Child
// processes leo starts get this PATH too, so they find what leo found.
func (r Resolver) SearchPath() string {
	getenv := r.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	own := getenv("PATH")
	switch {
	case r.PathFirst == "":
		return own
	case own == "":
		return r.PathFirst
	default:
		return r.PathFirst + string(os.PathListSeparator) + own
	}
}

// NotFoundError names the missing program.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return e.Name + ": " + ErrNotFound.Error() }
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// LookupHarness finds a harness's program, every time (installing it
// needs no restart). A missing one is the one error every launch gives:
// the adapter's own when it has one (harness.NotFounder: claude's
// claude_not_found with the contract text of docs/managed-install.md),
// harness_not_found naming the program and the PATH otherwise.
func (r Resolver) LookupHarness(binary, harnessName string) (string, error) {
	p, err := r.Lookup(binary)
	if err == nil {
		return p, nil
	}
	if h, ok := harness.Lookup(harnessName); ok {
		if nf, ok := h.(harness.NotFounder); ok {
			return "", nf.NotFound()
		}
	}
	return "", api.Errorf(api.CodeHarnessNotFound, "%s CLI not found (harness %q) on PATH %s: install it or add its directory to PATH", binary, harnessName, r.SearchPath())
}
