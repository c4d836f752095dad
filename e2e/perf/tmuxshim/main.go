// Command tmuxshim stands in for tmux on the daemon's PATH so a benchmark
// can count every tmux command the daemon issues, however it issues it:
// each process start is logged as "exec <command>", and for a control-mode
// client (-C) every command line the daemon writes to it as "ctl <command>".
// It runs the real tmux ($LEO_SHIM_TMUX) with the same arguments and
// environment; the log is $LEO_SHIM_LOG (one line per command, O_APPEND).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

func main() {
	real := os.Getenv("LEO_SHIM_TMUX")
	if real == "" {
		fmt.Fprintln(os.Stderr, "tmuxshim: LEO_SHIM_TMUX is not set")
		os.Exit(2)
	}
	logf, err := os.OpenFile(os.Getenv("LEO_SHIM_LOG"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmuxshim:", err)
		os.Exit(2)
	}
	args := os.Args[1:]
	fmt.Fprintf(logf, "exec %s\n", command(args))
	if control(args) {
		os.Exit(proxy(real, args, logf))
	}
	logf.Close()
	err = syscall.Exec(real, append([]string{real}, args...), os.Environ())
	fmt.Fprintln(os.Stderr, "tmuxshim: exec:", err)
	os.Exit(2)
}

// control reports whether args start a control-mode client.
func control(args []string) bool {
	for _, a := range args {
		if a == "-C" || a == "-CC" {
			return true
		}
	}
	return false
}

// command is the tmux command in args (after the global flags).
func command(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-L" || a == "-S" || a == "-f" || a == "-c" || a == "-T":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "-"
}

// proxy runs the control client with piped stdin, logging each command
// line written to it; stdout and stderr pass straight through.
func proxy(real string, args []string, logf *os.File) int {
	cmd := exec.Command(real, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmuxshim:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tmuxshim:", err)
		return 2
	}
	var mu sync.Mutex
	go func() {
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				mu.Lock()
				fmt.Fprintf(logf, "ctl %s\n", firstWord(line))
				mu.Unlock()
				if _, werr := io.WriteString(in, line); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		in.Close() // EOF: the client detaches, as it would without the shim
	}()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return 2
	}
	return 0
}

func firstWord(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "-"
	}
	return f[0]
}
