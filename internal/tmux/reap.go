package tmux

import "context"

// NudgeReap makes the server fork and reap a trivial child. tmux 3.3a
// sometimes misses a SIGCHLD (seen here with several servers busy at once):
// the dead pane's process stays an unreaped zombie and pane_dead_status
// stays empty. The waitpid loop that the next SIGCHLD runs reaps every
// exited child, so a short run-shell job fills the status in.
func (s *Server) NudgeReap(ctx context.Context) error {
	_, err := s.run(ctx, mutating, "run-shell", "true")
	return err
}
