package tmux

import (
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
