package codex

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Delivery asks UserTurns after every look at the screen (every ~10 ms for
// seconds), so a rollout is read once: each file's state — how far it was
// read, the turns found so far — is kept here and only what was appended
// since is read on the next call. A file that shrank, was replaced (another
// inode) or whose bytes before the read offset changed is read again from
// the start. The cache is bounded; an evicted file is simply read again.

// maxCachedRollouts bounds the files (and thread ids) remembered.
const maxCachedRollouts = 64

// markLen is how many bytes before the read offset are kept to notice a
// file rewritten in place with at least as many bytes.
const markLen = 64

type rolloutState struct {
	mu sync.Mutex // held while the file is read

	dev, ino uint64
	started  bool   // offset, since and kinds are from a read
	offset   int64  // bytes consumed: whole lines only
	mark     []byte // the markLen bytes before offset
	since    time.Time
	id       string // from the name, else the first session_meta
	kinds    [3][]harness.UserTurn
	marks    []turnMark   // turn starts and ends, in file order
	conv     conversation // read only while since is zero (Conversation)

	metaOK bool // meta read for this dev/ino
	meta   rolloutMeta
}

var cache = &harness.FileCache[rolloutState]{Max: maxCachedRollouts}

// bytesRead counts the rollout bytes read for turns (tests check that a
// second call reads only what was appended).
var bytesRead atomic.Int64

// rolloutPaths remembers where a known thread's rollout is (sessions root
// + "\x00" + thread id → path), bounded like the cache.
var rolloutPaths = &pathMemo{paths: map[string]string{}}

type pathMemo struct {
	mu    sync.Mutex
	paths map[string]string
}

func (m *pathMemo) known(root, id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.paths[root+"\x00"+id]
}

func (m *pathMemo) set(root, id, path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := root + "\x00" + id
	if path == "" {
		delete(m.paths, key)
		return
	}
	if _, ok := m.paths[key]; !ok && len(m.paths) >= maxCachedRollouts {
		for k := range m.paths { // any one: a forgotten path is found again
			delete(m.paths, k)
			break
		}
	}
	m.paths[key] = path
}

// findRollout is the rollout of thread id under root, "" when there is
// none. Its path is remembered; a thread's rollout stays in the day
// directory of the day it started, which for a time-ordered (v7) id is the
// day its id names (codex names folders by local time: that day ±1 is
// looked at first). Otherwise, or if not there, the day directories are
// listed newest first, by name only.
func findRollout(ctx context.Context, root, id string) (string, error) {
	if p := rolloutPaths.known(root, id); p != "" {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p, nil
		}
		rolloutPaths.set(root, id, "")
	}
	var found string
	match := func(dir string) (bool, error) {
		p, err := rolloutInDay(dir, id)
		if err != nil || p == "" {
			return false, err
		}
		found = p
		return true, nil
	}
	if t, ok := uuidV7Time(id); ok {
		seen := map[string]bool{}
		for _, d := range []int{0, -1, 1} {
			dir := filepath.Join(root, t.AddDate(0, 0, d).Format("2006/01/02"))
			if seen[dir] {
				continue
			}
			seen[dir] = true
			if ok, err := match(dir); err != nil || ok {
				if ok {
					rolloutPaths.set(root, id, found)
				}
				return found, err
			}
		}
	}
	years, err := readDirs(root)
	if err != nil {
		return "", err
	}
	for _, y := range slices.Backward(years) {
		months, err := readDirs(filepath.Join(root, y))
		if err != nil {
			return "", err
		}
		for _, m := range slices.Backward(months) {
			days, err := readDirs(filepath.Join(root, y, m))
			if err != nil {
				return "", err
			}
			for _, d := range slices.Backward(days) {
				if err := ctx.Err(); err != nil {
					return "", err
				}
				if ok, err := match(filepath.Join(root, y, m, d)); err != nil {
					return "", err
				} else if ok {
					rolloutPaths.set(root, id, found)
					return found, nil
				}
			}
		}
	}
	return "", nil
}

// rolloutInDay is thread id's rollout in one day directory, "" if none:
// by name, without a stat per file; a rollout whose name carries no id is
// identified by its session_meta line.
func rolloutInDay(dir, id string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", ignoreMissing(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "rollout-") {
			continue
		}
		path := filepath.Join(dir, name)
		if e.IsDir() {
			path = filepath.Join(path, "rollout.jsonl")
		} else if !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
			continue
		}
		fileID := rolloutID(path)
		if fileID == "" {
			meta, _ := readMeta(path)
			fileID = meta.id
		}
		if fileID != id {
			continue
		}
		if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
			continue
		}
		return path, nil
	}
	return "", nil
}

// uuidV7Time is the creation time a version-7 UUID carries, in local time.
func uuidV7Time(id string) (time.Time, bool) {
	hexs := strings.ReplaceAll(id, "-", "")
	if len(id) != 36 || len(hexs) != 32 || hexs[12] != '7' {
		return time.Time{}, false
	}
	b, err := hex.DecodeString(hexs[:12])
	if err != nil {
		return time.Time{}, false
	}
	var ms int64
	for _, c := range b {
		ms = ms<<8 | int64(c)
	}
	return time.UnixMilli(ms).Local(), true
}

// cachedMeta is readMeta, read once per file (by inode).
func cachedMeta(path string, info fs.FileInfo) (rolloutMeta, bool) {
	s := cache.State(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	dev, ino := harness.FileKey(info)
	if s.metaOK && s.dev == dev && s.ino == ino && info.Size() >= s.offset {
		return s.meta, true
	}
	m, ok := readMeta(path)
	if !ok {
		return m, false // the first line may be still being written
	}
	if s.dev != dev || s.ino != ino {
		s.reset(dev, ino, time.Time{})
	}
	s.meta, s.metaOK = m, true
	return m, true
}

func (s *rolloutState) reset(dev, ino uint64, since time.Time) {
	s.dev, s.ino, s.since = dev, ino, since
	s.started, s.offset, s.mark, s.id, s.kinds, s.marks = false, 0, nil, "", [3][]harness.UserTurn{}, nil
	s.conv = conversation{}
	s.metaOK, s.meta = false, rolloutMeta{}
}

// rolloutUserTurns reads the user turns of one rollout at or after since:
// only what was appended since the last call, unless the file changed
// under the cache. Lines that cannot hold a user turn are skipped by a
// substring test, and lines older than since by their leading timestamp,
// before any JSON is parsed; a line still being written (no newline yet,
// or cut) is ignored until it is whole.
func rolloutUserTurns(path string, since time.Time) ([]harness.UserTurn, error) {
	var out []harness.UserTurn
	err := withRollout(path, since, func(s *rolloutState) {
		out = s.userTurns(since)
	})
	return out, err
}

// rolloutActivityAt reads the turn start and end records of one rollout
// at or after since, through the same cache as rolloutUserTurns (found is
// false when the file is gone), and when its last turn ended (zero: none
// did): of several rollouts, the one that ended last says whether the last
// turn failed, and what it replied.
func rolloutActivityAt(path string, since time.Time) (a harness.TurnActivity, lastEnd time.Time, err error) {
	err = withRollout(path, since, func(s *rolloutState) {
		a.Found = true
		for _, m := range s.marks {
			if !since.IsZero() && m.at.Before(since) {
				continue
			}
			a.Running = !m.end
			if m.end {
				a.Ended++
				a.Failed, a.Limited, a.ResetsAt, a.Reply = m.failed, m.limited, m.resetsAt, m.reply
				lastEnd = m.at
			}
		}
	})
	return a, lastEnd, err
}

// withRollout brings path's cached state up to date for since and calls
// use with it, locked. A file that does not exist is no error, and use is
// not called.
func withRollout(path string, since time.Time, use func(*rolloutState)) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	s := cache.State(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	dev, ino := harness.FileKey(info)
	if !s.still(f, info, dev, ino, since) {
		// The meta cachedMeta just read stays; after a change it is read again.
		meta, metaOK := s.meta, !s.started && s.metaOK && s.dev == dev && s.ino == ino
		s.reset(dev, ino, since)
		s.started = true
		s.id = rolloutID(path)
		s.meta, s.metaOK = meta, metaOK
	}
	if info.Size() > s.offset { // else nothing was appended: no buffer to allocate
		if err := s.readFrom(f); err != nil {
			return err
		}
	}
	use(s)
	return nil
}

// userTurns are the cached user turns at or after since, of the first
// kind the rollout holds (see UserTurns).
func (s *rolloutState) userTurns(since time.Time) []harness.UserTurn {
	for _, k := range s.kinds {
		var out []harness.UserTurn
		for _, u := range k {
			if !since.IsZero() && (u.At.IsZero() || u.At.Before(since)) {
				continue
			}
			u.SessionID = s.id
			out = append(out, u)
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// still reports whether the cached state may be continued: same file, not
// shorter, the bytes before the offset unchanged, and read for a since no
// later than this one.
func (s *rolloutState) still(f *os.File, info fs.FileInfo, dev, ino uint64, since time.Time) bool {
	if !s.started || s.dev != dev || s.ino != ino || info.Size() < s.offset {
		return false
	}
	if !s.since.IsZero() && (since.IsZero() || since.Before(s.since)) {
		return false
	}
	if len(s.mark) > 0 {
		b := make([]byte, len(s.mark))
		if _, err := f.ReadAt(b, s.offset-int64(len(b))); err != nil || !bytes.Equal(b, s.mark) {
			return false
		}
	}
	return true
}

// readFrom reads the whole lines after s.offset into s.
func (s *rolloutState) readFrom(f *os.File) error {
	if _, err := f.Seek(s.offset, io.SeekStart); err != nil {
		return err
	}
	r := newLineReader(f)
	for {
		line, n, tooLong, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		at := s.offset
		s.offset += int64(n)
		bytesRead.Add(int64(n))
		s.takeLine(line, tooLong)
		if !tooLong && s.since.IsZero() {
			s.conv.take(line, at)
		}
	}
	if s.offset > 0 {
		k := min(int64(markLen), s.offset)
		s.mark = make([]byte, k)
		if _, err := f.ReadAt(s.mark, s.offset-k); err != nil {
			s.offset, s.mark = 0, nil // read it all again next time
			return err
		}
	}
	return nil
}

func (s *rolloutState) takeLine(line []byte, tooLong bool) {
	// Older than since by its leading timestamp: no need to look further
	// into a line that may be megabytes of tool output.
	old := false
	if at, ok := leadingTimestamp(line); ok && !s.since.IsZero() && at.Before(s.since) {
		old = true
	}
	if !tooLong && !old && mayHoldTurnMark(line) && s.takeMark(line) {
		return
	}
	if tooLong || old || !mayHoldUserTurn(line) {
		if s.id == "" && bytes.Contains(line, []byte(`"session_meta"`)) {
			var m struct {
				Payload struct{ ID string } `json:"payload"`
			}
			if json.Unmarshal(line, &m) == nil {
				s.id = m.Payload.ID
			}
		}
		return
	}
	var l rolloutLine
	if json.Unmarshal(line, &l) != nil {
		return
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	if !s.since.IsZero() && (at.IsZero() || at.Before(s.since)) {
		return
	}
	kind, text, ok := userTurnOf(l)
	if !ok {
		return
	}
	s.kinds[kind] = append(s.kinds[kind], harness.UserTurn{Text: text, At: at})
}

// turnMark is one turn record: a start (task_started) or an end
// (task_complete, also for a turn that failed; turn_aborted for one
// interrupted). An end that failed carries codex's words for it, and
// whether it was a usage limit (and when that resets, as far as codex
// says).
type turnMark struct {
	at       time.Time
	end      bool
	failed   string
	limited  bool
	resetsAt time.Time
	reply    string // an end's last_agent_message: the turn's reply
}

// mayHoldTurnMark is the byte test before a line is parsed for a turn
// record; codex writes its event types unescaped.
func mayHoldTurnMark(line []byte) bool {
	if t, _ := headTypes(line); t != "" {
		return t == "task_started" || t == "task_complete" || t == "turn_aborted"
	}
	return bytes.Contains(line, []byte(`"task_started"`)) ||
		bytes.Contains(line, []byte(`"task_complete"`)) ||
		bytes.Contains(line, []byte(`"turn_aborted"`))
}

// takeMark records line if it is a turn record, and reports whether it was.
func (s *rolloutState) takeMark(line []byte) bool {
	var l struct {
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Payload   struct {
			Type             string     `json:"type"`
			Error            *turnError `json:"error"`
			LastAgentMessage *string    `json:"last_agent_message"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" {
		return false
	}
	end := false
	switch l.Payload.Type {
	case "task_started":
	case "task_complete", "turn_aborted":
		end = true
	default:
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err == nil && (s.since.IsZero() || !at.Before(s.since)) {
		m := turnMark{at: at, end: end}
		if end && l.Payload.Error != nil {
			m.failed, m.limited, m.resetsAt = l.Payload.Error.read(at)
		}
		if end && m.failed == "" && l.Payload.LastAgentMessage != nil {
			m.reply = strings.TrimSpace(*l.Payload.LastAgentMessage)
		}
		s.marks = append(s.marks, m)
	}
	return true
}

// leadingTimestamp reads the timestamp codex writes first on every line,
// {"timestamp":"…", without parsing the line.
func leadingTimestamp(line []byte) (time.Time, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"timestamp":"`))
	if !ok {
		return time.Time{}, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || end > 64 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return t, err == nil
}

// forget empties the caches (benchmarks of a first call).
func forget() {
	cache.Forget()
	rolloutPaths.mu.Lock()
	rolloutPaths.paths = map[string]string{}
	rolloutPaths.mu.Unlock()
}
