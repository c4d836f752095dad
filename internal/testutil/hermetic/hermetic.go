// Package hermetic keeps the machine's programs out of the tests: a test
// PATH is the test's own fakes, then a directory of symlinks to exactly
// the tools tests drive (Dir), never a system directory. A claude, codex
// or opencode installed in /usr/bin is then never what a test runs.
//
// It has no leo imports, so every test package can use it, the adapters'
// and tmux's own included; internal/testutil builds on it.
package hermetic

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Tools are the only programs of the machine a test may run: the ones the
// tests drive (tmux, git, go, chromium, systemd-analyze, sqlite3; node
// and npm, which the real CLIs of e2e/real run on and install plugins
// with) and the utilities the tests' shell scripts call. Missing tools are left out (the
// test that needs one skips or fails by its own rule). Never a harness:
// tests run only its fake.
var Tools = []string{
	"tmux", "git", "go", "chromium", "chromium-browser", "google-chrome", "systemd-analyze", "sqlite3", "node", "npm", "npx", "rg",
	"sh", "bash", "dash", "env",
	"basename", "cat", "chmod", "cp", "cut", "date", "dirname", "echo", "false", "find", "grep",
	"head", "id", "kill", "ln", "ls", "mkdir", "mktemp", "mv", "od", "printf", "ps", "readlink",
	"realpath", "rm", "sed", "sleep", "sort", "stat", "tail", "tee", "touch", "tr", "true", "uname",
	"wc", "xargs", "setsid", "nohup", "timeout", "awk", "seq", "expr", "test", "[", "yes", "diff",
	"cmp", "which", "whoami", "hostname", "nproc", "pgrep", "pkill",
}

// startPATH is the PATH the test binary started with, before Main made
// the process's PATH hermetic: where the tools are looked up.
var startPATH = os.Getenv("PATH")

// StartPATH is the PATH the test binary started with (`go test` puts its
// GOROOT/bin first). Only for finding a tool; never a test's PATH.
func StartPATH() string { return startPATH }

var (
	once   sync.Once
	dir    string
	dirErr error
)

// Dir returns the test binary's directory of Tools (symlinks, made once;
// Main removes it, and a later one removes those of test binaries that
// are gone).
func Dir(tb testing.TB) string {
	tb.Helper()
	d, err := shared()
	if err != nil {
		tb.Fatalf("making the test tool dir: %v", err)
	}
	return d
}

func shared() (string, error) {
	once.Do(func() {
		RemoveStale("leo-testtools-")
		dir, dirErr = os.MkdirTemp("", fmt.Sprintf("leo-testtools-%d-", os.Getpid()))
		if dirErr == nil {
			dirErr = Link(dir, startPATH, Tools)
		}
	})
	return dir, dirErr
}

// Link fills dir with a symlink to each of tools found on searchPATH.
func Link(dir, searchPATH string, tools []string) error {
	for _, name := range tools {
		p, err := LookPathIn(name, searchPATH)
		if err != nil {
			continue
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// PATH is a hermetic PATH: the directories first (the test's fakes), then
// Dir.
func PATH(tb testing.TB, first ...string) string {
	tb.Helper()
	return strings.Join(append(slices.Clone(first), Dir(tb)), string(os.PathListSeparator))
}

// Main runs a test binary with a hermetic process PATH (Dir only), so what
// a test looks up on its own PATH (os.Getenv("PATH"), a zero-value
// resolver, the panes of a tmux server it starts) finds nothing of the
// machine's but the tools; tests put their fakes in front. Every test
// package that runs programs calls it from TestMain.
func Main(m *testing.M) int {
	d, err := shared()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermetic.Main: making the test tool dir: %v\n", err)
		return 2
	}
	os.Setenv("PATH", d)
	code := m.Run()
	_ = os.RemoveAll(d)
	return code
}

// LookPathIn is exec.LookPath on path instead of the process's PATH.
func LookPathIn(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: fs.ErrNotExist}
}

// RemoveStale removes temp dirs named prefix<pid>-… of test processes that
// are gone (such a dir outlives a test binary killed before its cleanup).
func RemoveStale(prefix string) {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, m := range matches {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(m), prefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(m)
		}
	}
}
