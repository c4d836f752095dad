// Package proc identifies processes leo may have to signal later (a TUI
// that ignores the hangup, a task run's process group a killed daemon
// left behind) by their start time, so that a reused pid is never taken
// for them.
package proc

import (
	"fmt"
	"os"
	"strings"
)

// Start identifies a running process by its start time (field 22 of
// /proc/<pid>/stat, after the command name). "" when pid is not running,
// is a zombie, or cannot be read (no /proc, as on macOS: then leo signals
// nothing).
func Start(pid int) string {
	if pid <= 0 {
		return ""
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(data)
	// The command name is in parentheses and may hold spaces.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); start time is field 22. A zombie has ended.
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}
