package lockfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
	"github.com/blackpaw-studio/leo/internal/testutil/imports"
)

// helperEnv makes the test binary act as another daemon holding the lock.
const helperEnv = "LEO_LOCKFILE_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		holdLock(path)
		return
	}
	os.Exit(hermetic.Main(m))
}

// holdLock takes the lock, says so, and keeps it until stdin closes.
func holdLock(path string) {
	l, err := Acquire(path, filepath.Dir(path))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	l.Release()
}

// startHolder runs a separate process that holds the lock at path.
func startHolder(t *testing.T, path string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder did not take the lock: %q %v", line, err)
	}
	return cmd, stdin
}

func TestSecondAcquireNamesTheHolderPID(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.lock")
	holder, _ := startHolder(t, path)

	l, err := Acquire(path, "/home/me/.leo")
	if err == nil {
		l.Release()
		t.Fatal("Acquire succeeded while another process holds the lock")
	}
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("error is %T %v, want *HeldError", err, err)
	}
	want := fmt.Sprintf("another leo daemon owns /home/me/.leo (pid %d)", holder.Process.Pid)
	if err.Error() != want {
		t.Fatalf("error text:\n got %q\nwant %q", err.Error(), want)
	}
	if held.ErrorCode() != api.CodeDaemonRunning {
		t.Fatalf("code %q, want %q", held.ErrorCode(), api.CodeDaemonRunning)
	}
}

func TestLockIsFreedWhenTheHolderIsKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	holder, _ := startHolder(t, path)
	if held, pid, err := Probe(path); err != nil || !held || pid != holder.Process.Pid {
		t.Fatalf("Probe = %v, %d, %v; want held by %d", held, pid, err, holder.Process.Pid)
	}
	holder.Process.Kill() // SIGKILL: no chance to release; the kernel drops the flock
	holder.Wait()

	l, err := Acquire(path, filepath.Dir(path))
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	defer l.Release()
	if got := ReadPID(path); got != os.Getpid() {
		t.Fatalf("lock file pid %d, want ours %d", got, os.Getpid())
	}
}

func TestReleaseClearsThePIDAndFreesTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	l, err := Acquire(path, filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v, want 0600", fi.Mode().Perm())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if pid := ReadPID(path); pid != 0 {
		t.Fatalf("pid %d left in the lock file after release", pid)
	}
	if held, _, _ := Probe(path); held {
		t.Fatal("Probe says held after release")
	}
	l2, err := Acquire(path, filepath.Dir(path))
	if err != nil {
		t.Fatalf("re-acquire: %v", err)
	}
	l2.Release()
}

func TestProbeNeverCreatesTheLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	held, pid, err := Probe(path)
	if err != nil || held || pid != 0 {
		t.Fatalf("Probe of a missing file = %v %d %v", held, pid, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Probe created %s", path)
	}
}

func TestPIDIsWrittenOnlyAfterLocking(t *testing.T) {
	// A second daemon must never overwrite the holder's pid: its failed
	// attempt leaves the file as the holder wrote it.
	path := filepath.Join(t.TempDir(), "daemon.lock")
	holder, _ := startHolder(t, path)
	for range 3 {
		if _, err := Acquire(path, "h"); err == nil {
			t.Fatal("Acquire succeeded against a holder")
		}
	}
	if got := ReadPID(path); got != holder.Process.Pid {
		t.Fatalf("lock file pid %d after failed attempts, want holder's %d", got, holder.Process.Pid)
	}
}

// Ensure keeps the holder the owner when its lock file is removed (it
// locks a new one), and says so when another process got there first.
func TestEnsureRetakesARemovedLockOrReportsTheNewHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "daemon.lock")
	l, err := Acquire(path, "/home")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if retaken, err := l.Ensure(); retaken || err != nil {
		t.Fatalf("Ensure on an intact lock = %v, %v", retaken, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if retaken, err := l.Ensure(); !retaken || err != nil {
		t.Fatalf("Ensure after state/ was removed = %v, %v; want retaken", retaken, err)
	}
	var held *HeldError
	if _, err := Acquire(path, "/home"); !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second Acquire after the retake: %v, want held by us", err)
	}

	// Another process locks a new file before the holder looks.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	other, err := Acquire(path, "/home")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	if _, err := l.Ensure(); !errors.As(err, &held) {
		t.Fatalf("Ensure with another holder = %v, want *HeldError", err)
	}
}

// The lock is a leaf: of leo it imports only the codes of internal/api, so
// the client, the CLI, doctor and the handover probe it from below the
// daemon.
func TestLockfileIsALeaf(t *testing.T) {
	got := imports.Direct(t, imports.Module+"/internal/lockfile")
	if want := []string{imports.Module + "/internal/api"}; !slices.Equal(got, want) {
		t.Fatalf("internal/lockfile imports %v, want only %v", got, want)
	}
}
