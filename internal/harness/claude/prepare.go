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
func (Claude) Prepare(ctx context.Context, spec harness.LaunchSpec) error {
	if spec.Workspace == "" {
		return errors.New("claude: launch spec has no workspace")
	}
	return TrustWorkspace(GlobalConfigPath(spec.Env), spec.Workspace)
}

// GlobalConfigPath is claude's global state file (.claude.json).
func GlobalConfigPath(env map[string]string) string {
	if d := getenv(env, "CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(getenv(env, "HOME"), ".claude.json")
}

// TrustWorkspace marks workspace as trusted in the .claude.json at path.
func TrustWorkspace(path, workspace string) error {
	data, err := os.ReadFile(path)
	perm := os.FileMode(0o600)
	top := map[string]json.RawMessage{}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &top); err != nil {
				return fmt.Errorf("%s: not valid JSON, leaving it alone: %w", path, err)
			}
		}
	}

	projects := map[string]json.RawMessage{}
	if raw, ok := top["projects"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &projects); err != nil {
			return fmt.Errorf("%s: projects is not an object, leaving it alone: %w", path, err)
		}
	}
	project := map[string]json.RawMessage{}
	if raw, ok := projects[workspace]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &project); err != nil {
			return fmt.Errorf("%s: projects[%q] is not an object, leaving it alone: %w", path, workspace, err)
		}
	}
	if string(project["hasTrustDialogAccepted"]) == "true" {
		return nil
	}
	project["hasTrustDialogAccepted"] = json.RawMessage("true")

	var err2 error
	if projects[workspace], err2 = marshalRaw(project); err2 != nil {
		return err2
	}
	if top["projects"], err2 = marshalRaw(projects); err2 != nil {
		return err2
	}
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	return statefile.Write(path, append(out, '\n'), perm)
}

func marshalRaw(v map[string]json.RawMessage) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	return json.RawMessage(data), err
}
