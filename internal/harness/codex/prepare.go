package codex

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// Prepare pre-trusts the workspace so codex's folder-access dialog never
// blocks an agent. codex checks the directory it runs in by its real path,
// so a workspace reached through a symlink is trusted as written and as
// resolved. See TrustWorkspace.
func (Codex) Prepare(ctx context.Context, spec harness.LaunchSpec) error {
	if spec.Workspace == "" {
		return errors.New("codex: launch spec has no workspace")
	}
	config := filepath.Join(Home(spec.Env), "config.toml")
	if err := TrustWorkspace(config, spec.Workspace); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(spec.Workspace); err == nil && real != filepath.Clean(spec.Workspace) {
		return TrustWorkspace(config, real)
	}
	return nil
}

// TrustWorkspace appends
//
//	[projects."<dir>"]
//	trust_level = "trusted"
//
// to the config.toml at path unless it already has an entry for dir (in any
// state: a user's explicit "untrusted" is theirs to keep). The edit is at the
// text level: every existing byte stays as it was. The file is written
// atomically, keeping its mode; a missing one is created 0600 (its
// directory 0700).
func TrustWorkspace(path, dir string) error {
	dir = filepath.Clean(dir)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	text := string(data)
	if hasProjectEntry(text, dir) {
		return nil
	}
	var b strings.Builder
	b.WriteString(text)
	if text != "" {
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	b.WriteString("[projects." + tomlString(dir) + "]\n")
	b.WriteString("trust_level = \"trusted\"\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// statefile.Write keeps the mode of an existing file.
	return statefile.Write(path, []byte(b.String()), 0o600)
}

// hasProjectEntry reports whether the TOML text names projects.<dir> in any
// of the usual spellings: a table header or dotted key with a basic or a
// literal string key.
func hasProjectEntry(text, dir string) bool {
	keys := []string{tomlString(dir)}
	if !strings.Contains(dir, "'") {
		keys = append(keys, "'"+dir+"'")
	}
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimPrefix(l, "[")
		l = strings.TrimSpace(l)
		rest, ok := strings.CutPrefix(l, "projects")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		rest, ok = strings.CutPrefix(rest, ".")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		for _, k := range keys {
			if strings.HasPrefix(rest, k) {
				return true
			}
		}
	}
	return false
}
