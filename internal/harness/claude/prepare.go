package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// Prepare pre-trusts the workspace so claude's interactive "Do you trust the
// files in this folder?" dialog never blocks an agent: it sets
// projects[<workspace>].hasTrustDialogAccepted = true in claude's global
// config ($CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json). Every other
// key and value is kept (key order may change: the file is re-encoded); the
// write is atomic and keeps the file's mode. A missing file is created with
// just that entry (0600). A file that does not parse is left alone and
// reported. Nothing is written when the workspace is already trusted.
//
// claude checks trust for the workspace's real path (symlinks resolved), so
// a workspace reached through a symlink is trusted under both its written
// and its real path.
func (Claude) Prepare(ctx context.Context, spec harness.LaunchSpec) error {
	if err := checkSpec(spec); err != nil {
		return err
	}
	return TrustWorkspace(GlobalConfigPath(spec.Env), workspacePaths(spec.Workspace)...)
}

// workspacePaths is the workspace as written and, when it differs, its real
// path. A path that cannot be resolved (not there yet) is used as written.
func workspacePaths(workspace string) []string {
	if real := RealPath(workspace); real != workspace {
		return []string{workspace, real}
	}
	return []string{workspace}
}

// RealPath is the workspace with symlinks resolved, as claude sees it (its
// cwd), or the workspace as written when it cannot be resolved.
func RealPath(workspace string) string {
	real, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return workspace
	}
	return real
}

// GlobalConfigPath is claude's global state file (.claude.json).
func GlobalConfigPath(env map[string]string) string {
	if d := harness.Getenv(env, "CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(harness.Getenv(env, "HOME"), ".claude.json")
}

// TrustWorkspace marks each workspace as trusted in the .claude.json at
// path, in one write (none when all are trusted already).
func TrustWorkspace(path string, workspaces ...string) error {
	top, err := readJSONFile(path)
	if err != nil {
		return err
	}
	projects, err := objectAt(top, "projects")
	if err != nil {
		return fmt.Errorf("%s: projects is not an object, leaving it alone: %w", path, err)
	}
	changed := false
	for _, workspace := range workspaces {
		project, err := objectAt(projects, workspace)
		if err != nil {
			return fmt.Errorf("%s: projects[%q] is not an object, leaving it alone: %w", path, workspace, err)
		}
		if string(project["hasTrustDialogAccepted"]) == "true" {
			continue
		}
		project["hasTrustDialogAccepted"] = json.RawMessage("true")
		if projects[workspace], err = json.Marshal(project); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	if top["projects"], err = json.Marshal(projects); err != nil {
		return err
	}
	return writeJSONFile(path, top, 0o700)
}

// readJSONFile reads a claude settings file leo edits: its top-level keys
// as written (none for a missing or empty file). A file that is not a JSON
// object is an error, and is left alone.
func readJSONFile(path string) (map[string]json.RawMessage, error) {
	top := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("%s: not a JSON object, leaving it alone: %w", path, err)
		}
	}
	return top, nil
}

// writeJSONFile writes a claude settings file leo edited (the user's keys
// kept as read), atomically, creating its directory with dirMode;
// statefile.Write keeps the mode of an existing file (0600 for a new one).
func writeJSONFile(path string, top map[string]json.RawMessage, dirMode os.FileMode) error {
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	return statefile.Write(path, append(out, '\n'), 0o600)
}

// objectAt decodes m[key] as a JSON object; a missing or null one is empty.
func objectAt(m map[string]json.RawMessage, key string) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if raw, ok := m[key]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
	}
	return obj, nil
}
