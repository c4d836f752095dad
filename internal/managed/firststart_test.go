package managed

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

func defaultHome(t *testing.T) home.Home {
	t.Helper()
	h, err := home.Resolve("", func(k string) string {
		if k == "HOME" {
			return filepath.Join(t.TempDir(), "user")
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const createdLine = "managed install: no leo.yaml found; created default config at "

// A missing home is created 0700 and the wizard's default config written
// 0600, valid, with the spec's log line.
func TestFirstStartCreatesDefaultConfig(t *testing.T) {
	h := defaultHome(t)
	var logBuf syncBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	if err := FirstStart(context.Background(), h, log); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(h.Root)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home %s: %v %v, want 0700", h.Root, fi.Mode(), err)
	}
	fi, err = os.Stat(h.ConfigPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config: %v %v, want 0600", fi, err)
	}
	data, _ := os.ReadFile(h.ConfigPath)
	if !bytes.Equal(data, config.DefaultConfig()) {
		t.Errorf("config is not the wizard's default:\n%s", data)
	}
	if !bytes.Contains(data, []byte("enabled: true")) || !bytes.Contains(data, []byte("bind: 127.0.0.1")) {
		t.Errorf("web not enabled on loopback:\n%s", data)
	}
	if _, err := config.Load(h.ConfigPath); err != nil {
		t.Errorf("the written config does not load: %v", err)
	}
	if !strings.Contains(logBuf.String(), `msg="`+createdLine+h.ConfigPath+`"`) {
		t.Errorf("log = %q", logBuf.String())
	}
	assertNoTemps(t, h.Root)
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".first-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

// Concurrent first starts against a missing config create it once: one
// log line, one file, the same bytes.
func TestFirstStartConcurrentCreatesOnce(t *testing.T) {
	h := defaultHome(t)
	var logBuf syncBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- FirstStart(context.Background(), h, log)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logBuf.String(), createdLine); n != 1 {
		t.Errorf("%d starts logged creating the config, want 1:\n%s", n, logBuf.String())
	}
	data, _ := os.ReadFile(h.ConfigPath)
	if !bytes.Equal(data, config.DefaultConfig()) {
		t.Errorf("config bytes differ from the default")
	}
	assertNoTemps(t, h.Root)
}

// An existing config keeps its bytes, mode and mtime, and nothing is
// logged.
func TestFirstStartKeepsExistingFile(t *testing.T) {
	h := defaultHome(t)
	if err := os.MkdirAll(h.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := []byte("# mine, not even valid yaml: [\n")
	if err := os.WriteFile(h.ConfigPath, mine, 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(h.ConfigPath, old, old); err != nil {
		t.Fatal(err)
	}
	var logBuf syncBuffer
	if err := FirstStart(context.Background(), h, slog.New(slog.NewTextHandler(&logBuf, nil))); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(h.ConfigPath)
	data, _ := os.ReadFile(h.ConfigPath)
	if !bytes.Equal(data, mine) || !fi.ModTime().Equal(old) || fi.Mode().Perm() != 0o640 {
		t.Errorf("existing config changed: %q mtime %v mode %v", data, fi.ModTime(), fi.Mode())
	}
	if logBuf.String() != "" {
		t.Errorf("logged %q for an existing config", logBuf.String())
	}
	// An existing home keeps its mode too.
	if di, _ := os.Stat(h.Root); di.Mode().Perm() != 0o755 {
		t.Errorf("home mode changed to %v", di.Mode())
	}
	assertNoTemps(t, h.Root)
}

// A symlink (even a dangling one) at leo.yaml is a file that exists: it is
// never replaced.
func TestFirstStartNeverReplacesASymlink(t *testing.T) {
	h := defaultHome(t)
	if err := os.MkdirAll(h.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.Symlink(target, h.ConfigPath); err != nil {
		t.Fatal(err)
	}
	if err := FirstStart(context.Background(), h, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(h.ConfigPath); err != nil || got != target {
		t.Errorf("symlink replaced: %q %v", got, err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("wrote through the symlink: %v", err)
	}
}

func TestFirstStartRefusesExplicitConfig(t *testing.T) {
	dir := t.TempDir()
	h := home.Home{Root: dir, ConfigPath: filepath.Join(dir, "custom.yaml"), ExplicitConfig: true}
	if err := FirstStart(context.Background(), h, nil); err == nil {
		t.Fatal("an explicit --config was created")
	}
	if _, err := os.Stat(h.ConfigPath); !os.IsNotExist(err) {
		t.Errorf("explicit config exists: %v", err)
	}
}
