package tmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// errNotSent: the control client was already gone when a command was about
// to be written, so tmux never saw it and the caller may run it another way.
var errNotSent = errors.New("tmux control client not connected")

// controlClient is one `tmux -C attach -t =_leo` process. Commands are
// written one per line; replies come back in order, one %begin/%end block
// per command, so a FIFO of waiters pairs them up. Writes are serialized;
// several commands may be in flight at once.
type controlClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser

	writeMu sync.Mutex // held while queueing a waiter and writing its line

	mu      sync.Mutex
	waiters []chan *block
	dead    bool
	deadErr error
	done    chan struct{} // closed when the reader has finished

	// hungAfter is how long an abandoned reply may stay missing before
	// the client is dropped as hung.
	hungAfter time.Duration

	stderr bytes.Buffer
}

// startControl launches the client and waits for tmux's answer to the
// attach itself (a flags=0 block). A %error there (no server, no such
// session) is returned as an *Error.
func startControl(ctx context.Context, binary string, env []string, argv []string, hungAfter time.Duration) (*controlClient, error) {
	cmd := exec.Command(binary, argv...)
	cmd.Env = env
	// Own process group: a ^C aimed at the daemon's terminal must not take
	// the control client down with it. But it dies with the daemon: an
	// orphaned control client can keep a killed server half alive.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	c := &controlClient{cmd: cmd, done: make(chan struct{}), hungAfter: hungAfter}
	cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("tmux control client: %w", err)
	}
	attached := make(chan *block, 1)
	go c.read(stdout, attached)

	select {
	case b := <-attached:
		if b.Error {
			c.kill()
			return nil, newError([]string{"attach-session", "-t", "=" + ControlSession}, strings.Join(b.Lines, "\n"))
		}
		return c, nil
	case <-c.done:
		c.kill()
		c.mu.Lock()
		msg := strings.TrimSpace(c.stderr.String())
		c.mu.Unlock()
		if msg == "" {
			msg = "control client exited during attach"
		}
		return nil, newError([]string{"attach-session", "-t", "=" + ControlSession}, msg)
	case <-ctx.Done():
		c.kill()
		return nil, fmt.Errorf("tmux control client attach: %w", ctx.Err())
	}
}

// read drains stdout for the client's whole life; tmux needs a prompt
// reader, or it stops sending to a slow client.
func (c *controlClient) read(r io.Reader, attached chan<- *block) {
	defer func() {
		c.markDead(ErrControlLost)
		_ = c.cmd.Wait()
		close(c.done)
	}()
	br := bufio.NewReaderSize(r, 64<<10)
	var p frameParser
	sawAttach := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return // EOF or broken pipe: the client is gone
		}
		line = strings.TrimSuffix(line, "\n")
		b, note := p.feed(line)
		if note != "" {
			if note == "%exit" || strings.HasPrefix(note, "%exit ") {
				c.markDead(ErrControlLost)
			}
			continue
		}
		if b == nil {
			continue
		}
		if !b.Ours {
			if !sawAttach {
				sawAttach = true
				attached <- b
			}
			continue
		}
		c.mu.Lock()
		var w chan *block
		if len(c.waiters) > 0 {
			w = c.waiters[0]
			c.waiters = c.waiters[1:]
		}
		c.mu.Unlock()
		if w != nil {
			w <- b // buffered, never blocks
		}
	}
}

// markDead fails every waiter and refuses new commands.
func (c *controlClient) markDead(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.dead = true
	c.deadErr = err
	for _, w := range c.waiters {
		close(w)
	}
	c.waiters = nil
}

func (c *controlClient) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dead
}

// do sends one command and waits for its reply block. It returns
// errNotSent if the line never reached tmux, ErrControlLost if the client
// died before answering, or *Error for a %error reply.
func (c *controlClient) do(ctx context.Context, args []string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("tmux %s: %w", args[0], err)
	}
	line := commandLine(args) + "\n"
	w := make(chan *block, 1)

	c.writeMu.Lock()
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		c.writeMu.Unlock()
		return "", errNotSent
	}
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	_, err := io.WriteString(c.stdin, line)
	c.writeMu.Unlock()
	if err != nil {
		// A failed write on a pipe means the reader side is gone; tmux may
		// have seen part of the line at most, which it cannot run.
		c.kill()
		return "", errNotSent
	}

	select {
	case b, ok := <-w:
		if !ok {
			return "", ErrControlLost
		}
		out := strings.Join(b.Lines, "\n")
		if b.Error {
			return "", newError(args, out)
		}
		return out, nil
	case <-ctx.Done():
		// The caller gave up; the reply will still come and is dropped
		// (the waiter stays queued, so pairing stays right). Only a tmux
		// that stays silent for a whole further timeout is taken as hung:
		// then this client goes and the next command reconnects.
		go func() {
			select {
			case <-w:
			case <-time.After(c.hungAfter):
				c.kill()
			}
		}()
		return "", fmt.Errorf("tmux %s over control mode: %w", args[0], ctx.Err())
	}
}

// close detaches politely (EOF on stdin makes tmux send %exit and the
// client quit), then kills after a grace period.
func (c *controlClient) close() {
	c.writeMu.Lock()
	_ = c.stdin.Close()
	c.writeMu.Unlock()
	select {
	case <-c.done:
	case <-time.After(time.Second):
		c.kill()
		<-c.done
	}
}

func (c *controlClient) kill() {
	c.markDead(ErrControlLost)
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	c.writeMu.Lock()
	_ = c.stdin.Close()
	c.writeMu.Unlock()
}

// pid of the client process (tests kill it to prove reconnection).
func (c *controlClient) pid() int {
	if c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() < 64<<10 {
		l.w.Write(p)
	}
	return len(p), nil
}
