package tmux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
//
// A client is this server's when its command line is leo's control client
// of this socket name AND the socket it resolved is this Server's socket
// file: the name alone is shared by every home's server under another
// HOME/TMUX_TMPDIR and by other users' servers (under root). A client whose
// socket cannot be told (its environment unreadable, a relative
// TMUX_TMPDIR) is left alone.
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
	ours := s.SocketPath()
	if ours == "" {
		return nil, fmt.Errorf("tmux: the socket path of %q cannot be told (TMUX_TMPDIR is relative)", s.opts.Socket)
	}
	want := s.controlArgv()
	var killed []int
	for _, p := range procs {
		if p.pid == own || len(p.argv) != len(want)+1 || !slices.Equal(p.argv[1:], want) || !strings.Contains(p.argv[0], "tmux") {
			continue
		}
		if !attachedTo(p.pid, s.opts.Socket, ours) {
			continue
		}
		if err := syscall.Kill(p.pid, syscall.SIGKILL); err == nil {
			killed = append(killed, p.pid)
		}
	}
	return killed, nil
}

// attachedTo reports whether process pid, run as `tmux -L name`, resolved
// the socket file ours (unknown counts as no).
func attachedTo(pid int, name, ours string) bool {
	env, uid, err := procEnv(pid)
	if err != nil {
		return false
	}
	theirs := socketPath(env, uid, name)
	return theirs != "" && sameSocket(pid, theirs, ours)
}

// ProcsOnSocket lists the tmux processes, servers and clients, run as
// `tmux … -L name …` that reach the server a client with environment env
// (nil: ours) reaches: the same name under another HOME/TMUX_TMPDIR or
// another user is another server, and its processes are not listed. For
// tests that must kill whatever is left of their own server.
func ProcsOnSocket(name string, env []string) ([]int, error) {
	if env == nil {
		env = os.Environ()
	}
	ours := socketPath(env, os.Getuid(), name)
	if ours == "" {
		return nil, fmt.Errorf("tmux: the socket path of %q cannot be told (TMUX_TMPDIR is relative)", name)
	}
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range procs {
		if p.pid == os.Getpid() || len(p.argv) == 0 || !strings.Contains(filepath.Base(p.argv[0]), "tmux") {
			continue
		}
		named := false
		for i := 1; i+1 < len(p.argv); i++ {
			if p.argv[i] == "-L" && p.argv[i+1] == name {
				named = true
				break
			}
		}
		if named && attachedTo(p.pid, name, ours) {
			out = append(out, p.pid)
		}
	}
	return out, nil
}

// SocketPathOf is the socket file a tmux client with environment env (nil:
// ours) and our uid reaches as `-L name`; "" when a relative TMUX_TMPDIR
// makes it depend on the working directory.
func SocketPathOf(name string, env []string) string {
	if env == nil {
		env = os.Environ()
	}
	return socketPath(env, os.Getuid(), name)
}

// SocketPath is the socket file this Server's clients use, resolved as
// tmux resolves `-L name` (see socketPath) from the clients' environment.
// kill-server leaves the file behind: whoever kills a server for good
// removes it.
func (s *Server) SocketPath() string { return SocketPathOf(s.opts.Socket, s.env) }

// socketPath is where a tmux client with environment env and real uid uid
// finds the server of `-L name`, as tmux computes it: $TMUX_TMPDIR when it
// is set and resolves (tmux skips one that does not), else /tmp; then
// tmux-<uid>/<name>, symlinks resolved. "" when it cannot be told from
// here: a relative TMUX_TMPDIR depends on the client's working directory.
func socketPath(env []string, uid int, name string) string {
	dir := getenvFrom(env, "TMUX_TMPDIR")
	if dir != "" {
		if !filepath.IsAbs(dir) {
			return ""
		}
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			dir = r
		} else {
			dir = ""
		}
	}
	if dir == "" {
		dir = "/tmp"
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			dir = r
		}
	}
	base := filepath.Join(dir, "tmux-"+strconv.Itoa(uid))
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	return filepath.Join(base, name)
}

// getenvFrom is env's value of key ("" when unset; the last one wins, as
// getenv's does).
func getenvFrom(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, key+"="); ok {
			v = rest
		}
	}
	return v
}

// proc is one process: its pid and argv.
type proc struct {
	pid  int
	argv []string
}

// parseProcArgs2 decodes macOS's kern.procargs2 record: a native-endian
// 32-bit argc, the executable path, NUL padding, argc NUL-terminated
// arguments, then the environment (NUL-terminated strings up to an empty
// one; Apple's own key=value entries may follow and are harmless here). A
// record that ends early yields what it holds.
func parseProcArgs2(b []byte) (argv, env []string, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("kern.procargs2: short record")
	}
	argc := int(binary.NativeEndian.Uint32(b))
	rest := b[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, nil, errors.New("kern.procargs2: no executable path")
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	next := func() (string, bool) {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			if len(rest) == 0 {
				return "", false
			}
			i = len(rest)
		}
		s := string(rest[:i])
		rest = rest[min(i+1, len(rest)):]
		return s, true
	}
	for len(argv) < argc {
		a, ok := next()
		if !ok {
			return argv, nil, nil
		}
		argv = append(argv, a)
	}
	for {
		e, ok := next()
		if !ok || e == "" {
			return argv, env, nil
		}
		env = append(env, e)
	}
}
