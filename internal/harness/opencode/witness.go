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
	"sync"
	"syscall"
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
	return fromStore(path, func(p string) ([]harness.UserTurn, error) { return readUserTurns(p, q, id) })
}

// fromStore is read's answer from the store at path: none for a store
// that does not exist yet, or its error naming the store.
func fromStore[T any](path string, read func(string) ([]T, error)) ([]T, error) {
	out, err := read(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opencode: session store %s: %w", path, err)
	}
	return out, nil
}

// storeState is what UserTurns keeps of one store between calls: the WAL
// as read so far (the next call reads only frames appended since), and
// the answers given while the store has not changed. Delivery asks every
// ~10 ms for seconds; opencode commits far less often.
type storeState struct {
	mu       sync.Mutex
	wal      walCache
	version  string                          // the store's state the answers are for
	answers  map[string][]harness.UserTurn   // by query
	activity map[string]harness.TurnActivity // TurnActivity's, by query
	conv     map[string]*convCache           // Conversation's, by session (kept across versions)
}

const (
	maxCachedStores  = 8
	maxCachedAnswers = 32
)

var stores = struct {
	sync.Mutex
	m map[string]*storeState
}{m: map[string]*storeState{}}

func storeOf(path string) *storeState {
	stores.Lock()
	defer stores.Unlock()
	st := stores.m[path]
	if st == nil {
		if len(stores.m) >= maxCachedStores {
			for p := range stores.m { // any one: it is read again if asked
				delete(stores.m, p)
				break
			}
		}
		st = &storeState{}
		stores.m[path] = st
	}
	return st
}

// storeVersion names the state of the store f is a view of: the database
// file (same inode, size and modification time) and the WAL's last commit
// (same header, same end). SQLite in WAL mode changes the file only by
// checkpointing pages the WAL already holds. Only a store with a WAL is
// answered from memory.
func storeVersion(f *sqliteFile) string {
	var dev, ino uint64
	if st, ok := f.dbInfo.Sys().(*syscall.Stat_t); ok {
		dev, ino = uint64(st.Dev), st.Ino
	}
	return fmt.Sprintf("%d:%d:%d:%d|%x|%d", dev, ino, f.dbInfo.Size(), f.dbInfo.ModTime().UnixNano(), f.walHdr, f.walEnd)
}

func queryKey(q harness.SessionQuery, id string) string {
	ex := slices.Clone(q.Exclude)
	slices.Sort(ex)
	b, _ := json.Marshal([]any{id, q.Since.UnixMilli(), q.Since.IsZero(), workspaceDirs(q.Workspace), ex})
	return string(b)
}

func readUserTurns(path string, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	turns, err := readCached(path, q, id, func(st *storeState) *map[string][]harness.UserTurn { return &st.answers }, readUserTurnsFrom)
	return slices.Clone(turns), err // the kept answer never leaves the cache
}

// readCached answers a query on the store at path from the answers kept
// in cache for the store's present version, reading it (read) only when
// it changed. A store with no WAL is read anew every time: written some
// other way (rewritten whole, renamed into place), it may change without
// a sign the stat shows.
func readCached[T any](path string, q harness.SessionQuery, id string, cache func(*storeState) *map[string]T, read func(*sqliteFile, harness.SessionQuery, string) (T, error)) (T, error) {
	var zero T
	st := storeOf(path)
	st.mu.Lock()
	defer st.mu.Unlock()
	wal := st.wal
	f, err := openSQLiteCached(path, &wal)
	if err != nil {
		st.wal = walCache{}
		return zero, err
	}
	defer f.Close()
	st.wal = wal
	if f.walHdr == nil {
		st.version, st.answers, st.activity = "", nil, nil
		return read(f, q, id)
	}
	version, key := storeVersion(f), queryKey(q, id)
	if version != st.version {
		st.version, st.answers, st.activity = version, nil, nil
	}
	kept := cache(st)
	if *kept == nil {
		*kept = map[string]T{}
	}
	if v, ok := (*kept)[key]; ok {
		return v, nil
	}
	v, err := read(f, q, id)
	if err != nil {
		return zero, err
	}
	if len(*kept) >= maxCachedAnswers {
		clear(*kept)
	}
	(*kept)[key] = v
	return v, nil
}

func readUserTurnsFrom(f *sqliteFile, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	tables, err := storeTables(f)
	if err != nil {
		return nil, err
	}

	sessions, err := sessionsOf(f, tables, q, id)
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, nil
	}

	since := q.Since.UnixMilli()
	if q.Since.IsZero() {
		since = 0
	}
	indexes, err := f.indexes()
	if err != nil {
		return nil, err
	}
	mIdx, okM := indexOn(indexes, "message", "session_id", "time_created")
	_, okP := indexOn(indexes, "part", "message_id")
	if okM && okP && !scanOnly {
		return indexedUserTurns(f, tables, indexes, mIdx, sessions, since)
	}
	// No index to look rows up by (an opencode other than 1.18?): scan.
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

	mids := make([]string, 0, len(msgs))
	for mid := range msgs {
		mids = append(mids, mid)
	}
	err = eachPart(f, tables, indexes, mids, func(mid string, p *partData) {
		if p.userText() {
			msgs[mid].texts = append(msgs[mid].texts, p.Text)
		}
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

// storeTables reads the schema and checks it has the tables and columns
// leo reads (opencode 1.18's).
func storeTables(f *sqliteFile) (map[string]sqliteTable, error) {
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
	return tables, nil
}

// sessionsOf is the set of sessions a lookup reads: id, or (id "") every
// top-level session of q.Workspace (by its real path) not in q.Exclude.
func sessionsOf(f *sqliteFile, tables map[string]sqliteTable, q harness.SessionQuery, id string) (map[string]bool, error) {
	sessions := map[string]bool{}
	if id != "" {
		sessions[id] = true
		return sessions, nil
	}
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
	return sessions, err
}

// scanOnly makes UserTurns scan the tables even where the indexes are
// (tests compare the two ways).
var scanOnly bool

// indexedUserTurns is the scan below through opencode's indexes: each
// session's messages from since on by (session_id, time_created), then
// each user message's parts by message_id, every row fetched by rowid.
// What it returns is what the scan returns.
func indexedUserTurns(f *sqliteFile, tables map[string]sqliteTable, indexes map[string]sqliteIndex, mIdx sqliteIndex, sessions map[string]bool, since int64) ([]harness.UserTurn, error) {
	mt := tables["message"]
	cID, cSess, cTime, cData := mt.col("id"), mt.col("session_id"), mt.col("time_created"), mt.col("data")
	ids := make([]string, 0, len(sessions))
	for sid := range sessions {
		ids = append(ids, sid)
	}
	sort.Strings(ids)
	var out []harness.UserTurn
	for _, want := range ids {
		from := []any{want}
		if since != 0 {
			from = append(from, since)
		}
		type msg struct {
			id string
			at int64
		}
		var msgs []msg
		err := f.rowsByIndex(mIdx, mt, want, from, func(rowid int64, row []any) bool {
			sid, _ := field(row, cSess).(string)
			at, _ := field(row, cTime).(int64)
			if sid != want || at < since {
				return true
			}
			var data struct {
				Role string `json:"role"`
			}
			if s, ok := field(row, cData).(string); !ok || json.Unmarshal([]byte(s), &data) != nil || data.Role != "user" {
				return true
			}
			if mid, ok := field(row, cID).(string); ok && mid != "" {
				msgs = append(msgs, msg{id: mid, at: at})
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			var texts []string
			err := eachPart(f, tables, indexes, []string{m.id}, func(_ string, p *partData) {
				if p.userText() {
					texts = append(texts, p.Text)
				}
			})
			if err != nil {
				return nil, err
			}
			out = append(out, harness.UserTurn{SessionID: want, Text: strings.Join(texts, "\n"), At: time.UnixMilli(m.at)})
		}
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
