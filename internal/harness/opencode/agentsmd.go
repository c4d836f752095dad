package opencode

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// The markers of leo's managed block in opencode's global AGENTS.md.
const (
	BlockBegin = "<!-- BEGIN LEO (managed) -->"
	BlockEnd   = "<!-- END LEO (managed) -->"
)

// ConfigDir is opencode's global config directory:
// $XDG_CONFIG_HOME/opencode, else ~/.config/opencode.
func ConfigDir(env map[string]string) string {
	if d := harness.Getenv(env, "XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "opencode")
	}
	return filepath.Join(harness.Getenv(env, "HOME"), ".config", "opencode")
}

// EnsureManagedBlock makes configDir/AGENTS.md (configDir "" means
// ConfigDir(nil)) contain exactly body between BlockBegin and BlockEnd. Only
// that block is written: an existing one is replaced in place, otherwise the
// block is appended (after a blank line) or the file created (0644, its
// directory 0755). Every byte outside the block stays as it was; nothing is
// written when the block already holds body. An empty body removes the
// block. A begin marker without its end marker is an error and the file is
// left alone. The write is atomic and keeps the file's mode.
func EnsureManagedBlock(configDir, body string) error {
	if configDir == "" {
		configDir = ConfigDir(nil)
	}
	path := filepath.Join(configDir, "AGENTS.md")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	updated, err := replaceBlock(old, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(updated, old) {
		return nil
	}
	if err := os.MkdirAll(configDir, 0o755); err != nil {
		return err
	}
	// statefile.Write keeps the mode of an existing file.
	return statefile.Write(path, updated, 0o644)
}

// replaceBlock returns text with its managed block set to body.
func replaceBlock(text []byte, body string) ([]byte, error) {
	block := []byte(BlockBegin + "\n" + body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		block = append(block, '\n')
	}
	block = append(block, BlockEnd...)

	begin := bytes.Index(text, []byte(BlockBegin))
	if begin < 0 {
		if body == "" {
			return text, nil
		}
		out := append([]byte{}, text...)
		if len(out) > 0 {
			if out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		out = append(out, block...)
		return append(out, '\n'), nil
	}
	endRel := bytes.Index(text[begin:], []byte(BlockEnd))
	if endRel < 0 {
		return nil, fmt.Errorf("found %q without %q; fix the file by hand", BlockBegin, BlockEnd)
	}
	end := begin + endRel + len(BlockEnd)
	out := append([]byte{}, text[:begin]...)
	if body == "" {
		// Drop the block with the line break that ended it.
		rest := text[end:]
		rest = bytes.TrimPrefix(rest, []byte("\n"))
		return append(out, rest...), nil
	}
	out = append(out, block...)
	return append(out, text[end:]...), nil
}
