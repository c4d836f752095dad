package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// managedHome is a home with a valid marker (read as on macOS): self_path
// is a stand-in leo, tmux_path <root>/<tmuxDir>/tmux runs the real tmux,
// and env.PATH is a directory of its own.
type managedHome struct {
	h        home.Home
	state    managed.State
	self     string
	tmuxRoot string
	markPATH string
}

func newManagedHome(t *testing.T, tmuxDir string) managedHome {
	t.Helper()
	h := newHome(t)
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is required: %v", err)
	}
	app := t.TempDir()
	m := managedHome{h: h, self: filepath.Join(app, "bin", "leo"), tmuxRoot: filepath.Join(app, "tmux"), markPATH: t.TempDir()}
	writeExe(t, m.self, "#!/bin/sh\n")
	tmuxPath := m.addTmux(t, tmuxDir, real)
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{
		"version": 1, "manager": "Leo.app", "launchd_label": "studio.blackpaw.leo.daemon",
		"self_path": m.self, "tmux_path": tmuxPath, "env": map[string]string{"PATH": m.markPATH},
	})
	writeFile(t, h.MarkerPath(), string(data))
	m.state = managed.Read(h, managed.Platform{GOOS: "darwin"})
	if !m.state.Managed() {
		t.Fatalf("marker not valid: %s", m.state.Warning())
	}
	return m
}

// addTmux makes <root>/<dir>/tmux, a copy that runs the real tmux.
func (m managedHome) addTmux(t *testing.T, dir, real string) string {
	p := filepath.Join(m.tmuxRoot, dir, "tmux")
	writeExe(t, p, fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"\n", real))
	return p
}

func writeExe(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (m managedHome) options(t *testing.T, fake *daemontest.Agents, deps *atomic.Pointer[daemon.AgentDeps], log *lockedBuffer) daemon.Options {
	opts := options(t, m.h, fake, deps)
	opts.Managed = &m.state
	opts.Stderr = log
	return opts
}

// A managed daemon with no leo.yaml writes the wizard's default and
// starts; agents get self_path as leo's binary and the marker's PATH
// first; tmux is tmux_path, not the tmux on PATH.
func TestManagedDaemonFirstStartAndBinaries(t *testing.T) {
	m := newManagedHome(t, "3.6a")
	os.Remove(m.h.ConfigPath)
	fake := daemontest.New()
	deps := &atomic.Pointer[daemon.AgentDeps]{}
	var log lockedBuffer
	r := start(t, m.options(t, fake, deps, &log), fake)
	r.WaitReady(t, 10*time.Second)

	data, err := os.ReadFile(m.h.ConfigPath)
	if err != nil || !bytes.Equal(data, config.DefaultConfig()) {
		t.Fatalf("config after a managed first start: %v\n%s", err, data)
	}
	if want := "managed install: no leo.yaml found; created default config at " + m.h.ConfigPath; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
	d := deps.Load()
	if d.LeoBinary != m.self {
		t.Errorf("LeoBinary = %q, want self_path %q", d.LeoBinary, m.self)
	}
	if !strings.HasPrefix(d.Resolver.SearchPath(), m.markPATH+string(os.PathListSeparator)) {
		t.Errorf("search PATH %q does not start with the marker's %q", d.Resolver.SearchPath(), m.markPATH)
	}
	if want := filepath.Join(m.tmuxRoot, "3.6a", "tmux"); d.Tmux.Binary() != want {
		t.Errorf("tmux = %q, want tmux_path %q", d.Tmux.Binary(), want)
	}
}

// A -L server of another version than tmux_path runs: the daemon uses its
// matching copy and logs "tmux upgrade pending"; with no matching copy it
// logs an error, falls back to tmux_path and /health reports it. The
// server is never killed.
func TestManagedDaemonTmuxVersionGuard(t *testing.T) {
	real, _ := exec.LookPath("tmux")
	for _, withCopy := range []bool{true, false} {
		t.Run(fmt.Sprintf("matching copy %v", withCopy), func(t *testing.T) {
			m := newManagedHome(t, "99.9")
			srv := testutil.NewTmux(t, func(o *tmux.Options) {
				o.Socket = m.h.TmuxSocket(home.DefaultRoot(nil))
				o.Binary = real
			})
			v, err := srv.Version(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			running := strings.TrimPrefix(v.Raw, "tmux ")
			if withCopy {
				m.addTmux(t, running, real)
			}
			pane, err := srv.NewSession(context.Background(), tmux.SessionSpec{Name: "leo-survivor", Dir: t.TempDir(), Argv: []string{"cat"}})
			if err != nil {
				t.Fatal(err)
			}
			fake := daemontest.New()
			deps := &atomic.Pointer[daemon.AgentDeps]{}
			var log lockedBuffer
			r := start(t, m.options(t, fake, deps, &log), fake)
			r.WaitReady(t, 10*time.Second)

			tmuxPath := filepath.Join(m.tmuxRoot, "99.9", "tmux")
			health, err := r.Client.Health(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			problems := strings.Join(health.Problems, "\n")
			if withCopy {
				if want := filepath.Join(m.tmuxRoot, running, "tmux"); deps.Load().Tmux.Binary() != want {
					t.Errorf("tmux = %q, want the server's copy %q", deps.Load().Tmux.Binary(), want)
				}
				if !strings.Contains(log.String(), `msg="tmux upgrade pending"`) {
					t.Errorf("log lacks tmux upgrade pending:\n%s", log.String())
				}
				if strings.Contains(problems, "tmux") {
					t.Errorf("health problems for a pending upgrade: %q", problems)
				}
			} else {
				if deps.Load().Tmux.Binary() != tmuxPath {
					t.Errorf("tmux = %q, want tmux_path %q", deps.Load().Tmux.Binary(), tmuxPath)
				}
				if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "runs tmux "+running+" but") {
					t.Errorf("log lacks the guard's error:\n%s", log.String())
				}
				if !strings.Contains(problems, "runs tmux "+running+" but") {
					t.Errorf("health problems %q lack the guard's problem", problems)
				}
			}
			if _, err := srv.PaneInfo(context.Background(), pane.PaneID); err != nil {
				t.Errorf("the running server's session is gone: %v", err)
			}
		})
	}
}

// The daemon reads the marker itself when the caller did not: on macOS it
// obeys it; elsewhere it is ignored with one warning, and the daemon runs
// unmanaged.
func TestDaemonReadsTheMarkerItself(t *testing.T) {
	m := newManagedHome(t, "3.6a")
	fake := daemontest.New()
	deps := &atomic.Pointer[daemon.AgentDeps]{}
	var log lockedBuffer
	opts := m.options(t, fake, deps, &log)
	opts.Managed = nil
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)
	if obeyed, want := deps.Load().LeoBinary == m.self, runtime.GOOS == "darwin"; obeyed != want {
		t.Errorf("marker obeyed = %v on %s, want %v", obeyed, runtime.GOOS, want)
	}
	if got := strings.Count(log.String(), "ignoring the managed-install marker"); got > 1 {
		t.Errorf("%d marker warnings, want at most one per process:\n%s", got, log.String())
	}
}
