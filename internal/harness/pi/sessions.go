package pi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Where pi keeps its sessions (pi 0.73.1, dist/config.js and
// core/session-manager.js): the agent directory is $PI_CODING_AGENT_DIR,
// else ~/.pi/agent; the session directory is $PI_CODING_AGENT_SESSION_DIR
// (flat), else <agent dir>/sessions/--<cwd>--, the working directory with
// its leading slash dropped and every "/", "\" and ":" made "-".
const (
	AgentDirEnv   = "PI_CODING_AGENT_DIR"
	SessionDirEnv = "PI_CODING_AGENT_SESSION_DIR"
)

// AgentDir is pi's configuration directory under env.
func AgentDir(env map[string]string) string {
	if d := harness.Getenv(env, AgentDirEnv); d != "" {
		return expandTilde(d, env)
	}
	return filepath.Join(harness.Getenv(env, "HOME"), ".pi", "agent")
}

func expandTilde(p string, env map[string]string) string {
	if p == "~" {
		return harness.Getenv(env, "HOME")
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(harness.Getenv(env, "HOME"), rest)
	}
	return p
}

// SessionDir is the directory pi keeps the sessions of workspace in, as pi
// 0.73.1 picks it (main.js): $PI_CODING_AGENT_SESSION_DIR, else the
// "sessionDir" of pi's settings (the project's .pi/settings.json over the
// agent dir's settings.json), else the per-directory default. Lookups run
// with the launched program's environment, so they find what pi wrote.
func SessionDir(env map[string]string, workspace string) string {
	if d := harness.Getenv(env, SessionDirEnv); d != "" {
		return expandTilde(d, env)
	}
	ws := realPath(workspace)
	for _, f := range []string{filepath.Join(ws, ".pi", "settings.json"), filepath.Join(AgentDir(env), "settings.json")} {
		if d := settingsSessionDir(f); d != "" {
			d = expandTilde(d, env)
			if !filepath.IsAbs(d) {
				d = filepath.Join(ws, d)
			}
			return d
		}
	}
	return filepath.Join(AgentDir(env), "sessions", EncodeCwd(ws))
}

// settingsSessionDir is the "sessionDir" of a pi settings file, "" when
// it sets none (or cannot be read).
func settingsSessionDir(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var s struct {
		SessionDir string `json:"sessionDir"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	return s.SessionDir
}

// EncodeCwd is pi's directory name for a working directory.
func EncodeCwd(cwd string) string {
	cwd = strings.TrimPrefix(strings.TrimPrefix(cwd, "/"), `\`)
	return "--" + strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(cwd) + "--"
}

// realPath is workspace with its symlinks resolved: pi runs there, and
// names the session directory after its process's working directory.
func realPath(workspace string) string {
	if r, err := filepath.EvalSymlinks(workspace); err == nil {
		return r
	}
	return workspace
}

// fileID is the session id in a session file's name:
// <timestamp>_<session id>.jsonl, as pi names its files.
func fileID(path string) string {
	name, ok := strings.CutSuffix(filepath.Base(path), ".jsonl")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// findSession is the file of conversation id in the workspace's session
// directory, "" when there is none.
func findSession(env map[string]string, workspace, id string) (string, error) {
	if !validID(id) {
		return "", nil
	}
	matches, err := filepath.Glob(filepath.Join(SessionDir(env, workspace), "*_"+id+".jsonl"))
	if err != nil || len(matches) == 0 {
		return "", err
	}
	return matches[len(matches)-1], nil
}

// validID: pi's session ids are UUIDs (v7); nothing else is looked up, so
// an id never becomes a path of its own.
func validID(id string) bool { return uuid.Validate(id) == nil }

// sessionFiles lists the session files of the workspace modified at or
// after since whose id is not in exclude, oldest first.
func sessionFiles(ctx context.Context, q harness.SessionQuery) ([]string, error) {
	dir := SessionDir(q.Env, q.Workspace)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := fileID(e.Name())
		if e.IsDir() || !validID(id) || contains(q.Exclude, id) {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(q.Since) {
			continue
		}
		files = append(files, file{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	out := make([]string, 0, len(files))
	for len(files) > 0 {
		i := 0
		for j := range files {
			if files[j].mod.Before(files[i].mod) {
				i = j
			}
		}
		out = append(out, files[i].path)
		files = append(files[:i], files[i+1:]...)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// recordFiles are the files a record lookup reads: conversation id's, or
// with id "" every session of the workspace begun at or after q.Since and
// not another agent's.
func recordFiles(ctx context.Context, q harness.SessionQuery, id string) ([]string, error) {
	if id != "" {
		p, err := findSession(q.Env, q.Workspace, id)
		if p == "" || err != nil {
			return nil, err
		}
		return []string{p}, nil
	}
	files, err := sessionFiles(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if began, ok := headerTime(f); ok && !began.Before(q.Since.Add(-time.Second)) {
			out = append(out, f)
		}
	}
	return out, nil
}

// headerTime is when a session file's header says the session began.
func headerTime(path string) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	line, _ := r.ReadSlice('\n')
	var h struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
	}
	if json.Unmarshal(line, &h) != nil || h.Type != "session" {
		return time.Time{}, false
	}
	return h.Timestamp, true
}

// Sessions: pi names its conversations itself. --session takes a path,
// but the id a session is known by — in its file's header and name, in
// /session, in `--session <id>` — is always pi's own, so leo does not pin
// a path: it discovers the id after the first turn, like codex's.
func (Pi) Sessions() harness.SessionPolicy { return sessions{} }

type sessions struct{}

func (sessions) PinsID() bool { return false }

// NewID is "": pi chooses the id.
func (sessions) NewID() string { return "" }

// Discover returns the id of the newest session of the workspace begun at
// or after q.Since and not another agent's: pi writes the file with the
// first model answer of a session (its first user message with it).
func (sessions) Discover(ctx context.Context, q harness.SessionQuery) (string, error) {
	files, err := recordFiles(ctx, q, "")
	if err != nil || len(files) == 0 {
		return "", err
	}
	return fileID(files[len(files)-1]), nil
}

// Exists reports whether conversation id has a session file in the
// workspace's session directory (a session that never got a model answer
// has none, and resuming it would fail).
func (sessions) Exists(_ context.Context, q harness.SessionQuery, id string) (bool, error) {
	p, err := findSession(q.Env, q.Workspace, id)
	return p != "", err
}
