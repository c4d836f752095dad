package tmux

import (
	"errors"
	"strings"
)

var (
	// ErrNoServer: no tmux server is running on this socket.
	ErrNoServer = errors.New("no tmux server running")
	// ErrNoSession: the session or pane named by a target does not exist.
	ErrNoSession = errors.New("tmux session or pane not found")
	// ErrSessionExists: new-session named a session that already exists.
	ErrSessionExists = errors.New("tmux session already exists")
	// ErrControlLost: the control-mode client died after a command was sent
	// and before its reply came, so whether tmux ran it is unknown.
	ErrControlLost = errors.New("tmux control client lost; command outcome unknown")
)

// IsNotFound reports whether err means the server, session or pane is gone.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNoServer) || errors.Is(err, ErrNoSession)
}

// Error is a failed tmux command. It names the tmux command and what tmux
// said, never the arguments (they may carry environment values).
type Error struct {
	Command string // tmux command name, e.g. "new-session"
	Target  string // session or pane target when there is one
	Msg     string // tmux's own message
	Err     error  // ErrNoServer, ErrNoSession or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tmux ")
	b.WriteString(e.Command)
	if e.Target != "" {
		b.WriteString(" (target ")
		b.WriteString(e.Target)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// classify maps tmux's message to a sentinel.
func classify(msg string) error {
	switch {
	case strings.Contains(msg, "no server running"),
		strings.Contains(msg, "error connecting to"),
		strings.Contains(msg, "server exited"),
		msg == "no sessions":
		return ErrNoServer
	case strings.Contains(msg, "can't find session"),
		strings.Contains(msg, "can't find pane"),
		strings.Contains(msg, "can't find window"),
		strings.Contains(msg, "session not found"),
		strings.Contains(msg, "no such session"):
		return ErrNoSession
	case strings.Contains(msg, "duplicate session"):
		return ErrSessionExists
	}
	return nil
}

// newError builds an *Error for command args[0].
func newError(args []string, msg string) *Error {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "failed"
	}
	e := &Error{Msg: msg, Err: classify(msg)}
	if len(args) > 0 {
		e.Command = args[0]
	}
	for i := 1; i+1 < len(args); i++ {
		if args[i] == "-t" {
			e.Target = args[i+1]
			break
		}
		if args[i] == "--" {
			break
		}
	}
	return e
}
