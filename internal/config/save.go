package config

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/google/renameio/v2"
)

// saveMu serializes saves within the process, so two web saves cannot
// interleave their validate-then-write steps.
var saveMu sync.Mutex

// Save validates data as the config at path and, only if it has no errors,
// replaces path atomically with mode 0600, creating a missing parent
// directory with mode 0700. On any error the existing file is left
// untouched, byte for byte. The error is a *ParseError or *ValidationError
// for a rejected config.
func Save(path string, data []byte, opts ...Option) error {
	saveMu.Lock()
	defer saveMu.Unlock()

	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	c, err := Parse(data, abs, opts...)
	if err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return err
	}
	return writeAtomic(abs, data)
}

// writeAtomic writes a temp file next to path with mode 0600 exactly, fsyncs
// it and renames it over path. Unlike statefile.Write it does not keep the
// mode of an existing file: leo.yaml may hold secrets in env:, so a file
// someone made group-readable is narrowed again when leo writes it.
func writeAtomic(path string, data []byte) error {
	f, err := renameio.NewPendingFile(path,
		renameio.WithTempDir(filepath.Dir(path)),
		renameio.WithStaticPermissions(0o600))
	if err != nil {
		return err
	}
	defer func() { _ = f.Cleanup() }()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}

// defaultConfig is what `leo setup --defaults` and a managed first start
// write: one claude assistant template, the default model and turn limit,
// and the web UI on loopback so agents' leo_* tools and hooks can reach the
// daemon.
const defaultConfig = `# leo configuration — see docs/configuration/reference.md
defaults:
  harness: claude
  model: sonnet
  max_turns: 200

templates:
  assistant:
    harness_options:
      remote_control: true

tasks: {}

web:
  enabled: true
  bind: 127.0.0.1
  port: 8370
`

// DefaultConfig returns the setup wizard's default leo.yaml (a fresh copy).
func DefaultConfig() []byte { return []byte(defaultConfig) }
