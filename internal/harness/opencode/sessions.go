package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Sessions: opencode picks session ids; leo reads them from
// `opencode session list --format json` after the first turn.
func (Opencode) Sessions() harness.SessionPolicy { return sessions{run: runOpencode} }

type sessions struct {
	run runner
}

func (sessions) PinsID() bool  { return false }
func (sessions) NewID() string { return "" }

// Discover returns the newest session (by updated, then created time) whose
// directory is the workspace and which was created or updated at or after
// q.Since; "" when there is none yet.
func (s sessions) Discover(ctx context.Context, q harness.SessionQuery) (string, error) {
	list, err := s.list(ctx, q)
	if err != nil {
		return "", err
	}
	// opencode records the directory as the OS reports it, symlinks
	// resolved: match the workspace as written or by its real path.
	dirs := workspaceDirs(q.Workspace)
	var best *sessionInfo
	for i := range list {
		si := &list[i]
		if si.ID == "" || !slices.Contains(dirs, filepath.Clean(si.Directory)) || slices.Contains(q.Exclude, si.ID) {
			continue
		}
		if si.Updated.Time.Before(q.Since) && si.Created.Time.Before(q.Since) {
			continue
		}
		if best == nil || si.newerThan(best) {
			best = si
		}
	}
	if best == nil {
		return "", nil
	}
	return best.ID, nil
}

// Exists reports whether opencode lists a session with this id for the
// workspace's project.
func (s sessions) Exists(ctx context.Context, q harness.SessionQuery, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	list, err := s.list(ctx, q)
	if err != nil {
		return false, err
	}
	for _, si := range list {
		if si.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// sessionInfo is what leo reads of one entry of `opencode session list
// --format json` (which also prints title and projectId).
type sessionInfo struct {
	ID        string    `json:"id"`
	Directory string    `json:"directory"`
	Updated   timestamp `json:"updated"`
	Created   timestamp `json:"created"`
}

func (a *sessionInfo) newerThan(b *sessionInfo) bool {
	if !a.Updated.Equal(b.Updated.Time) {
		return a.Updated.After(b.Updated.Time)
	}
	return a.Created.After(b.Created.Time)
}

// timestamp reads opencode's times: epoch milliseconds (a number or a
// numeric string) or an RFC 3339 string.
type timestamp struct{ time.Time }

func (t *timestamp) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), `"`)
	if s == "" || s == "null" {
		return nil
	}
	if ms, err := strconv.ParseFloat(s, 64); err == nil {
		t.Time = time.UnixMilli(int64(ms))
		return nil
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("unrecognised time %s", data)
	}
	t.Time = parsed
	return nil
}

// listTimeout bounds `opencode session list` when the caller set no deadline.
const listTimeout = 15 * time.Second

func (s sessions) list(ctx context.Context, q harness.SessionQuery) ([]sessionInfo, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, listTimeout)
		defer cancel()
	}
	out, err := s.run(ctx, q.Env, q.Workspace, "session", "list", "--format", "json")
	if err != nil {
		return nil, err
	}
	out = bytes.TrimSpace(out)
	// Tolerate banner noise before the JSON array.
	if i := bytes.IndexByte(out, '['); i > 0 {
		out = out[i:]
	}
	if len(out) == 0 {
		return nil, nil
	}
	var list []sessionInfo
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("opencode session list: unexpected output: %w", err)
	}
	return list, nil
}

// runner runs opencode with args in dir under env and returns its stdout.
type runner func(ctx context.Context, env map[string]string, dir string, args ...string) ([]byte, error)

// runOpencode is this package's one exec seam: opencode found through
// binpath (PATH from the launch env first), no shell, stdin closed, the
// launch env over leo's own, killed when ctx ends.
func runOpencode(ctx context.Context, env map[string]string, dir string, args ...string) ([]byte, error) {
	getenv := func(k string) string { return harness.Getenv(env, k) }
	bin, err := binpath.Resolver{Getenv: getenv}.Lookup("opencode")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdin = nil // /dev/null: opencode waits for stdin EOF otherwise
	cmd.Env = mergeEnv(os.Environ(), env)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("opencode %s: %w", strings.Join(args, " "), ctx.Err())
		}
		return nil, fmt.Errorf("opencode %s: %w: %s", strings.Join(args, " "), err, lastLine(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// mergeEnv overlays env on base (KEY=VALUE), later keys winning.
func mergeEnv(base []string, env map[string]string) []string {
	out := make([]string, 0, len(base)+len(env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := env[k]; !override {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
