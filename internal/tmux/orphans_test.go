package tmux_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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

// startStale starts a control client of srv as a killed daemon would have
// left it (same argv, same environment), attached, and returns it.
func startStale(t *testing.T, srv *tmux.Server) *exec.Cmd {
	t.Helper()
	stale := exec.Command(srv.Binary(), "-u", "-L", srv.Socket(), "-f", "/dev/null", "-C", "attach-session", "-t", "="+tmux.ControlSession)
	stale.Env = srv.AttachEnv()
	stdin, err := stale.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close() })
	stdout, err := stale.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stale.Process.Kill(); _ = stale.Wait() })
	// Attached once tmux answers the attach.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	return stale
}

// withControl starts srv's own control client (a session makes the server).
func withControl(t *testing.T, srv *tmux.Server) int {
	t.Helper()
	c := ctx(t)
	if _, err := srv.NewSession(c, tmux.SessionSpec{Name: "leo-x", Argv: []string{"cat"}}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { _, _ = srv.Running(c); return tmux.ControlPID(srv) != 0 }, "control client")
	return tmux.ControlPID(srv)
}

// killedBySIGKILL waits for cmd and reports whether SIGKILL ended it.
func killedBySIGKILL(cmd *exec.Cmd) error {
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return fmt.Errorf("stale client %d ended with %v, want SIGKILL", cmd.Process.Pid, err)
	}
	return nil
}

// ClearStaleControlClients kills another leo control client of the same
// server, never the Server's own, nor a client of another socket.
func TestClearStaleControlClientsKillsOnlyOthersOfThisServer(t *testing.T) {
	s := testutil.NewTmux(t)
	other := testutil.NewTmux(t)
	own, otherOwn := withControl(t, s), withControl(t, other)
	stale := startStale(t, s)
	killed, err := s.ClearStaleControlClients()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(killed, []int{stale.Process.Pid}) {
		t.Fatalf("killed %v, want only the stale client %d (own %d, other server's %d)", killed, stale.Process.Pid, own, otherOwn)
	}
	if err := killedBySIGKILL(stale); err != nil {
		t.Fatal(err)
	}
	if tmux.ControlPID(s) != own || !alive(own) || !alive(otherOwn) {
		t.Fatal("a Server's own control client was killed")
	}
}

// Two homes whose tmux servers have the same socket name (another HOME and
// TMUX_TMPDIR, as a test's or a second checkout's ~/.leo has) are two
// servers: clearing one's stale clients never touches the other's clients,
// its own or stale (issue 15 item 5).
func TestClearStaleControlClientsLeavesAnotherHomesServerOfTheSameName(t *testing.T) {
	name := testutil.UniqueSocket()
	home := func() *tmux.Server {
		// Short: a socket path holds at most 104 bytes.
		dir, err := os.MkdirTemp("", "lh")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		return testutil.NewTmux(t, func(o *tmux.Options) {
			o.Socket = name
			o.Env = append(os.Environ(), "TMUX_TMPDIR="+dir)
		})
	}
	a, b := home(), home()
	if a.SocketPath() == b.SocketPath() {
		t.Fatalf("both homes resolve %s", a.SocketPath())
	}
	ownA, ownB := withControl(t, a), withControl(t, b)
	staleA, staleB := startStale(t, a), startStale(t, b)

	// The listing a test's clean-up kills from is A's alone too.
	onA, err := tmux.ProcsOnSocket(name, a.AttachEnv())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(onA, ownA) || !slices.Contains(onA, staleA.Process.Pid) || slices.Contains(onA, ownB) || slices.Contains(onA, staleB.Process.Pid) {
		t.Fatalf("ProcsOnSocket(A) = %v (A own %d, A stale %d, B own %d, B stale %d)", onA, ownA, staleA.Process.Pid, ownB, staleB.Process.Pid)
	}

	killed, err := a.ClearStaleControlClients()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(killed, []int{staleA.Process.Pid}) {
		t.Fatalf("home A killed %v, want only its stale client %d (B's own %d, B's stale %d)", killed, staleA.Process.Pid, ownB, staleB.Process.Pid)
	}
	if err := killedBySIGKILL(staleA); err != nil {
		t.Fatal(err)
	}
	if !alive(ownB) || !alive(staleB.Process.Pid) || !alive(ownA) {
		t.Fatalf("home A's clearing touched a client it does not own (A own alive %v, B own alive %v, B stale alive %v)", alive(ownA), alive(ownB), alive(staleB.Process.Pid))
	}

	killed, err = b.ClearStaleControlClients()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(killed, []int{staleB.Process.Pid}) {
		t.Fatalf("home B killed %v, want only its stale client %d (A's own %d)", killed, staleB.Process.Pid, ownA)
	}
	if err := killedBySIGKILL(staleB); err != nil {
		t.Fatal(err)
	}
	if !alive(ownA) || !alive(ownB) {
		t.Fatal("a home's own control client was killed")
	}
	// Both servers still answer their own clients.
	for _, srv := range []*tmux.Server{a, b} {
		if _, err := srv.Running(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
}

// socketPath mirrors tmux: TMUX_TMPDIR when it resolves, else /tmp; a
// relative one cannot be told from another process.
func TestSocketPathResolvesAsTmuxDoes(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"TMUX_TMPDIR=" + dir}, filepath.Join(real, "tmux-7", "leo")},
		{[]string{"TMUX_TMPDIR=" + link}, filepath.Join(real, "tmux-7", "leo")},
		{[]string{"TMUX_TMPDIR=/nonexistent/x"}, filepath.Join(tmp, "tmux-7", "leo")},
		{[]string{"TMUX_TMPDIR="}, filepath.Join(tmp, "tmux-7", "leo")},
		{nil, filepath.Join(tmp, "tmux-7", "leo")},
		{[]string{"TMUX_TMPDIR=/nonexistent", "TMUX_TMPDIR=" + dir}, filepath.Join(real, "tmux-7", "leo")},
		{[]string{"TMUX_TMPDIR=rel/dir"}, ""},
	} {
		if got := tmux.SocketPathFor(c.env, 7, "leo"); got != c.want {
			t.Errorf("socketPath(%q) = %q, want %q", c.env, got, c.want)
		}
	}
}

// A kern.procargs2 record (macOS) decodes to its argv and environment,
// however the padding falls, and a truncated one yields what it holds.
func TestParseProcArgs2(t *testing.T) {
	rec := func(argc uint32, body string) []byte {
		b := binary.NativeEndian.AppendUint32(nil, argc)
		return append(b, body...)
	}
	argv, env, err := tmux.ParseProcArgs2(rec(3, "/usr/local/bin/tmux\x00\x00\x00\x00tmux\x00-L\x00leo x\x00HOME=/u\x00TMUX_TMPDIR=/t\x00\x00ptr_munge=\x00"))
	if err != nil || !slices.Equal(argv, []string{"tmux", "-L", "leo x"}) || !slices.Equal(env, []string{"HOME=/u", "TMUX_TMPDIR=/t"}) {
		t.Fatalf("got %q %q %v", argv, env, err)
	}
	argv, env, err = tmux.ParseProcArgs2(rec(3, "/bin/tmux\x00tmux\x00-L"))
	if err != nil || !slices.Equal(argv, []string{"tmux", "-L"}) || env != nil {
		t.Fatalf("truncated: got %q %q %v", argv, env, err)
	}
	for _, bad := range [][]byte{nil, {1, 0}, rec(1, "no-nul")} {
		if _, _, err := tmux.ParseProcArgs2(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
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
