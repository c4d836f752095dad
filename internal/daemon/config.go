package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

// NoConfigMessage is the contract text (spec/managed-install.md) of an
// unmanaged daemon started in a home without leo.yaml.
const NoConfigMessage = "no leo.yaml found — run 'leo setup' first"

// missingConfig is the error for a config file that does not exist. An
// explicit --config is never created, so it names the file instead.
func missingConfig(h home.Home) error {
	if h.ExplicitConfig {
		return api.Errorf(api.CodeConfigError,
			"config file %s not found (leo never creates a file named by --config)", h.ConfigPath)
	}
	return api.Errorf(api.CodeConfigError, "%s", NoConfigMessage)
}

// configExists reports whether path exists; a stat failure other than
// "does not exist" is an error (an unreadable home must not look empty).
func configExists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, api.Errorf(api.CodeConfigError, "cannot read %s: %v", path, err)
	}
}

// loadValid loads path and validates it. Every finding is in the error's
// message, one per line, so a refused start or reload shows them all.
func loadValid(path string, getenv func(string) string) (*config.Config, error) {
	c, err := config.Load(path, config.WithGetenv(getenv))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, api.Errorf(api.CodeConfigError, "config file %s not found", path)
	}
	if err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%v", err)
	}
	if err := c.Validate(); err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%s is invalid:\n%v", path, err)
	}
	return c, nil
}

// warnings lists the warning-severity findings of a valid config.
func warnings(c *config.Config) []string {
	var out []string
	for _, f := range c.Findings() {
		if !f.IsError() {
			out = append(out, f.Message)
		}
	}
	return out
}

// configStore holds the running config. Reads are lock-free; reloads are
// serialized and swap only a config that validated.
type configStore struct {
	path   string
	getenv func(string) string
	load   func(path string, getenv func(string) string) (*config.Config, error)

	mu  sync.Mutex // one reload at a time
	cur atomic.Pointer[config.Config]
	// changed is called after a successful swap (the manager's ConfigChanged).
	changed func()
}

func (s *configStore) Get() *config.Config { return s.cur.Load() }

// Reload re-reads the file. On any problem the running config stays and the
// error is config_error carrying every finding.
func (s *configStore) Reload(context.Context) (api.ReloadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.load(s.path, s.getenv)
	if err != nil {
		e := asAPIError(err)
		return api.ReloadResult{}, api.Errorf(api.CodeConfigError, "reload refused, the running config is kept: %s", e.Message)
	}
	s.cur.Store(c)
	if s.changed != nil {
		s.changed()
	}
	return api.ReloadResult{OK: true, Warnings: warnings(c)}, nil
}
