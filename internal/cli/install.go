package cli

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
)

// What `leo status` and `leo pair` tell about the install around the
// daemon: whether it is managed, whether its service is registered, where
// its daemon and web UI answer.

// ManagedInfo is whether this leo is a managed install (a valid
// state/managed.json on macOS, docs/managed-install.md).
type ManagedInfo struct {
	Managed bool `json:"managed"`
	// Manager is the marker's "manager" (e.g. "Leo.app").
	Manager string `json:"manager,omitempty"`
	// Label is the marker's launchd_label: the job that runs the daemon.
	Label string `json:"launchd_label,omitempty"`
	// Warning says why a marker that exists is ignored (invalid, or not
	// macOS); the daemon then runs unmanaged.
	Warning string `json:"warning,omitempty"`
	// PathFirst is the marker's env.PATH, searched first for every binary
	// but tmux. Not shown.
	PathFirst string `json:"-"`
}

// managedInfo asks f's DescribeManaged seam; nil (a build without marker
// support) means never managed.
func (f *Factory) managedInfo(h home.Home) ManagedInfo {
	if f.DescribeManaged == nil {
		return ManagedInfo{}
	}
	return f.DescribeManaged(h)
}

// serviceRegisteredOf asks f's ServiceRegistered seam: nil when this build
// or platform cannot tell.
func (f *Factory) serviceRegisteredOf(ctx context.Context, h home.Home) (*bool, string) {
	if f.ServiceRegistered == nil {
		return nil, ""
	}
	reg, err := f.ServiceRegistered(ctx, h)
	if err != nil {
		return nil, err.Error()
	}
	return &reg, ""
}

// daemonState is what status and pair say about this home's daemon.
type daemonState struct {
	// Running: a daemon holds this home's lock or answers on its socket.
	Running bool `json:"running"`
	// Answering: it answered /health just now.
	Answering bool       `json:"answering"`
	PID       int        `json:"pid,omitempty"`
	Version   string     `json:"version,omitempty"`
	Ready     bool       `json:"ready"`
	Started   *time.Time `json:"started,omitempty"`
	// UptimeSeconds is whole seconds since Started.
	UptimeSeconds *int64 `json:"uptime_seconds,omitempty"`
	// Message says why a daemon is not answering.
	Message  string   `json:"message,omitempty"`
	Problems []string `json:"problems,omitempty"`

	health *api.Health
}

// probeDaemon asks h's daemon for /health, once, bounded by the client's
// read timeout. A failure is a state, not an error.
func probeDaemon(ctx context.Context, h home.Home, now time.Time) daemonState {
	c := client.New(h)
	defer c.Close()
	hl, err := c.Health(ctx)
	if err != nil {
		st := daemonState{Message: err.Error()}
		if held, pid, _ := lockfile.Probe(h.LockPath()); held {
			st.Running, st.PID = true, pid
		}
		return st
	}
	st := daemonState{Running: true, Answering: true, PID: hl.PID, Version: hl.Version, Ready: hl.Ready,
		Problems: hl.Problems, health: &hl}
	if !hl.Started.IsZero() {
		started := hl.Started
		up := int64(now.Sub(started) / time.Second)
		st.Started, st.UptimeSeconds = &started, &up
	}
	return st
}

// webState is the web UI and HTTP API: what the config sets, and whether
// the daemon serves it.
type webState struct {
	Enabled bool `json:"enabled"`
	// URL is where a client on this machine reaches it (only when enabled).
	URL string `json:"url,omitempty"`
	// Served: the daemon answered and listens at URL.
	Served bool `json:"served"`
	// Error says why a running daemon does not serve it (the port is
	// taken…).
	Error string `json:"error,omitempty"`
}

func webOf(cfg *config.Config, d daemonState) webState {
	if cfg == nil || !cfg.Web.Enabled {
		return webState{}
	}
	st := webState{Enabled: true, URL: cfg.WebLocalURL()}
	if d.health != nil && d.health.Web != nil {
		st.Served, st.Error = d.health.Web.Serving, d.health.Web.Error
	}
	return st
}

// webLine says where the web UI is and whether it is up.
func webLine(w webState, answering bool) string {
	switch {
	case w.Served:
		return w.URL
	case w.Error != "":
		return w.URL + " — not serving: " + w.Error
	case !answering:
		return w.URL + " (served while the daemon runs)"
	default:
		return w.URL + " — not serving"
	}
}

// claudeOf is the daemon's view of claude when it answered, else a lookup
// here the way the daemon makes it (the marker's PATH first).
func claudeOf(d daemonState, getenv func(string) string, m ManagedInfo) api.ClaudeState {
	if d.health != nil {
		return d.health.Claude
	}
	p, err := binpath.Resolver{PathFirst: m.PathFirst, Getenv: getenv}.Lookup("claude")
	if err != nil {
		return api.ClaudeState{}
	}
	return api.ClaudeState{Found: true, Path: p}
}

// statusConfig reads h's leo.yaml for status and pair: a missing file at
// the default place is no error (found false: nothing is set up yet); a
// missing --config file, an unreadable or invalid one is config_error.
func statusConfig(h home.Home, getenv func(string) string) (*config.Config, bool, error) {
	cfg, err := config.Load(h.ConfigPath, config.WithGetenv(getenv))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !h.ExplicitConfig {
			return nil, false, nil
		}
		_, rerr := readConfig(h, getenv)
		if rerr == nil {
			rerr = api.Errorf(api.CodeConfigError, "%s: %w", h.ConfigPath, err)
		}
		return nil, false, rerr
	}
	if err := cfg.Validate(); err != nil {
		return nil, true, invalidConfigError(cfg.Path, err)
	}
	return cfg, true, nil
}
