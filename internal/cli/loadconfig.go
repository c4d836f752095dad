package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/home"
)

// NoConfigMessage is the contract text for a home without leo.yaml
// (docs/managed-install.md, "First start"), the daemon's own.
const NoConfigMessage = daemon.NoConfigMessage

// readConfig loads h's leo.yaml without validating it. Every failure is a
// config_error: a missing file (with the contract text, or naming the
// explicit --config file), an unreadable one, or one that is not YAML.
func readConfig(h home.Home, getenv func(string) string) (*config.Config, error) {
	cfg, err := config.Load(h.ConfigPath, config.WithGetenv(getenv))
	switch {
	case err == nil:
		return cfg, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, noConfigError(h)
	default:
		var pe *config.ParseError
		if errors.As(err, &pe) {
			return nil, api.Errorf(api.CodeConfigError, "%w", pe)
		}
		return nil, api.Errorf(api.CodeConfigError, "cannot read %s: %w", h.ConfigPath, err)
	}
}

func noConfigError(h home.Home) error {
	if h.ExplicitConfig {
		return api.Errorf(api.CodeConfigError, "config file %s does not exist (named by --config; leo never creates it)", h.ConfigPath)
	}
	return api.Errorf(api.CodeConfigError, "%s (looked for %s)", NoConfigMessage, h.ConfigPath)
}

// LoadConfig reads and validates leo.yaml of the resolved home, the way the
// daemon does: a config with any error-severity finding is refused with
// config_error naming every error. Warnings do not fail it.
func (f *Factory) LoadConfig() (*config.Config, home.Home, error) {
	h, err := f.Home()
	if err != nil {
		return nil, h, err
	}
	cfg, err := readConfig(h, f.Getenv)
	if err != nil {
		return nil, h, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, h, invalidConfigError(cfg.Path, err)
	}
	return cfg, h, nil
}

// invalidConfigError is the config_error of a config that fails Validate.
func invalidConfigError(path string, err error) error {
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		errs := ve.Errors()
		return api.Errorf(api.CodeConfigError, "%s has %s (run 'leo validate' for details):\n%s",
			path, plural(len(errs), "error"), ve.Error())
	}
	return api.Errorf(api.CodeConfigError, "%s: %w", path, err)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// configEditError is the coded error of a failed edit of leo.yaml (task
// enable, web enable): a shape leo does not rewrite, a file that does not
// parse, is missing, or would be invalid after the edit (left unchanged).
func configEditError(h home.Home, err error) error {
	path := h.ConfigPath
	var pe *config.ParseError
	var ve *config.ValidationError
	switch {
	case errors.Is(err, config.ErrCannotEdit):
		return api.Errorf(api.CodeConfigError, "%s: %w", path, err)
	case errors.As(err, &pe):
		return api.Errorf(api.CodeConfigError, "%w", pe)
	case errors.Is(err, fs.ErrNotExist):
		return noConfigError(h)
	case errors.As(err, &ve):
		return invalidConfigError(path, err)
	}
	return api.Errorf(api.CodeConfigError, "cannot edit %s: %w", path, err)
}
