package managed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

// FirstStart is the managed first start (daemon.Options.FirstStart): the
// default leo.yaml of h is missing, so write the setup wizard's default
// config there. The write is atomic and never replaces a file: the config
// is written to a temp file and hard-linked into place, which fails when
// a file is there, so a config that exists or appears meanwhile is used as
// is. An explicit --config is never created.
func FirstStart(_ context.Context, h home.Home, log *slog.Logger) error {
	if h.ExplicitConfig {
		return fmt.Errorf("managed first start: %s was named by --config; leo never creates it", h.ConfigPath)
	}
	if err := os.MkdirAll(h.Root, 0o700); err != nil {
		return fmt.Errorf("managed first start: create %s: %w", h.Root, err)
	}
	created, err := createNew(h.ConfigPath, config.DefaultConfig())
	if err != nil {
		return fmt.Errorf("managed first start: write %s: %w", h.ConfigPath, err)
	}
	if created && log != nil {
		log.Info("managed install: no leo.yaml found; created default config at " + h.ConfigPath)
	}
	return nil
}

// createNew writes data to path (0600) unless a file is already there.
// created is false when one was.
func createNew(path string, data []byte) (created bool, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".first-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, data); err != nil {
		return false, err
	}
	switch err := os.Link(tmp.Name(), path); {
	case err == nil:
		syncDir(dir)
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		// A filesystem without hard links: O_EXCL still never replaces a
		// file, though a reader may see it half written.
		return createExcl(path, data)
	}
}

func createExcl(path string, data []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := writeSynced(f, data); err != nil {
		os.Remove(path)
		return false, err
	}
	syncDir(filepath.Dir(path))
	return true, nil
}

// writeSynced writes data to f, makes it 0600 whatever the umask, syncs and
// closes it.
func writeSynced(f *os.File, data []byte) error {
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
