package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.TurnWitness = Opencode{}

// DBEnv names opencode's database when set (an absolute path).
const DBEnv = "OPENCODE_DB"

// dbPath is where opencode keeps its store under env: $OPENCODE_DB when it
// is an absolute path, else $XDG_DATA_HOME/opencode/opencode.db, else
// $HOME/.local/share/opencode/opencode.db.
func dbPath(env map[string]string) (string, error) {
	if p := harness.Getenv(env, DBEnv); filepath.IsAbs(p) {
		return p, nil
	}
	if d := harness.Getenv(env, "XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "opencode", "opencode.db"), nil
	}
	home := harness.Getenv(env, "HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("opencode: no HOME to find the session store in")
	}
	return filepath.Join(home, ".local", "share", "opencode", "opencode.db"), nil
}

// UserTurns reads the user messages opencode stored at or after q.Since,
// from its own database (opencode.db and its WAL, read in place; see
// sqlitefile.go): in session id, or when id is "" in every top-level
// session of q.Workspace (by its real path) not in q.Exclude. The text of
// a message is its text parts joined by newlines, as opencode stored them
// (a paste in full, not its [Pasted …] placeholder). No store yet is no
// turns and no error.
func (Opencode) UserTurns(ctx context.Context, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	path, err := dbPath(q.Env)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	turns, err := readUserTurns(path, q, id)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opencode: session store %s: %w", path, err)
	}
	return turns, nil
}

func readUserTurns(path string, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	f, err := openSQLite(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tables, err := f.tables()
	if err != nil {
		return nil, err
	}
	need := map[string][]string{
		"session": {"id", "parent_id", "directory"},
		"message": {"id", "session_id", "time_created", "data"},
		"part":    {"message_id", "session_id", "time_created", "data"},
	}
	for name, cols := range need {
		t, ok := tables[name]
		if !ok {
			return nil, fmt.Errorf("no %s table (an opencode older or newer than 1.18?)", name)
		}
		for _, c := range cols {
			if t.col(c) < 0 {
				return nil, fmt.Errorf("table %s has no column %s", name, c)
			}
		}
	}

	sessions := map[string]bool{}
	if id != "" {
		sessions[id] = true
	} else {
		dirs := workspaceDirs(q.Workspace)
		st := tables["session"]
		cID, cParent, cDir := st.col("id"), st.col("parent_id"), st.col("directory")
		err := f.scanTable(st.root, func(row []any) bool {
			sid, _ := field(row, cID).(string)
			dir, _ := field(row, cDir).(string)
			if sid != "" && field(row, cParent) == nil && slices.Contains(dirs, filepath.Clean(dir)) && !slices.Contains(q.Exclude, sid) {
				sessions[sid] = true
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	if len(sessions) == 0 {
		return nil, nil
	}

	since := q.Since.UnixMilli()
	if q.Since.IsZero() {
		since = 0
	}
	type msg struct {
		session string
		at      int64
		texts   []string
	}
	msgs := map[string]*msg{}
	mt := tables["message"]
	cID, cSess, cTime, cData := mt.col("id"), mt.col("session_id"), mt.col("time_created"), mt.col("data")
	err = f.scanTable(mt.root, func(row []any) bool {
		sid, _ := field(row, cSess).(string)
		at, _ := field(row, cTime).(int64)
		if !sessions[sid] || at < since {
			return true
		}
		var data struct {
			Role string `json:"role"`
		}
		if s, ok := field(row, cData).(string); !ok || json.Unmarshal([]byte(s), &data) != nil || data.Role != "user" {
			return true
		}
		if mid, ok := field(row, cID).(string); ok && mid != "" {
			msgs[mid] = &msg{session: sid, at: at}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}

	pt := tables["part"]
	pMsg, pData := pt.col("message_id"), pt.col("data")
	err = f.scanTable(pt.root, func(row []any) bool {
		mid, _ := field(row, pMsg).(string)
		m := msgs[mid]
		if m == nil {
			return true
		}
		var data struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Synthetic bool   `json:"synthetic"`
		}
		if s, ok := field(row, pData).(string); ok && json.Unmarshal([]byte(s), &data) == nil && data.Type == "text" && !data.Synthetic {
			m.texts = append(m.texts, data.Text)
		}
		return true
	})
	if err != nil {
		return nil, err
	}

	out := make([]harness.UserTurn, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, harness.UserTurn{SessionID: m.session, Text: strings.Join(m.texts, "\n"), At: time.UnixMilli(m.at)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// field is row[i], nil when the row is shorter (a column added later).
func field(row []any, i int) any {
	if i < 0 || i >= len(row) {
		return nil
	}
	return row[i]
}

// workspaceDirs is the workspace as written and by its real path: opencode
// records the directory it runs in as the OS reports it, symlinks resolved.
func workspaceDirs(ws string) []string {
	dirs := []string{filepath.Clean(ws)}
	if real, err := filepath.EvalSymlinks(ws); err == nil && real != dirs[0] {
		dirs = append(dirs, filepath.Clean(real))
	}
	return dirs
}
