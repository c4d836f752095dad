package tmux

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setDeathSignal: no parent-death signal outside Linux; the client's stdin
// closing with the daemon makes it detach and exit.
func setDeathSignal(*syscall.SysProcAttr) {}

// listProcs lists every process with the kernel's process table
// (kern.proc.all) and reads each one's argv from kern.procargs2, which the
// kernel gives for our own processes (all of them for root); the others
// are skipped. No ps, no lsof, and arguments keep their spaces.
func listProcs() ([]proc, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	var out []proc
	for i := range kps {
		pid := int(kps[i].Proc.P_pid)
		if pid <= 0 {
			continue
		}
		raw, err := unix.SysctlRaw("kern.procargs2", pid)
		if err != nil {
			continue
		}
		argv, _, err := parseProcArgs2(raw)
		if err != nil || len(argv) == 0 {
			continue
		}
		out = append(out, proc{pid: pid, argv: argv})
	}
	return out, nil
}

// procEnv reads a process's environment as it was exec'd (kern.procargs2,
// after the arguments) and its real uid (kern.proc.pid), the two things
// tmux resolves `-L name` from.
func procEnv(pid int) (env []string, uid int, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return nil, 0, err
	}
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, 0, err
	}
	_, env, err = parseProcArgs2(raw)
	if err != nil {
		return nil, 0, err
	}
	return env, int(kp.Eproc.Pcred.P_ruid), nil
}

// sameSocket: macOS has no per-process mount namespaces to look through,
// so the resolved paths decide.
func sameSocket(_ int, theirs, ours string) bool { return theirs == ours }
