package daemon

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Supervised daemons log to state/service.log, rotated by size. A service
// manager restarts the daemon for months; the log must not grow without
// bound, and the newest lines must survive a rotation.
const (
	serviceLogMaxBytes = 10 << 20
	serviceLogKeep     = 3
)

// rotatingFile is an io.Writer appending to path; a write that would take
// the file past maxBytes first shifts path → path.1 → … → path.<keep>
// (the oldest dropped) and starts a new file. Writes are whole: a record is
// never split across two files. Written by hand because it is this small
// and needs no background goroutine.
type rotatingFile struct {
	path     string
	maxBytes int64
	keep     int

	mu   sync.Mutex
	f    *os.File
	size int64
}

func openRotatingFile(path string, maxBytes int64, keep int) (*rotatingFile, error) {
	r := &rotatingFile{path: path, maxBytes: maxBytes, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	r.f, r.size = f, fi.Size()
	return nil
}

func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, fs.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts the files and reopens path. A failed rename is not fatal:
// the daemon keeps logging into the current file rather than losing lines.
func (r *rotatingFile) rotate() error {
	_ = r.f.Close()
	r.f = nil
	for i := r.keep - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", r.path, i), fmt.Sprintf("%s.%d", r.path, i+1))
	}
	_ = os.Rename(r.path, r.path+".1")
	return r.open()
}

// reopenIfGone opens path again when it no longer names the file being
// written (state/ or the log deleted, or the file replaced): the lines
// would otherwise go to an unlinked file nobody can read. It reports
// whether it reopened.
func (r *rotatingFile) reopenIfGone() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return false, nil
	}
	cur, err := r.f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat log: %w", err)
	}
	if fi, err := os.Stat(r.path); err == nil && os.SameFile(fi, cur) {
		return false, nil
	}
	old := r.f
	if err := r.open(); err != nil {
		return false, err // keep writing where we were; tried again next time
	}
	_ = old.Close()
	return true, nil
}

func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
