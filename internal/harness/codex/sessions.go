package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Sessions: codex picks thread ids itself; leo finds them in rollout files.
func (Codex) Sessions() harness.SessionPolicy { return sessions{} }

type sessions struct{}

func (sessions) PinsID() bool  { return false }
func (sessions) NewID() string { return "" }

// SessionsDir is where codex writes rollouts: <codex home>/sessions.
func SessionsDir(env map[string]string) string {
	return filepath.Join(Home(env), "sessions")
}

// Discover returns the thread id of the newest rollout (by the timestamp its
// session_meta records) whose cwd is the workspace (as written or as its
// symlinks resolve: codex records the real path) and which was modified at
// or after q.Since. Only day directories from the day before Since's date on
// are read (codex names them by local date; the extra day absorbs time
// zones), so a long history costs nothing.
func (sessions) Discover(ctx context.Context, q harness.SessionQuery) (string, error) {
	mine := inWorkspace(q.Workspace)
	var since time.Time
	if !q.Since.IsZero() {
		since = q.Since.AddDate(0, 0, -1)
	}
	var best *rolloutMeta
	err := walkRollouts(ctx, SessionsDir(q.Env), since, func(path string, info fs.FileInfo) error {
		if info.ModTime().Before(q.Since) {
			return nil
		}
		meta, ok := readMeta(path)
		if !ok || !mine(meta.cwd) || slices.Contains(q.Exclude, meta.id) {
			return nil
		}
		if meta.when.IsZero() {
			meta.when = info.ModTime()
		}
		if best == nil || meta.when.After(best.when) || (meta.when.Equal(best.when) && path > best.path) {
			best = &meta
		}
		return nil
	})
	if err != nil || best == nil {
		return "", err
	}
	return best.id, nil
}

// Exists reports whether a rollout of thread id exists (what `codex resume`
// needs; a stale id would otherwise fail every restart).
func (sessions) Exists(ctx context.Context, q harness.SessionQuery, id string) (bool, error) {
	if id == "" || strings.ContainsAny(id, `/\`) {
		return false, nil
	}
	found := false
	err := walkRollouts(ctx, SessionsDir(q.Env), time.Time{}, func(path string, _ fs.FileInfo) error {
		fileID := rolloutID(path)
		if fileID == "" {
			meta, _ := readMeta(path)
			fileID = meta.id
		}
		if fileID == id {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}

// walkRollouts calls fn for every rollout file under sessions/YYYY/MM/DD
// whose day is not before from's date: rollout-*.jsonl files and the
// directory layout rollout-*/rollout.jsonl. A missing tree is empty.
func walkRollouts(ctx context.Context, root string, from time.Time, fn func(path string, info fs.FileInfo) error) error {
	fromDay := ""
	if !from.IsZero() {
		fromDay = from.Format("2006/01/02")
	}
	years, err := readDirs(root)
	if err != nil {
		return err
	}
	for _, y := range years {
		if fromDay != "" && y < fromDay[:4] {
			continue
		}
		months, err := readDirs(filepath.Join(root, y))
		if err != nil {
			return err
		}
		for _, m := range months {
			if fromDay != "" && y+"/"+m < fromDay[:7] {
				continue
			}
			days, err := readDirs(filepath.Join(root, y, m))
			if err != nil {
				return err
			}
			for _, d := range days {
				if fromDay != "" && y+"/"+m+"/"+d < fromDay {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := walkDay(filepath.Join(root, y, m, d), fn); err != nil {
					if errors.Is(err, fs.SkipAll) {
						return nil
					}
					return err
				}
			}
		}
	}
	return nil
}

func walkDay(dir string, fn func(string, fs.FileInfo) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ignoreMissing(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "rollout-") {
			continue
		}
		path := filepath.Join(dir, name)
		if e.IsDir() {
			path = filepath.Join(path, "rollout.jsonl")
		} else if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if err := fn(path, info); err != nil {
			return err
		}
	}
	return nil
}

// readDirs lists the numeric subdirectories of dir, sorted (YYYY, MM, DD).
func readDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, ignoreMissing(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// rolloutID is the thread id in a rollout's name:
// rollout-<YYYY-MM-DDThh-mm-ss>-<id>.jsonl, or that name (without .jsonl)
// as a directory holding rollout.jsonl.
func rolloutID(path string) string {
	name := filepath.Base(path)
	if name == "rollout.jsonl" {
		name = filepath.Base(filepath.Dir(path))
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "rollout-"), ".jsonl")
	// The timestamp is fixed-width: 2006-01-02T15-04-05 (19 chars) then "-".
	if len(name) > 20 && name[19] == '-' {
		return name[20:]
	}
	return ""
}

type rolloutMeta struct {
	path string
	id   string
	cwd  string
	when time.Time
}

// maxMetaLine bounds the first line read: session_meta can carry codex's
// whole base instructions.
const maxMetaLine = 8 << 20

// readMeta parses the session_meta first line of a rollout.
func readMeta(path string) (rolloutMeta, bool) {
	f, err := os.Open(path)
	if err != nil {
		return rolloutMeta{}, false
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, maxMetaLine)).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return rolloutMeta{}, false
	}
	var first struct {
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Payload   struct {
			ID        string `json:"id"`
			Cwd       string `json:"cwd"`
			Timestamp string `json:"timestamp"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &first) != nil || first.Type != "session_meta" || first.Payload.ID == "" {
		return rolloutMeta{}, false
	}
	m := rolloutMeta{path: path, id: first.Payload.ID, cwd: first.Payload.Cwd}
	for _, ts := range []string{first.Timestamp, first.Payload.Timestamp} {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			m.when = t
			break
		}
	}
	return m, true
}
