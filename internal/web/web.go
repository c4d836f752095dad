// Package web is leo's network surface on web.bind:web.port: the HTTP JSON
// API (/api/*, bearer token) and the browser UI (/web/*, a login cookie),
// both thin layers over the daemon's socket routes.
//
// The API does not handle anything itself: each /api path is mapped onto
// the socket route it serves (api.SocketPath) and handed to the very
// handler that serves the socket. The UI reads and acts through an
// in-process client of that same handler. So every surface runs one
// implementation of each operation.
//
// Every request first passes the guard (guard.go): Host and Origin pinned
// to this server's names, a capped body, security headers. Then auth.go
// decides who may do what.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

// Options are what the web server is built from.
type Options struct {
	Home home.Home
	// Config is the running config (pinning, forms); never nil once the
	// daemon serves.
	Config func() *config.Config
	// API is the daemon's socket handler: the one implementation of every
	// operation.
	API http.Handler
	// Version is the daemon's version (the service page).
	Version string
	// LogPath is the daemon's log file (the service page's tail).
	LogPath string
	Log     *slog.Logger
	// Clock paces failed logins (logins.go); the real clock when nil.
	Clock clock.Clock
}

// Server serves the HTTP API and the UI. Listen/Sync (listener.go) put it
// on the configured address; Handler serves tests without a socket.
type Server struct {
	opts    Options
	client  *client.Client
	pages   *pages
	handler http.Handler
	// token is the bearer token in use (nil: none could be had; /api and
	// logins then fail closed).
	token atomic.Pointer[secret]
	// sessions are the browser logins.
	sessions *sessions
	// logins counts failed logins per client (logins.go).
	logins *logins
	// readTimeout is the whole request's deadline (readTimeout; tests
	// shorten it).
	readTimeout time.Duration

	listener
}

// New builds the server. Nothing listens until Sync.
func New(opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	s := &Server{opts: opts, client: client.ForHandler(sentFrom(opts.API, api.SenderWeb)), sessions: loadSessions(opts.Home.WebSessionsPath(), opts.Log), logins: newLogins(opts.Clock), readTimeout: readTimeout}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	s.pages = p
	s.handler = s.guard(s.route())
	return s, nil
}

// Handler is the whole server behind its guard.
func (s *Server) Handler() http.Handler { return s.handler }

// route dispatches by prefix. No path is cleaned or redirected: a path
// reaches the route it names or fails, as on the socket.
func (s *Server) route() http.Handler {
	ui := s.uiRoutes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An unclean path is refused, never cleaned and redirected: a
		// redirect could lead a client (its bearer token along) from one
		// route to another (//api/…, /static/../api/…).
		if !api.IsCleanPath(r.URL.Path) {
			writeError(w, api.Errorf(api.CodeInvalidArgs, "%s %q: the path is not clean (empty, . or .. segments); leo does not redirect", r.Method, clip(r.URL.Path)))
			return
		}
		if r.URL.Path == api.APIPrefix || strings.HasPrefix(r.URL.Path, api.APIPrefix+"/") {
			s.serveAPI(w, r)
			return
		}
		ui.ServeHTTP(w, r)
	})
}

// serveAPI hands an authorized /api request to the socket route it maps
// onto.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !s.bearerOK(r) {
		if r.Header.Get("Authorization") != "" {
			s.loginFailed(r, "bearer token on "+r.Method+" "+clip(r.URL.Path))
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="leo"`)
		writeError(w, api.Errorf(api.CodeUnauthorized, "this API needs Authorization: Bearer <token> (the token is in %s; `leo pair` shows it)", s.opts.Home.TokenPath()))
		return
	}
	target, ok := api.SocketPath(r.URL.Path)
	if !ok {
		writeError(w, api.Errorf(api.CodeNotFound, "%s %s: no such API route (docs/api.md lists them)", r.Method, r.URL.Path))
		return
	}
	if target == eventsRoute {
		s.apiEvents(w, r) // stream.go: no deadlines, ends at shutdown and with the token
		return
	}
	s.opts.API.ServeHTTP(w, socketRequest(r, target))
}

// config is the running config.
func (s *Server) config() *config.Config { return s.opts.Config() }

// Close stops listening and waits (bounded by ctx) for requests in flight.
func (s *Server) Close(ctx context.Context) error { return s.stop(ctx) }

// sentFrom is h with every request marked as sent from sender
// (api.SenderHeader): the UI's in-process client acts for the browser.
func sentFrom(h http.Handler, sender string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set(api.SenderHeader, sender)
		h.ServeHTTP(w, r)
	})
}
