package tmux_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	if runtime.GOOS == "linux" {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
	}
	return syscall.Kill(pid, 0) == nil
}

// controlChildEnv makes this test binary the "daemon" of
// TestControlClientDiesWithItsDaemon: it connects a control client on the
// named socket, prints the client's pid and waits to be killed.
const controlChildEnv = "LEO_TEST_CONTROL_CHILD_SOCKET"

func TestMain(m *testing.M) {
	if socket := os.Getenv(controlChildEnv); socket != "" {
		controlChild(socket)
		return
	}
	os.Exit(hermetic.Main(m))
}

func controlChild(socket string) {
	s, err := tmux.New(tmux.Options{Socket: socket})
	if err != nil {
		os.Exit(2)
	}
	ctx := context.Background()
	if _, err := s.NewSession(ctx, tmux.SessionSpec{Name: "leo-x", Argv: []string{"cat"}}); err != nil {
		os.Exit(3)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tmux.ControlPID(s) == 0 && time.Now().Before(deadline) {
		_, _ = s.Running(ctx)
		time.Sleep(10 * time.Millisecond)
	}
	// A process holding the client's stdin open, as a child that
	// inherited it would: the client then sees no EOF when we die.
	holder := exec.Command("sleep", "60")
	holder.ExtraFiles = []*os.File{tmux.ControlStdin(s)}
	if err := holder.Start(); err != nil {
		os.Exit(4)
	}
	os.Stdout.WriteString(strconv.Itoa(tmux.ControlPID(s)) + " " + strconv.Itoa(holder.Process.Pid) + "\n")
	select {}
}

// A daemon killed with SIGKILL takes its control-mode client with it, even
// when the client's stdin stays open (held by another process here): an
// orphan would keep a killed tmux server half alive.
func TestControlClientDiesWithItsDaemon(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	socket := testutil.UniqueSocket()
	testutil.KillTmuxAtEnd(t, socket)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), controlChildEnv+"="+socket)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var pid, holder int
	if f := strings.Fields(line); len(f) == 2 {
		pid, _ = strconv.Atoi(f[0])
		holder, _ = strconv.Atoi(f[1])
	}
	if err != nil || pid <= 0 || holder <= 0 {
		t.Fatalf("child printed %q (%v)", line, err)
	}
	t.Cleanup(func() {
		for _, p := range []int{pid, holder} {
			if alive(p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	testutil.WaitFor(t, 10*time.Second, func() bool { return !alive(pid) }, "the control client to die with its daemon")
}

// ClearStaleControlClients kills another leo control client of the same
// server, never the Server's own, nor a client of another socket.
func TestClearStaleControlClientsKillsOnlyOthersOfThisServer(t *testing.T) {
	s := testutil.NewTmux(t)
	other := testutil.NewTmux(t)
	c := ctx(t)
	for _, srv := range []*tmux.Server{s, other} {
		if _, err := srv.NewSession(c, tmux.SessionSpec{Name: "leo-x", Argv: []string{"cat"}}); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 10*time.Second, func() bool { _, _ = srv.Running(c); return tmux.ControlPID(srv) != 0 }, "control client")
	}
	own, otherOwn := tmux.ControlPID(s), tmux.ControlPID(other)
	stale := exec.Command(s.Binary(), "-u", "-L", s.Socket(), "-f", "/dev/null", "-C", "attach-session", "-t", "="+tmux.ControlSession)
	stdin, err := stale.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := stale.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stale.Process.Kill() })
	// Attached once tmux answers the attach.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	killed, err := s.ClearStaleControlClients()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(killed, []int{stale.Process.Pid}) {
		t.Fatalf("killed %v, want only the stale client %d (own %d, other server's %d)", killed, stale.Process.Pid, own, otherOwn)
	}
	err = stale.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("stale client ended with %v", err)
	}
	if tmux.ControlPID(s) != own || !alive(own) || !alive(otherOwn) {
		t.Fatal("a Server's own control client was killed")
	}
}

// A server that answers every call "server exited unexpectedly" is
// reported, in plain words, after a few calls; a working one is not.
func TestProblemReportsAServerThatDoesNotAnswer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tmux")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'server exited unexpectedly' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := tmux.New(tmux.Options{Socket: "wedged", Binary: bin, DisableControl: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if p := s.Problem(); p != "" {
			t.Fatalf("after %d failures: %q", i, p)
		}
		_, _ = s.ListPanes(ctx(t))
	}
	p := s.Problem()
	if !strings.Contains(p, "does not answer") || !strings.Contains(p, "server exited unexpectedly") || !strings.Contains(p, `"wedged"`) {
		t.Fatalf("problem %q", p)
	}
	ok := testutil.NewTmux(t)
	if _, err := ok.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-x", Argv: []string{"cat"}}); err != nil {
		t.Fatal(err)
	}
	if p := ok.Problem(); p != "" {
		t.Fatalf("working server reported: %q", p)
	}
}
