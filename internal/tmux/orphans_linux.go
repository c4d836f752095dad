package tmux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// setDeathSignal makes the kernel SIGKILL the child when the daemon dies,
// however it dies: a control client must never outlive its daemon. (Linux
// sends it when the thread that started the child exits; Go keeps that
// thread unless a goroutine locked to it ends, and a client lost that way
// is reconnected like any other.)
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// listProcs reads every process's argv from /proc.
func listProcs() ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(data) == 0 {
			continue
		}
		out = append(out, proc{pid: pid, argv: strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")})
	}
	return out, nil
}

// procEnv reads a process's environment as it was exec'd (tmux never
// changes TMUX_TMPDIR) and its real uid, the two things tmux resolves
// `-L name` from. Another user's process is unreadable unless we are root.
func procEnv(pid int) (env []string, uid int, err error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	data, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		return nil, 0, err
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return nil, 0, err
	}
	uid = -1
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				uid, err = strconv.Atoi(f[0])
			}
			break
		}
	}
	if uid < 0 || err != nil {
		return nil, 0, fmt.Errorf("/proc/%d/status: no real uid", pid)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"), uid, nil
}

// sameSocket reports whether theirs, the socket path process pid resolved,
// is the file ours names. The path is looked up through the process's own
// root (/proc/<pid>/root), so a client in another mount namespace (a
// container seen from the host) whose path reads the same is not taken for
// ours. With either file gone (a server on its way out) the paths must be
// equal and the roots the same.
func sameSocket(pid int, theirs, ours string) bool {
	root := filepath.Join("/proc", strconv.Itoa(pid), "root")
	a, errA := os.Stat(ours)
	b, errB := os.Stat(root + theirs)
	if errA == nil && errB == nil {
		return os.SameFile(a, b)
	}
	if theirs != ours {
		return false
	}
	r1, err1 := os.Stat("/")
	r2, err2 := os.Stat(root)
	return err1 == nil && err2 == nil && os.SameFile(r1, r2)
}
