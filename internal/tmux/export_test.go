package tmux

import (
	"context"
	"os"
)

// ControlPID is the pid of the live control-mode client, or 0.
func ControlPID(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctl == nil || !s.ctl.alive() {
		return 0
	}
	return s.ctl.pid()
}

// SetBuffer exposes setBuffer for the quoting round-trip tests.
func SetBuffer(ctx context.Context, s *Server, name, text string) error {
	return s.setBuffer(ctx, name, text)
}

// ControlStdin is the write end of the live control client's stdin (nil
// when none), so a test can keep it open in another process.
func ControlStdin(s *Server) *os.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctl == nil {
		return nil
	}
	f, ok := s.ctl.stdin.(interface{ Fd() uintptr })
	if !ok {
		return nil
	}
	return os.NewFile(f.Fd(), "control-stdin")
}

// SocketPathFor exposes socketPath.
func SocketPathFor(env []string, uid int, name string) string { return socketPath(env, uid, name) }

// ParseProcArgs2 exposes parseProcArgs2.
var ParseProcArgs2 = parseProcArgs2
