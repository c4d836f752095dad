package codex

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

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
// to the config.toml at path unless it already has an entry for dir, in any
// state (a user's explicit "untrusted" is theirs to keep) and in any TOML
// spelling: whether it exists is decided by parsing the file, never by
// scanning its text. The edit appends text, so every existing byte, comment
// and layout stays as it was; the result is parsed again before it replaces
// the file, and a file that would not parse, or would not hold the entry,
// is never written. A config.toml that does not parse, or that declares
// projects in a form a table header cannot extend (an inline table, an
// array), is left alone and the error says so. The file is written
// atomically, keeping its mode; a missing one is created 0600 (its
// directory 0700).
func TrustWorkspace(path, dir string) error {
	dir = filepath.Clean(dir)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	has, err := hasProjectEntry(data, dir)
	if err != nil {
		return fmt.Errorf("codex: %s does not parse as TOML, so leo leaves it alone (trust %s in codex by hand): %w", path, dir, err)
	}
	if has {
		return nil
	}
	out := appendTrust(data, dir)
	// Never write what codex could not read: the appended header conflicts
	// with a projects value that is not a table of tables (an inline table
	// or an array), which only a parse tells.
	if ok, err := hasProjectEntry(out, dir); err != nil || !ok {
		return fmt.Errorf("codex: %s declares projects in a form leo cannot extend (an inline table or an array?); left unchanged — trust %s in codex by hand", path, dir)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// statefile.Write keeps the mode of an existing file.
	return statefile.Write(path, out, 0o600)
}

// appendTrust returns data with a [projects."<dir>"] table appended, in the
// file's own line ending.
func appendTrust(data []byte, dir string) []byte {
	nl := "\n"
	if strings.Contains(string(data), "\r\n") {
		nl = "\r\n"
	}
	var b strings.Builder
	b.Write(data)
	if len(data) > 0 {
		if data[len(data)-1] != '\n' {
			b.WriteString(nl)
		}
		b.WriteString(nl)
	}
	b.WriteString("[projects." + tomlString(dir) + "]" + nl)
	b.WriteString(`trust_level = "trusted"` + nl)
	return []byte(b.String())
}

// hasProjectEntry parses the TOML text and reports whether projects.<dir>
// is set, however it is spelt (a [projects."<dir>"] header, a [projects]
// table holding "<dir>" = {…}, an inline projects = {…}, dotted keys…).
func hasProjectEntry(data []byte, dir string) (bool, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return false, err
	}
	projects, ok := doc["projects"].(map[string]any)
	if !ok {
		return false, nil
	}
	_, ok = projects[dir]
	return ok, nil
}
