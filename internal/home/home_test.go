package home

import (
	"path/filepath"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolvePrecedence(t *testing.T) {
	e := env(map[string]string{"HOME": "/u/me", "LEO_HOME": "/srv/leo"})

	h, err := Resolve("", env(map[string]string{"HOME": "/u/me"}))
	if err != nil || h.Root != "/u/me/.leo" || h.ConfigPath != "/u/me/.leo/leo.yaml" || h.ExplicitConfig {
		t.Errorf("default home = %+v, %v", h, err)
	}
	h, err = Resolve("", e)
	if err != nil || h.Root != "/srv/leo" || h.ExplicitConfig {
		t.Errorf("LEO_HOME home = %+v, %v", h, err)
	}
	h, err = Resolve("~/x/leo.yaml", e)
	if err != nil || h.Root != "/u/me/x" || h.ConfigPath != "/u/me/x/leo.yaml" || !h.ExplicitConfig {
		t.Errorf("--config home = %+v, %v", h, err)
	}
	h, err = Resolve("", env(map[string]string{"HOME": "/u/me", "LEO_HOME": "~/iso"}))
	if err != nil || h.Root != "/u/me/iso" {
		t.Errorf("LEO_HOME with ~ = %+v, %v", h, err)
	}
}

func TestStatePathsStayUnderTheHome(t *testing.T) {
	h := Home{Root: "/h"}
	for _, p := range []string{h.LockPath(), h.SocketPath(), h.TokenPath(), h.AgentsPath(), h.TaskHistoryDir(), h.TaskPendingPath(), h.LogsDir(), h.ServiceLogPath(), h.MarkerPath()} {
		if filepath.Dir(p) != "/h/state" && filepath.Dir(p) != "/h" {
			t.Errorf("%s is not under /h/state", p)
		}
	}
}

// Isolated homes never share a tmux server; the default home keeps "leo".
func TestTmuxSocketPerHome(t *testing.T) {
	def := "/u/me/.leo"
	if got := (Home{Root: def}).TmuxSocket(def); got != "leo" {
		t.Errorf("default home socket = %q, want leo", got)
	}
	a := Home{Root: "/tmp/a"}.TmuxSocket(def)
	b := Home{Root: "/tmp/b"}.TmuxSocket(def)
	if a == b || a == "leo" || b == "leo" {
		t.Errorf("isolated homes share a socket: %q %q", a, b)
	}
	if a != (Home{Root: "/tmp/a"}).TmuxSocket(def) {
		t.Error("socket name is not stable for one home")
	}
}

// The socket name of a home is part of leo's interface with running agents:
// a daemon after an upgrade must find the tmux server the previous one
// started, so the name (FNV-1a of the root) never changes.
func TestTmuxSocketNameIsStable(t *testing.T) {
	if got := (Home{Root: "/tmp/a"}).TmuxSocket("/u/me/.leo"); got != "leo-1828ba67" {
		t.Fatalf("socket for /tmp/a = %q, want leo-1828ba67", got)
	}
}

// DefaultRoot is ~/.leo whatever LEO_HOME says: it names the home that
// keeps the plain "leo" tmux server.
func TestDefaultRootIgnoresLEOHOME(t *testing.T) {
	env := map[string]string{"HOME": "/u/me", "LEO_HOME": "/elsewhere"}
	if got := DefaultRoot(func(k string) string { return env[k] }); got != "/u/me/.leo" {
		t.Fatalf("DefaultRoot = %q, want /u/me/.leo", got)
	}
	h, err := Resolve("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got := h.TmuxSocket(DefaultRoot(func(k string) string { return env[k] })); got == "leo" {
		t.Fatalf("a LEO_HOME home got the default socket")
	}
}
