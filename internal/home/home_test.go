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
	for _, p := range []string{h.LockPath(), h.SocketPath(), h.TokenPath(), h.AgentsPath(), h.TaskHistoryPath(), h.LogsDir(), h.ServiceLogPath(), h.MarkerPath()} {
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
