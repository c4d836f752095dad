package web

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/clock"
)

// Failed logins: a wrong token posted to /login, or a wrong bearer token
// on /api (a request without one is not a guess). Each is logged with the
// client's address, never with what was tried; and a client's repeated
// failures are answered ever more slowly. The right token is never
// slowed nor refused, whatever came from its address before: on loopback
// every client shares one address, and a guesser must not lock the user,
// the UI or the agents' MCP tools out.
const (
	// freeFailures are answered at once.
	freeFailures = 3
	// The delay after that starts at firstDelay and doubles per failure,
	// up to maxDelay.
	firstDelay = 250 * time.Millisecond
	maxDelay   = 5 * time.Second
	// forgetAfter: a client with no failure for this long starts afresh;
	// a successful login does so at once.
	forgetAfter = 15 * time.Minute
	// maxDelayed bounds failed attempts waiting out their delay, server-
	// wide: each holds a connection. Beyond it a failed attempt's
	// connection is closed with no answer.
	maxDelayed = 32
	// maxTracked bounds the clients remembered.
	maxTracked = 1024
	// loggedFailures per client are logged one by one; after that every
	// logEvery-th.
	loggedFailures = 10
	logEvery       = 100
)

type logins struct {
	clk     clock.Clock
	mu      sync.Mutex
	clients map[string]*failures
	delayed chan struct{}
}

type failures struct {
	n    int
	last time.Time
}

func newLogins(clk clock.Clock) *logins {
	return &logins{clk: clk, clients: map[string]*failures{}, delayed: make(chan struct{}, maxDelayed)}
}

// clientOf is the address a request came from (the TCP peer: a proxy's
// forwarded-for header is not trusted).
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// failed counts a failure of client and returns the count and the delay
// its answer waits.
func (l *logins) failed(client string) (int, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	f := l.clients[client]
	if f == nil || now.Sub(f.last) > forgetAfter {
		if f == nil && len(l.clients) >= maxTracked {
			l.forgetLocked(now)
		}
		f = &failures{}
		l.clients[client] = f
	}
	f.n++
	f.last = now
	return f.n, backoff(f.n)
}

// backoff is the delay of the n-th failure in a row.
func backoff(n int) time.Duration {
	if n <= freeFailures {
		return 0
	}
	d := firstDelay
	for i := freeFailures + 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// forgetLocked drops stale clients, and the stalest one if none is.
func (l *logins) forgetLocked(now time.Time) {
	var oldest string
	for c, f := range l.clients {
		if now.Sub(f.last) > forgetAfter {
			delete(l.clients, c)
			continue
		}
		if oldest == "" || f.last.Before(l.clients[oldest].last) {
			oldest = c
		}
	}
	if len(l.clients) >= maxTracked {
		delete(l.clients, oldest)
	}
}

// succeeded forgets client's failures.
func (l *logins) succeeded(client string) {
	l.mu.Lock()
	delete(l.clients, client)
	l.mu.Unlock()
}

// loginFailed logs a failed login and waits out its delay; the caller then
// answers it. what names the attempt ("POST /login", "bearer token on GET
// /api/health"). A failure that cannot wait (too many wait already)
// aborts the connection without an answer.
func (s *Server) loginFailed(r *http.Request, what string) {
	client := clientOf(r)
	n, delay := s.logins.failed(client)
	if n <= loggedFailures || n%logEvery == 0 {
		s.opts.Log.Warn("web: failed login (wrong token)", "client", client, "attempt", what, "failures", n, "delay", delay)
	}
	if delay == 0 {
		return
	}
	select {
	case s.logins.delayed <- struct{}{}:
	default:
		panic(http.ErrAbortHandler) // closes the connection, logs nothing
	}
	defer func() { <-s.logins.delayed }()
	t := s.logins.clk.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C():
	case <-r.Context().Done():
	}
}
