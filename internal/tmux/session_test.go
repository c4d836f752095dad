package tmux_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// both runs f against a control-mode server and an exec-only one, since
// either transport must behave the same.
func both(t *testing.T, f func(t *testing.T, s *tmux.Server)) {
	t.Run("control", func(t *testing.T) { t.Parallel(); f(t, testutil.NewTmux(t)) })
	t.Run("exec", func(t *testing.T) { t.Parallel(); f(t, testutil.NewTmux(t, testutil.WithoutControl())) })
}

func TestExactSessionTargets(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		c := ctx(t)
		if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-ab", Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]bool{"leo-ab": true, "leo-a": false, "leo": false, "leo-abc": false} {
			got, err := s.HasSession(c, name)
			if err != nil {
				t.Fatalf("HasSession(%q): %v", name, err)
			}
			if got != want {
				t.Errorf("HasSession(%q) = %v, want %v", name, got, want)
			}
		}
		if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-ab", Argv: []string{"sleep", "600"}}); !errors.Is(err, tmux.ErrSessionExists) {
			t.Fatalf("second leo-ab: %v, want ErrSessionExists", err)
		}
		// A prefix of an existing name is a different session.
		if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-a", Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatalf("leo-a next to leo-ab: %v", err)
		}
		if err := s.KillSession(c, "leo-a"); err != nil {
			t.Fatal(err)
		}
		// Killing the prefix must not kill leo-ab, and is not an error.
		if err := s.KillSession(c, "leo-a"); err != nil {
			t.Fatalf("KillSession(leo-a): %v", err)
		}
		if ok, _ := s.HasSession(c, "leo-ab"); !ok {
			t.Fatal("KillSession(leo-a) killed leo-ab")
		}
		if err := s.KillSession(c, "leo-ab"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.HasSession(c, "leo-ab"); ok {
			t.Fatal("leo-ab still there after KillSession")
		}
	})
}

func TestNoServer(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		c := ctx(t)
		if up, err := s.Running(c); err != nil || up {
			t.Fatalf("Running = %v, %v; want false, nil", up, err)
		}
		if ok, err := s.HasSession(c, "leo-x"); err != nil || ok {
			t.Fatalf("HasSession = %v, %v", ok, err)
		}
		if panes, err := s.ListPanes(c); err != nil || len(panes) != 0 {
			t.Fatalf("ListPanes = %v, %v", panes, err)
		}
		if err := s.KillSession(c, "leo-x"); err != nil {
			t.Fatalf("KillSession: %v", err)
		}
		_, err := s.Capture(c, "%0")
		if !tmux.IsNotFound(err) {
			t.Fatalf("Capture with no server: %v, want not found", err)
		}
		if up, _ := s.Running(c); up {
			t.Fatal("queries started a server")
		}
	})
}

func TestEnvReachesPaneNotCommandLine(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		c := ctx(t)
		dir := t.TempDir()
		out := filepath.Join(dir, "env.out")
		secret := "s3cr3t value with spaces $HOME \"q\" ~x"
		p, err := s.NewSession(c, tmux.SessionSpec{
			Name: "leo-env", Dir: dir,
			Argv: []string{"sh", "-c", `printf '%s\n%s\n' "$LEO_SECRET" "$PWD" > env.out; exec sleep 600`},
			Env:  map[string]string{"LEO_SECRET": secret},
		})
		if err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 5*time.Second, func() bool {
			b, _ := os.ReadFile(out)
			return strings.Count(string(b), "\n") == 2
		}, "the pane to write env.out")
		b, _ := os.ReadFile(out)
		if want := secret + "\n" + dir + "\n"; string(b) != want {
			t.Fatalf("pane saw %q, want %q", b, want)
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cmdline), "s3cr3t") {
			t.Fatalf("secret on the pane's command line: %q", cmdline)
		}
		raw := rawTmux(t, s, "display-message", "-p", "-t", p.PaneID, "#{pane_start_command}")
		if strings.Contains(raw, "s3cr3t") {
			t.Fatalf("secret in pane_start_command: %q", raw)
		}
	})
}
