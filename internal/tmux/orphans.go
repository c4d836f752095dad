package tmux

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"
)

// wedgedAfter is how many tmux calls in a row must answer "server exited
// unexpectedly" before the server is reported as not answering: one such
// answer is normal while a server is being killed or started.
const wedgedAfter = 3

// noteResult keeps the count of consecutive "server exited unexpectedly"
// answers (see Problem). Any other outcome resets it.
func (s *Server) noteResult(err error) {
	s.wedgeMu.Lock()
	defer s.wedgeMu.Unlock()
	if err != nil && strings.Contains(err.Error(), "server exited unexpectedly") {
		if s.wedged == 0 {
			s.wedgedSince = time.Now()
		}
		s.wedged++
		return
	}
	s.wedged = 0
}

// Problem says, in plain words, that this tmux server does not answer
// (every recent call was refused with "server exited unexpectedly"), and
// "" while it works. A server left half-dead by an orphaned client is the
// usual cause; ClearStaleControlClients removes leo's own.
func (s *Server) Problem() string {
	s.wedgeMu.Lock()
	n, since := s.wedged, s.wedgedSince
	s.wedgeMu.Unlock()
	if n < wedgedAfter {
		return ""
	}
	return fmt.Sprintf("the tmux server of socket %q does not answer: its last %d calls failed with \"server exited unexpectedly\" (since %s), so agents can be neither started nor reached. "+
		"leo clears stale control clients of its own; if this persists, run `tmux -L %s kill-server` and end any process still running with `-L %s`",
		s.opts.Socket, n, since.UTC().Format(time.RFC3339), s.opts.Socket, s.opts.Socket)
}

// controlArgv is the argument list of leo's control-mode client of this
// server after the binary (see startControl).
func (s *Server) controlArgv() []string {
	return []string{"-u", "-L", s.opts.Socket, "-f", "/dev/null", "-C", "attach-session", "-t", "=" + ControlSession}
}

// ClearStaleControlClients kills (SIGKILL) every leo control-mode client of
// this server but the Server's own: what a daemon killed without a chance
// to close its client (SIGKILL, mid-start) left behind. Such a client can
// keep a killed server half alive, answering every new client "server
// exited unexpectedly". Only the daemon holding the home's lock calls it,
// so no other live daemon of this server can own one. It returns the pids
// it killed.
func (s *Server) ClearStaleControlClients() ([]int, error) {
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	own := 0
	if s.ctl != nil {
		own = s.ctl.pid()
	}
	s.mu.Unlock()
	want := s.controlArgv()
	var killed []int
	for _, p := range procs {
		if p.pid == own || len(p.argv) != len(want)+1 || !slices.Equal(p.argv[1:], want) || !strings.Contains(p.argv[0], "tmux") {
			continue
		}
		if err := syscall.Kill(p.pid, syscall.SIGKILL); err == nil {
			killed = append(killed, p.pid)
		}
	}
	return killed, nil
}

// proc is one process: its pid and argv.
type proc struct {
	pid  int
	argv []string
}
