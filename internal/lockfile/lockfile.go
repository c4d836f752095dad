// Package lockfile is the one-daemon-per-home lock: an exclusive flock on
// state/daemon.lock holding the owner's pid. The daemon takes it (Acquire);
// the client, the CLI, doctor and the handover only Probe it, to tell a
// stopped daemon from one that does not answer. It is a leaf: it imports
// nothing of leo's but internal/api's codes, so those can use it without
// reaching up into internal/daemon (TestLockfileIsALeaf).
package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/blackpaw-studio/leo/internal/api"
)

// HeldError is returned when another daemon holds the lock. Its text is a
// contract of docs/managed-install.md ("One daemon per home").
type HeldError struct {
	Home string
	PID  int // 0 when the holder never wrote its pid
}

func (e *HeldError) Error() string {
	if e.PID <= 0 {
		return fmt.Sprintf("another leo daemon owns %s (pid unknown)", e.Home)
	}
	return fmt.Sprintf("another leo daemon owns %s (pid %d)", e.Home, e.PID)
}

// ErrorCode lets the CLI map the error to its stable code.
func (e *HeldError) ErrorCode() api.Code { return api.CodeDaemonRunning }

// Lock is a held daemon lock. It lasts as long as its file stays open and
// path still names that file (see Ensure).
type Lock struct {
	path, home string

	mu sync.Mutex
	f  *os.File
}

// retry covers a CLI probing the lock (a brief shared flock, see Probe) at
// the instant a daemon starts: a real holder keeps it far longer.
const (
	retry        = 200 * time.Millisecond
	poll         = 10 * time.Millisecond
	pidReadRetry = 2 * time.Second
)

// Acquire takes the exclusive, non-blocking flock on path, then writes our
// pid into the file. A live holder makes it fail with a *HeldError naming
// the holder's pid; it never waits for one.
func Acquire(path, homeRoot string) (*Lock, error) {
	// os.OpenFile sets O_CLOEXEC: the tmux server the daemon starts must
	// never inherit the lock, or it would own the home after we exit.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open daemon lock: %w", err)
	}
	deadline := time.Now().Add(retry)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, &HeldError{Home: homeRoot, PID: waitPID(path)}
		}
		time.Sleep(poll)
	}
	if err := writePID(f, os.Getpid()); err != nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		return nil, fmt.Errorf("write pid to %s: %w", path, err)
	}
	return &Lock{path: path, home: homeRoot, f: f}, nil
}

// Ensure keeps this process the one owner of the home. A flock belongs to
// the open file, not the path: when the lock file was removed (state/
// deleted) or replaced, another daemon could lock what is at path now and
// run beside this one. Ensure compares the file at path with the one held
// (device and inode); when they differ it takes the lock on what is there
// now, creating the file and its directory, and reports retaken. When
// another process holds that file it returns a *HeldError: this daemon is
// no longer the owner and must stop.
func (l *Lock) Ensure() (retaken bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return false, errors.New("daemon lock released")
	}
	if same, err := l.samePath(l.f); err != nil || same {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return false, fmt.Errorf("recreate %s: %w", filepath.Dir(l.path), err)
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("reopen daemon lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, &HeldError{Home: l.home, PID: ReadPID(l.path)}
		}
		return false, fmt.Errorf("lock %s: %w", l.path, err)
	}
	// Replaced again between the open and the flock: let the next call
	// look again rather than hold a file nobody can find.
	if same, err := l.samePath(f); err != nil || !same {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s changed while it was being locked", l.path)
		}
		return false, err
	}
	if err := writePID(f, os.Getpid()); err != nil {
		f.Close()
		return false, fmt.Errorf("write pid to %s: %w", l.path, err)
	}
	old := l.f
	l.f = f
	old.Close()
	return true, nil
}

// samePath reports whether path names the open file f.
func (l *Lock) samePath(f *os.File) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	cur, err := os.Stat(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, cur), nil
}

func writePID(f *os.File, pid int) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0); err != nil {
		return err
	}
	return f.Sync()
}

// Release clears the pid (so no one reads a stopped daemon's pid as the
// holder's) and drops the lock. The file stays: deleting a lock file races
// with the next daemon opening it.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// waitPID reads the holder's pid, waiting briefly for a holder that has
// locked but not yet written it.
func waitPID(path string) int {
	deadline := time.Now().Add(pidReadRetry)
	for {
		if pid := ReadPID(path); pid > 0 || time.Now().After(deadline) {
			return pid
		}
		time.Sleep(poll)
	}
}

// ReadPID returns the pid written in a lock file, 0 if there is none.
func ReadPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Probe reports whether some process holds the lock at path, and the pid it
// wrote. It takes a shared lock for an instant and never creates the file;
// Acquire's short retry absorbs a probe that overlaps a daemon's start.
func Probe(path string) (held bool, pid int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, ReadPID(path), nil
	}
	if err != nil {
		return false, 0, err
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false, 0, nil
}
