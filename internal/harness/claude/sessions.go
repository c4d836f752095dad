package claude

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Sessions: claude lets leo pick the conversation id (--session-id).
func (Claude) Sessions() harness.SessionPolicy { return sessions{} }

type sessions struct{}

func (sessions) PinsID() bool { return true }

// NewID returns a random (v4) UUID, the form --session-id requires.
func (sessions) NewID() string { return uuid.NewString() }

// Discover returns the id of the newest transcript of the workspace written
// at or after q.Since. leo pins ids, so this is only a fallback for
// recovering an agent whose stored id was lost.
func (sessions) Discover(ctx context.Context, q harness.SessionQuery) (string, error) {
	dir := ProjectDir(q.Env, q.Workspace)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var best string
	var bestInfo fs.FileInfo
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || uuid.Validate(id) != nil {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(q.Since) {
			continue
		}
		if bestInfo == nil || info.ModTime().After(bestInfo.ModTime()) ||
			(info.ModTime().Equal(bestInfo.ModTime()) && id > best) {
			best, bestInfo = id, info
		}
	}
	return best, nil
}

// Exists reports whether the transcript of id exists, which is exactly what
// --resume needs (and what makes --session-id fail as "already in use").
func (sessions) Exists(ctx context.Context, q harness.SessionQuery, id string) (bool, error) {
	if uuid.Validate(id) != nil {
		return false, nil
	}
	_, err := os.Stat(TranscriptPath(q.Env, q.Workspace, id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ConfigDir is claude's config directory: $CLAUDE_CONFIG_DIR, else ~/.claude.
func ConfigDir(env map[string]string) string {
	if d := harness.Getenv(env, "CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(harness.Getenv(env, "HOME"), ".claude")
}

// ProjectDir is where claude keeps the transcripts of a workspace: under its
// real path (claude names the directory after its cwd, symlinks resolved).
func ProjectDir(env map[string]string, workspace string) string {
	return filepath.Join(ConfigDir(env), "projects", EncodeWorkspace(RealPath(workspace)))
}

// TranscriptPath is the transcript file of conversation id.
func TranscriptPath(env map[string]string, workspace, id string) string {
	return filepath.Join(ProjectDir(env, workspace), id+".jsonl")
}

// EncodeWorkspace turns a workspace path into claude's project directory
// name: every character other than an ASCII letter or digit becomes "-".
// claude does this per UTF-16 unit, so a character outside the BMP becomes
// two dashes.
func EncodeWorkspace(workspace string) string {
	var b strings.Builder
	for _, r := range workspace {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
