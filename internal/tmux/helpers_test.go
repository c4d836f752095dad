package tmux_test

import (
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/tmux"
)

// rawTmux runs tmux directly against s's socket (an independent observer).
func rawTmux(t testing.TB, s *tmux.Server, args ...string) string {
	t.Helper()
	cmd := osexec.Command(s.Binary(), append([]string{"-L", s.Socket(), "-f", "/dev/null"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return strings.TrimSuffix(string(out), "\n")
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }
