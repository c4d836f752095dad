package tmux

import "context"

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
