//go:build !linux

package tmux

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// setDeathSignal: no parent-death signal outside Linux; the client's stdin
// closing with the daemon makes it detach and exit.
func setDeathSignal(*syscall.SysProcAttr) {}

// listProcs asks ps for every process's command line (split on spaces:
// leo's control-client argv has none inside an argument).
func listProcs() ([]proc, error) {
	out, err := exec.Command("ps", "-axww", "-o", "pid=,command=").Output()
	if err != nil {
		return nil, err
	}
	var procs []proc
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		procs = append(procs, proc{pid: pid, argv: f[1:]})
	}
	return procs, nil
}
