// Package lockfile is the one-daemon-per-home lock: an exclusive flock on
// state/daemon.lock holding the owner's pid. The daemon takes it; the client
// probes it to tell a stopped daemon from one that does not answer.
package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/blackpaw-studio/leo/internal/api"
)

// CodeDaemonRunning is the stable code of a daemon that could not start
// because another one holds this home's lock.
const CodeDaemonRunning api.Code = "daemon_running"

// HeldError is returned when another daemon holds the lock. Its text is a
// contract of spec/managed-install.md ("One daemon per home").
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
func (e *HeldError) ErrorCode() api.Code { return CodeDaemonRunning }

// Lock is a held daemon lock. It lasts as long as its file stays open.
type Lock struct {
	f *os.File
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
	return &Lock{f: f}, nil
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
	if l == nil || l.f == nil {
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
