package web

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Connections. The server holds at most maxConns at once (the daemon's
// file descriptors are shared with its agents and the socket API). A full
// server does not make newcomers wait behind idle connections: a new
// connection evicts the one that has waited longest of, in this order,
//
//  1. an idle connection that never carried an authorised request,
//  2. a connection that has not finished sending its first request,
//  3. an idle authorised connection.
//
// A connection serving a request is never evicted; when all are, a
// newcomer waits in the kernel's backlog until one ends. An idle
// connection that never carried an authorised request is also closed
// after unauthIdleTimeout (an authorised one keeps idleTimeout), so
// connections that send one `GET /login` and stay open cannot shut out
// the UI, the API or the agents' MCP tools.
const unauthIdleTimeout = 5 * time.Second

// conns tracks the server's connections (listener side and ConnState).
type conns struct {
	max int
	mu  sync.Mutex
	// cond is signalled when a connection ends.
	cond *sync.Cond
	all  map[net.Conn]*tracked
	seq  uint64
}

type tracked struct {
	c     net.Conn
	state http.ConnState
	// since orders connections by when they entered state.
	since  uint64
	authed atomic.Bool
	idle   *time.Timer
}

func newConns(max int) *conns {
	t := &conns{max: max, all: map[net.Conn]*tracked{}}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// listener wraps ln: Accept admits each connection under the cap.
func (t *conns) listener(ln net.Listener) net.Listener { return &trackingListener{Listener: ln, t: t} }

type trackingListener struct {
	net.Listener
	t *conns
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.t.admit(c)
	return c, nil
}

// admit registers c, evicting a connection first when the server is full,
// or waiting until one ends when none may be evicted.
func (t *conns) admit(c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.all) >= t.max {
		if v := t.victimLocked(); v != nil {
			t.dropLocked(v)
			_ = v.c.Close()
			continue
		}
		t.cond.Wait()
	}
	t.seq++
	t.all[c] = &tracked{c: c, state: http.StateNew, since: t.seq}
}

func (t *conns) victimLocked() *tracked {
	rank := func(x *tracked) int {
		switch {
		case x.state == http.StateIdle && !x.authed.Load():
			return 1
		case x.state == http.StateNew:
			return 2
		case x.state == http.StateIdle:
			return 3
		}
		return 0 // active: never
	}
	var best *tracked
	for _, x := range t.all {
		r := rank(x)
		if r == 0 {
			continue
		}
		if best == nil || r < rank(best) || (r == rank(best) && x.since < best.since) {
			best = x
		}
	}
	return best
}

func (t *conns) dropLocked(x *tracked) {
	if x.idle != nil {
		x.idle.Stop()
	}
	if t.all[x.c] == x {
		delete(t.all, x.c)
		t.cond.Broadcast()
	}
}

// connState is the http.Server's ConnState hook.
func (t *conns) connState(c net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.all[c]
	if x == nil {
		return
	}
	if s == http.StateClosed || s == http.StateHijacked {
		t.dropLocked(x)
		return
	}
	t.seq++
	x.state, x.since = s, t.seq
	if x.idle != nil {
		x.idle.Stop()
		x.idle = nil
	}
	if s == http.StateIdle && !x.authed.Load() {
		since := x.since
		x.idle = time.AfterFunc(unauthIdleTimeout, func() {
			t.mu.Lock()
			still := t.all[c] == x && x.state == http.StateIdle && x.since == since
			t.mu.Unlock()
			if still {
				_ = c.Close()
			}
		})
	}
}

// count is how many connections are open (tests).
func (t *conns) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.all)
}

type connKey struct{}

// connContext is the http.Server's ConnContext hook: a request finds its
// connection's entry, to mark it authorised.
func (t *conns) connContext(ctx context.Context, c net.Conn) context.Context {
	t.mu.Lock()
	x := t.all[c]
	t.mu.Unlock()
	if x == nil {
		return ctx
	}
	return context.WithValue(ctx, connKey{}, x)
}

// markAuthorised records that r's connection carried an authorised
// request (a bearer token or a live session): it keeps the long idle
// timeout and is evicted last.
func markAuthorised(r *http.Request) {
	if x, ok := r.Context().Value(connKey{}).(*tracked); ok {
		x.authed.Store(true)
	}
}
