package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Timeouts of the HTTP server. A client must send its headers within
// readHeaderTimeout and its whole request within readTimeout (a slowloris
// is cut off); answers have no write deadline, since a task run the caller
// waits for may take its whole timeout.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 90 * time.Second
	maxHeaderBytes    = 64 << 10
	// maxConns bounds open connections (see conns.go for who gives way
	// when the server is full).
	maxConns = 512
)

// listener is the server's place on the network: where it listens, or
// why it does not.
type listener struct {
	mu    sync.Mutex
	hs    *http.Server
	addr  string
	state *api.WebState // nil: web disabled
}

// Sync makes the listener match the running config: listen when
// web.enabled (minting the token if needed), stop when not, move when the
// address changed. A failure (the port is taken) is kept in State and
// logged; it never stops the daemon. Called at start, after every reload,
// and now and then while a listen has failed (Retry).
func (s *Server) Sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.config()
	if !cfg.WebEnabled() {
		s.stopLocked(context.Background())
		s.state = nil
		return
	}
	addr := cfg.WebAddr()
	url := cfg.WebLocalURL()
	if err := s.loadToken(); err != nil {
		s.opts.Log.Error("web server: no usable API token; the API and logins are refused", "err", err)
	}
	if s.hs != nil && s.addr == addr {
		s.state.URL = url
		return
	}
	s.stopLocked(context.Background())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		msg := fmt.Sprintf("cannot listen on %s: %v", addr, unwrapOp(err))
		if s.state == nil || s.state.Error != msg {
			s.opts.Log.Error("web server not serving; the daemon and its agents keep running", "addr", addr, "err", unwrapOp(err))
		}
		s.state = &api.WebState{URL: url, Error: msg}
		return
	}
	hs, lim := s.httpServer(maxConns)
	s.hs, s.addr = hs, addr
	s.state = &api.WebState{URL: url, Serving: true}
	s.opts.Log.Info("web server listening", "url", url)
	go func() {
		if err := hs.Serve(lim.listener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.opts.Log.Error("web server stopped", "err", err)
			s.mu.Lock()
			if s.hs == hs {
				s.hs = nil
				s.state = &api.WebState{URL: url, Error: err.Error()}
			}
			s.mu.Unlock()
		}
	}()
}

// httpServer is the server's HTTP server and the connection tracker its
// listener is wrapped with (conns.go), holding at most max connections.
// Its requests carry the context its Shutdown cancels, which ends the
// event streams (stream.go) so that they do not hold the stop.
func (s *Server) httpServer(max int) (*http.Server, *conns) {
	lim := newConns(max)
	stop, cancel := context.WithCancel(context.Background())
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       s.readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.opts.Log.Handler(), slog.LevelDebug),
		ConnState:         lim.connState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(lim.connContext(ctx, c), streamStopKey{}, stop)
		},
	}
	hs.RegisterOnShutdown(cancel)
	return hs, lim
}

// Retry tries again to listen after a failed listen (the port may be free
// now); it does nothing while serving or disabled.
func (s *Server) Retry() {
	s.mu.Lock()
	failed := s.state != nil && !s.state.Serving
	s.mu.Unlock()
	if failed {
		s.Sync()
	}
}

// State is what /health reports: nil when web is disabled.
func (s *Server) State() *api.WebState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		return nil
	}
	st := *s.state
	return &st
}

func (s *Server) stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked(ctx)
}

func (s *Server) stopLocked(ctx context.Context) error {
	if s.hs == nil {
		return nil
	}
	hs := s.hs
	s.hs, s.addr = nil, ""
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		return hs.Close()
	}
	return nil
}

// unwrapOp drops net.OpError's repetition of the address.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
