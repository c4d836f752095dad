package task

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/names"
)

// The record and its vocabulary are the API's (api.TaskRun): history is
// what the task routes answer, so the two can never drift apart.
type (
	Trigger = api.Trigger
	Outcome = api.Outcome
	Reason  = api.Reason
	Usage   = api.Usage
	Record  = api.TaskRun
)

const (
	TriggerSchedule   = api.TriggerSchedule
	TriggerCatchUp    = api.TriggerCatchUp
	TriggerManual     = api.TriggerManual
	TriggerPersistent = api.TriggerPersistent

	OutcomeSucceeded = api.OutcomeSucceeded
	OutcomeFailed    = api.OutcomeFailed
	OutcomeTimeout   = api.OutcomeTimeout
	OutcomeSkipped   = api.OutcomeSkipped
	OutcomeLimited   = api.OutcomeLimited

	ReasonExitStatus      = api.ReasonExitStatus
	ReasonHarnessError    = api.ReasonHarnessError
	ReasonTimeout         = api.ReasonTimeout
	ReasonClaudeNotFound  = api.ReasonClaudeNotFound
	ReasonHarnessNotFound = api.ReasonHarnessNotFound
	ReasonStillRunning    = api.ReasonStillRunning
	ReasonQueueFull       = api.ReasonQueueFull
	ReasonConfigError     = api.ReasonConfigError
	ReasonDelivery        = api.ReasonDelivery
	ReasonInterrupted     = api.ReasonInterrupted
	ReasonStartFailed     = api.ReasonStartFailed
	ReasonUsageLimit      = api.ReasonUsageLimit
)

// Caps on a record's free text, so one hostile reply cannot bloat history.
const (
	ReplyMaxLines   = 20
	ReplyMaxBytes   = 4096
	MessageMaxBytes = 1024
)

// FirstLines keeps the first maxLines lines of s, at most maxBytes bytes
// (cut on a UTF-8 boundary).
func FirstLines(s string, maxLines, maxBytes int) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
			if n == maxLines {
				s = s[:i]
				break
			}
		}
	}
	if len(s) > maxBytes {
		cut := maxBytes
		for cut > 0 && s[cut]&0xC0 == 0x80 { // not on a rune start
			cut--
		}
		s = s[:cut]
	}
	return s
}

func check(r *Record) error {
	if !names.Valid(r.Task) {
		return fmt.Errorf("history record: task %q: %s", r.Task, names.Rule)
	}
	switch r.Trigger {
	case TriggerSchedule, TriggerCatchUp, TriggerManual, TriggerPersistent:
	default:
		return fmt.Errorf("history record for task %q: trigger %q is not one of schedule, catch_up, manual, persistent", r.Task, r.Trigger)
	}
	switch r.Outcome {
	case OutcomeSucceeded, OutcomeFailed, OutcomeTimeout, OutcomeSkipped, OutcomeLimited:
	default:
		return fmt.Errorf("history record for task %q: outcome %q is not one of succeeded, failed, timeout, skipped, limited", r.Task, r.Outcome)
	}
	if r.Outcome != OutcomeSucceeded && r.Reason == "" {
		return fmt.Errorf("history record for task %q: outcome %s needs a reason", r.Task, r.Outcome)
	}
	return nil
}

// DefaultRetention is the per-task record count a history file holds
// before it is rotated.
const DefaultRetention = 500

// History is the run history: one append-only JSON Lines file per task,
// <dir>/<task>.jsonl, and the previous generation <dir>/<task>.1.jsonl.
// When the current file holds Retention records it becomes the .1 file
// (replacing the older one) and a new file starts, so a task keeps between
// Retention and 2×Retention records. Each append is one write of one line
// followed by fsync: its cost does not depend on how much history there is.
// Files are 0600 in a 0700 directory. A History is safe for concurrent use
// within one process; it assumes it is the only writer of dir.
type History struct {
	dir string

	mu        sync.Mutex // guards retention and files
	retention int
	files     map[string]*taskFile
	// readOnly: opened by ReadHistory; Append refuses.
	readOnly bool
}

// taskFile is one task's history files: appends, rotation and reads of a
// task are serialized by its own lock, so a slow fsync of one task's
// append never holds up another task's.
type taskFile struct {
	mu    sync.Mutex
	count int  // records in the current file
	known bool // count has been read
}

// OpenHistory uses dir (created 0700 if missing); retention <= 0 means
// DefaultRetention.
func OpenHistory(dir string, retention int) (*History, error) {
	if retention <= 0 {
		retention = DefaultRetention
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("history directory: %w", err)
	}
	return &History{dir: dir, retention: retention, files: map[string]*taskFile{}}, nil
}

// ReadHistory is the history in dir for reading only: nothing is created
// (a missing directory is no runs yet), and Append refuses. It is what a
// leo without a daemon reads history with (Offline).
func ReadHistory(dir string) *History {
	return &History{dir: dir, retention: DefaultRetention, files: map[string]*taskFile{}, readOnly: true}
}

// file is task's lock and count, and the retention in force.
func (h *History) file(task string) (*taskFile, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tf := h.files[task]
	if tf == nil {
		tf = &taskFile{}
		h.files[task] = tf
	}
	return tf, h.retention
}

// SetRetention changes the retention (a config reload); <= 0 means
// DefaultRetention. It applies from the next append.
func (h *History) SetRetention(n int) {
	if n <= 0 {
		n = DefaultRetention
	}
	h.mu.Lock()
	h.retention = n
	h.mu.Unlock()
}

func (h *History) current(task string) string { return filepath.Join(h.dir, task+".jsonl") }
func (h *History) previous(task string) string {
	return filepath.Join(h.dir, task+".1.jsonl")
}

// Append records one run durably (written and fsynced before it returns).
func (h *History) Append(r Record) error {
	if h.readOnly {
		return fmt.Errorf("history of task %q: opened read-only (ReadHistory)", r.Task)
	}
	if err := check(&r); err != nil {
		return err
	}
	r.Reply = FirstLines(r.Reply, ReplyMaxLines, ReplyMaxBytes)
	r.Message = FirstLines(r.Message, 1<<30, MessageMaxBytes)
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("history record for task %q: %w", r.Task, err)
	}
	line = append(line, '\n')

	tf, retention := h.file(r.Task)
	tf.mu.Lock()
	defer tf.mu.Unlock()
	n := tf.count
	if !tf.known {
		// Once per task per process: count the current file's records
		// and mend a torn tail. Bounded by retention, not history.
		if n, err = h.mend(r.Task); err != nil {
			return err
		}
		tf.count, tf.known = n, true
	}
	if n >= retention {
		if err := h.rotate(r.Task); err != nil {
			return err
		}
		n = 0
	}
	f, err := os.OpenFile(h.current(r.Task), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("history of task %q: %w", r.Task, err)
	}
	_, werr := f.Write(line)
	if werr == nil {
		werr = f.Sync()
	}
	cerr := f.Close()
	if werr != nil || cerr != nil {
		// The file's state is unknown: count (and mend) it afresh next time.
		tf.known = false
		return fmt.Errorf("history of task %q: append: %w", r.Task, errors.Join(werr, cerr))
	}
	tf.count = n + 1
	return nil
}

// mend counts the records of task's current file. A last line without its
// newline is a torn append: kept (newline added) when it is a whole record,
// cut off otherwise, so the next append starts on a line of its own.
func (h *History) mend(task string) (int, error) {
	path := h.current(task)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("history of task %q: %w", task, err)
	}
	defer f.Close()
	n := 0
	var off int64
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(line) == 0 {
				return n, nil
			}
			var rec Record
			if json.Unmarshal(line, &rec) == nil {
				_, err = f.WriteAt([]byte{'\n'}, off+int64(len(line)))
				n++
			} else {
				err = f.Truncate(off)
			}
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				return 0, fmt.Errorf("history of task %q: mending a torn last record: %w", task, err)
			}
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("history of task %q: %w", task, err)
		}
		off += int64(len(line))
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
}

func (h *History) rotate(task string) error {
	if err := os.Rename(h.current(task), h.previous(task)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("history of task %q: rotate: %w", task, err)
	}
	if d, err := os.Open(h.dir); err == nil {
		_ = d.Sync() // make the rename durable before the new file appears
		d.Close()
	}
	return nil
}

// Dropped is a line of a history file that is not a record: a torn last
// record after a crash, or a damaged line.
type Dropped struct {
	File   string // path
	Offset int64  // byte offset of the line
	Torn   bool   // the file's unterminated last line
	Err    string
}

func (d Dropped) String() string {
	what := "damaged record"
	if d.Torn {
		what = "torn last record (crash mid-write)"
	}
	return fmt.Sprintf("%s: %s at byte %d dropped: %s", d.File, what, d.Offset, d.Err)
}

// Read returns task's records, oldest first (the last limit of them when
// limit > 0), and the lines it had to drop. A damaged line never costs
// more than itself.
func (h *History) Read(task string, limit int) ([]Record, []Dropped, error) {
	if !names.Valid(task) {
		return nil, nil, fmt.Errorf("history: task %q: %s", task, names.Rule)
	}
	tf, _ := h.file(task)
	tf.mu.Lock() // a consistent pair of files, not one mid-rotation
	defer tf.mu.Unlock()
	var recs []Record
	var dropped []Dropped
	for _, path := range []string{h.previous(task), h.current(task)} {
		r, d, err := readFile(path, task)
		if err != nil {
			return nil, nil, fmt.Errorf("history of task %q: %w", task, err)
		}
		recs = append(recs, r...)
		dropped = append(dropped, d...)
	}
	if limit > 0 && len(recs) > limit {
		recs = recs[len(recs)-limit:]
	}
	return recs, dropped, nil
}

// readFile parses one history file of task; a missing file is empty. Lines
// of any length are read whole. Fields and values this version does not
// know are kept as read (a newer leo may add them).
func readFile(path, task string) ([]Record, []Dropped, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var recs []Record
	var dropped []Dropped
	br := bufio.NewReaderSize(f, 64<<10)
	var off int64
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			start := off
			off += int64(len(line))
			torn := err == io.EOF
			body := bytes.TrimSpace(line)
			if len(body) > 0 {
				var rec Record
				if uerr := json.Unmarshal(body, &rec); uerr != nil {
					dropped = append(dropped, Dropped{File: path, Offset: start, Torn: torn, Err: shortErr(uerr)})
				} else if rec.Task != task {
					dropped = append(dropped, Dropped{File: path, Offset: start, Torn: torn, Err: fmt.Sprintf("record of task %q in the history of %q", rec.Task, task)})
				} else {
					recs = append(recs, rec)
				}
			}
		}
		if err == io.EOF {
			return recs, dropped, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}

// lastTail is how much of a history file's end Last reads: several times
// the largest record (its reply and message are capped).
const lastTail = 64 << 10

// Last returns task's newest record, reading only the end of its history
// file, so a daemon planning a thousand tasks at start reads a thousand
// tails, not a thousand histories. ok is false when the task has none.
func (h *History) Last(task string) (rec Record, ok bool, err error) {
	if !names.Valid(task) {
		return Record{}, false, fmt.Errorf("history: task %q: %s", task, names.Rule)
	}
	tf, _ := h.file(task)
	tf.mu.Lock()
	defer tf.mu.Unlock()
	for _, path := range []string{h.current(task), h.previous(task)} {
		rec, ok, err := lastRecord(path, task)
		if err != nil {
			return Record{}, false, fmt.Errorf("history of task %q: %w", task, err)
		}
		if ok {
			return rec, true, nil
		}
	}
	return Record{}, false, nil
}

// lastRecord is the newest whole record in path's last lastTail bytes,
// read whole when the tail holds none.
func lastRecord(path, task string) (Record, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Record{}, false, err
	}
	off := max(fi.Size()-lastTail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return Record{}, false, err
	}
	lines := bytes.Split(buf, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		if i == 0 && off > 0 {
			break // the tail's first line may be cut
		}
		var rec Record
		body := bytes.TrimSpace(lines[i])
		if len(body) > 0 && json.Unmarshal(body, &rec) == nil && rec.Task == task {
			return rec, true, nil
		}
	}
	if off == 0 {
		return Record{}, false, nil
	}
	recs, _, err := readFile(path, task)
	if err != nil || len(recs) == 0 {
		return Record{}, false, err
	}
	return recs[len(recs)-1], true, nil
}
