package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/home"
)

// NoConfigMessage is the contract text (docs/managed-install.md) of an
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
		return false, api.Errorf(api.CodeConfigError, "cannot read %s: %w", path, err)
	}
}

// readValid loads path and validates it, and returns the hash of the bytes
// it loaded (the watcher tells the running file from a new one by it).
// Every finding is in the error's message, one per line, so a refused
// start or reload shows them all.
func readValid(path string, getenv func(string) string) (*config.Config, [sha256.Size]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, [sha256.Size]byte{}, api.Errorf(api.CodeConfigError, "config file %s not found", path)
	}
	if err != nil {
		return nil, [sha256.Size]byte{}, api.Errorf(api.CodeConfigError, "%w", err)
	}
	sum := sha256.Sum256(data)
	c, err := config.Parse(data, path, config.WithGetenv(getenv))
	if err != nil {
		return nil, sum, api.Errorf(api.CodeConfigError, "%w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, sum, api.Errorf(api.CodeConfigError, "%s is invalid:\n%w", path, err)
	}
	return c, sum, nil
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
	load   func(path string, getenv func(string) string) (*config.Config, [sha256.Size]byte, error)
	log    *slog.Logger

	mu  sync.Mutex // one reload at a time; guards ran and problem
	cur atomic.Pointer[config.Config]
	// ran is the hash of the bytes the running config came from.
	ran [sha256.Size]byte
	// problem says why the file on disk is not what runs ("" when it is,
	// or when it could be loaded); /health reports it.
	problem string
	// changed is called after a successful swap (the manager's ConfigChanged).
	changed func()
	// events gets config.reloaded after every reload, done or refused
	// (nil: nobody listens).
	events events.Publisher

	// The watcher's view (only Watch touches it): the last look at the
	// file, and the content it last acted on.
	seen  look
	acted [sha256.Size]byte
}

func (s *configStore) Get() *config.Config { return s.cur.Load() }

// start sets the config the daemon booted with and the hash of its bytes.
func (s *configStore) start(c *config.Config, sum [sha256.Size]byte) {
	s.cur.Store(c)
	s.ran, s.acted = sum, sum
}

// Problem is why leo.yaml on disk is not the running config, or "".
func (s *configStore) Problem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// Reload re-reads the file. On any problem the running config stays and the
// error is config_error carrying every finding.
func (s *configStore) Reload(context.Context) (api.ReloadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, sum, err := s.load(s.path, s.getenv)
	if err != nil {
		e := asAPIError(err)
		s.problem = "leo.yaml on disk is not loaded, the running config is kept: " + e.Message
		refused := api.Errorf(api.CodeConfigError, "%s%s", reloadRefused, e.Message)
		events.Publish(s.events, api.Event{Type: api.EventConfigReloaded, State: "error", Reason: refused.Message})
		return api.ReloadResult{}, refused
	}
	old := s.cur.Swap(c)
	s.ran, s.problem = sum, ""
	if s.changed != nil {
		s.changed()
	}
	// After changed: a reader that acts on the event finds the new config
	// in force everywhere.
	events.Publish(s.events, reloadedEvent(config.Changes(old, c)))
	return api.ReloadResult{OK: true, Warnings: warnings(c)}, nil
}

// reloadedEvent is a done reload's config.reloaded: the scopes it changed,
// and the same in words.
func reloadedEvent(changes []config.Change) api.Event {
	e := api.Event{Type: api.EventConfigReloaded, State: "ok", Reason: "leo.yaml reloaded: nothing changed"}
	if len(changes) == 0 {
		return e
	}
	words := make([]string, len(changes))
	for i, c := range changes {
		e.Changed = append(e.Changed, c.Scope)
		words[i] = c.Scope + " " + c.How
	}
	e.Reason = "leo.yaml reloaded: " + strings.Join(words, ", ")
	return e
}

// reloadRefused starts the message of a refused reload.
const reloadRefused = "reload refused, the running config is kept: "

// look is one look at leo.yaml: its stat and the hash of its bytes.
type look struct {
	missing bool
	size    int64
	mtime   int64 // UnixNano
	sum     [sha256.Size]byte
}

// Watch runs at every owner check (~2 s): it reloads leo.yaml when the
// file changed on disk, validated like `leo service reload`. A change is
// acted on only once it has settled — two looks in a row see the same
// size, mtime and content — so a file caught half-written by an editor is
// never loaded nor reported; it is looked at again at the next check. A
// settled change is tried once: a bad edit is logged once and stays in
// /health's problems (the running config is kept) until the file changes
// again. Content that already runs (leo's own saves, which reload
// themselves; a touch) is not reloaded again.
func (s *configStore) Watch(ctx context.Context) {
	now := s.lookAt()
	if now != s.seen {
		s.seen = now // changed since the last look: let it settle
		return
	}
	if now.sum == s.acted {
		return
	}
	s.acted = now.sum
	s.mu.Lock()
	running := !now.missing && now.sum == s.ran
	if running {
		s.problem = "" // back to what runs (a bad edit undone)
	}
	s.mu.Unlock()
	if running {
		return
	}
	res, err := s.Reload(ctx)
	switch {
	case s.log == nil:
	case err != nil:
		s.log.Error("leo.yaml changed on disk and was not loaded; the running config is kept",
			"err", strings.TrimPrefix(asAPIError(err).Message, reloadRefused))
	default:
		s.log.Info("leo.yaml changed on disk; reloaded", "warnings", len(res.Warnings))
	}
}

// lookAt reads the file's stat and hashes its bytes (leo.yaml is small;
// hashing it each time never misses an edit a coarse mtime would hide).
func (s *configStore) lookAt() look {
	fi, err := os.Stat(s.path)
	if err != nil {
		return look{missing: true}
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return look{missing: true}
	}
	return look{size: fi.Size(), mtime: fi.ModTime().UnixNano(), sum: sha256.Sum256(data)}
}
