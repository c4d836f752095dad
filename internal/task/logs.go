package task

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/names"
)

// A run's output log is <logDir>/<task>/<run-id>.log (0600, directories
// 0700): the harness's stdout and stderr as they came, with leo's own
// lines (each starting "[leo ") before and after every attempt.

// LogPath is the log file of run id of task.
func LogPath(logDir, task, id string) string {
	return filepath.Join(logDir, task, id+".log")
}

// runLog is one run's log file. A nil *runLog (the file could not be
// opened) drops everything, so a run never fails for its log.
type runLog struct {
	mu  sync.Mutex
	f   *os.File
	n   int64
	cut bool
}

func openRunLog(logDir, task, id string) (*runLog, error) {
	if logDir == "" {
		return nil, errors.New("no log directory configured")
	}
	dir := filepath.Join(logDir, task)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("run log directory: %w", err)
	}
	// MkdirAll keeps the mode of a directory that exists: output may hold
	// anything the harness printed, so only the owner reads it.
	_ = os.Chmod(dir, 0o700)
	f, err := os.OpenFile(LogPath(logDir, task, id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	_ = f.Chmod(0o600)
	return &runLog{f: f}, nil
}

// Write appends harness output, up to MaxLogBytes per run; beyond that
// it notes the cut once and drops the rest.
func (l *runLog) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeCapped(p)
	return len(p), nil
}

// line appends one stdout line (cut: the line was longer than the reader
// keeps).
func (l *runLog) line(b []byte, cut bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeCapped(b)
	if cut {
		l.writeCapped(fmt.Appendf(nil, " [leo: line cut at %d bytes]", len(b)))
	}
	l.writeCapped([]byte{'\n'})
}

func (l *runLog) writeCapped(p []byte) {
	if l.cut {
		return
	}
	if room := MaxLogBytes - l.n; int64(len(p)) > room {
		p = p[:room]
		l.cut = true
	}
	n, _ := l.f.Write(p)
	l.n += int64(n)
	if l.cut {
		_, _ = fmt.Fprintf(l.f, "\n[leo: log cut at %d bytes; the rest of the output was dropped]\n", MaxLogBytes)
	}
}

// meta appends one of leo's own lines; they are not counted against the
// cap, so the end of a run is always in its log.
func (l *runLog) meta(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.f, s+"\n")
}

func (l *runLog) close() {
	if l != nil {
		_ = l.f.Close()
	}
}

// runLogs lists the run ids of task's logs, oldest first (run ids sort
// as their start times). Files that are not run logs are left alone.
func runLogs(logDir, task string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(logDir, task))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if ok && e.Type().IsRegular() && ValidRunID(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// PruneLogs keeps the newest keep run logs of task (keep <= 0: 50) and
// deletes the older ones.
func PruneLogs(logDir, task string, keep int) error {
	if logDir == "" || !names.Valid(task) {
		return nil
	}
	if keep <= 0 {
		keep = DefaultLogsKeep
	}
	ids, err := runLogs(logDir, task)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids[:max(len(ids)-keep, 0)] {
		if err := os.Remove(LogPath(logDir, task, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReadLogMaxBytes caps what ReadLog returns: the end of a longer log.
const ReadLogMaxBytes = 4 << 20

// ReadLog reads the log of run runID of task ("" = its newest run), for
// `leo task logs`. A run id must have the run-id shape, so no request
// reaches a file outside the task's log directory. Of a log longer than
// ReadLogMaxBytes, the end is returned after a line saying so.
func ReadLog(logDir, task, runID string) (api.TaskLog, error) {
	if !names.Valid(task) {
		return api.TaskLog{}, api.Errorf(api.CodeInvalidArgs, "invalid task name %q: %s", task, names.Rule)
	}
	if runID == "" {
		ids, err := runLogs(logDir, task)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return api.TaskLog{}, api.Errorf(api.CodeInternal, "task %s: reading its run logs: %w", task, err)
		}
		if len(ids) == 0 {
			return api.TaskLog{}, api.Errorf(api.CodeNotFound, "task %s has no run logs yet", task)
		}
		runID = ids[len(ids)-1]
	} else if !ValidRunID(runID) {
		return api.TaskLog{}, api.Errorf(api.CodeInvalidArgs, "run id %q is not a run id (the run's UTC start time, like 20250102T150405.000Z)", runID)
	}
	path := LogPath(logDir, task, runID)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return api.TaskLog{}, api.Errorf(api.CodeNotFound, "task %s has no log of run %s (old logs are pruned)", task, runID)
	}
	if err != nil {
		return api.TaskLog{}, api.Errorf(api.CodeInternal, "task %s run %s: reading its log: %w", task, runID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return api.TaskLog{}, api.Errorf(api.CodeInternal, "task %s run %s: reading its log: %w", task, runID, err)
	}
	var prefix string
	if skip := fi.Size() - ReadLogMaxBytes; skip > 0 {
		if _, err := f.Seek(skip, io.SeekStart); err != nil {
			return api.TaskLog{}, api.Errorf(api.CodeInternal, "task %s run %s: reading its log: %w", task, runID, err)
		}
		prefix = fmt.Sprintf("[leo: the first %d bytes of this log are not shown; the whole log is %s]\n", skip, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, ReadLogMaxBytes))
	if err != nil {
		return api.TaskLog{}, api.Errorf(api.CodeInternal, "task %s run %s: reading its log: %w", task, runID, err)
	}
	if prefix != "" {
		// Start at a line, not in the middle of one.
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return api.TaskLog{Task: task, Run: runID, Text: prefix + string(b)}, nil
}
