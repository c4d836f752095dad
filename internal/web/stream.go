package web

import (
	"context"
	"net/http"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// The event stream for pages (docs/web.md, "Live pages"). A page opens
// GET /web/events with its login cookie, never the token; the route hands
// the request to the socket's own GET /events (docs/api.md, "The event
// stream"), in process, as /api does for the token's clients. Its query
// (since, agent) and Last-Event-ID header pass through unchanged, so a
// reconnecting EventSource gets what it missed.
//
// A stream is one long response, and the server's limits must not cut it:
//   - readTimeout bounds reading the request only: net/http clears the read
//     deadline once the body is read (the read that watches for the client
//     going away has none), so a stream outlives it (a test holds that).
//   - The server sets no write deadline (listener.go); a stream clears any
//     anyway, so that one added for other answers never cuts it. The
//     socket handler bounds each write on its own (a reader that takes
//     nothing for 30 s is gone), never the stream as a whole.
//   - Nothing between the socket handler and the connection buffers: the
//     guard hands the ResponseWriter on as it is, so the socket handler's
//     flushes reach the browser; X-Accel-Buffering asks a proxy not to
//     hold them either.
//   - Shutdown waits for requests in flight: a stream would hold every
//     stop of the server for its whole grace period. Streams end when
//     Shutdown starts (streamStop).
//   - A session that ends (logout elsewhere, a new token) ends the streams
//     it opened, and a new token ends the token's streams (/api/v1/events):
//     a stream is not a way to keep reading after the login or the token is
//     gone.

// eventsRoute is the socket route of the event stream.
const eventsRoute = "/events"

// streamStopKey is the request context key of the context cancelled when
// the server serving the request shuts down (httpServer).
type streamStopKey struct{}

// pageEvents is GET /web/events: the stream, for a logged-in page.
func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request) {
	s.serveAuthorisedStream(w, r, s.loggedIn)
}

// apiEvents is GET /api/v1/events (and /api/events): the stream, for the
// token's clients. A new token ends it, as it ends the pages' streams: a
// token taken back must not keep reading.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	s.serveAuthorisedStream(w, r, s.bearerOK)
}

// serveAuthorisedStream serves the stream while authorised(r) holds.
func (s *Server) serveAuthorisedStream(w http.ResponseWriter, r *http.Request, authorised func(*http.Request) bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go s.endWhenUnauthorised(ctx, cancel, r, authorised)
	s.serveStream(w, r.WithContext(ctx), eventsRoute)
}

// endWhenUnauthorised cancels a stream once r is no longer authorised
// (its session ended, or the token changed). Each change of the sessions
// (an end, a new token) is a reason to look.
func (s *Server) endWhenUnauthorised(ctx context.Context, cancel context.CancelFunc, r *http.Request, authorised func(*http.Request) bool) {
	for {
		changed := s.sessions.changes()
		if !authorised(r) {
			cancel()
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// serveStream hands r to the socket route target as a long response: no
// write deadline, ended when the server shuts down.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, target string) {
	// An error only says the writer has no deadlines (a test recorder).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	ctx := r.Context()
	if stop, ok := ctx.Value(streamStopKey{}).(context.Context); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(stop, cancel)()
	}
	// A reverse proxy (nginx) that buffers answers would hold the events
	// back; this asks it not to.
	w.Header().Set("X-Accel-Buffering", "no")
	s.opts.API.ServeHTTP(w, socketRequest(r.WithContext(ctx), target))
}

// socketRequest is r addressed to the socket route target.
func socketRequest(r *http.Request, target string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path = target
	r2.URL.RawPath = ""
	r2.RequestURI = ""
	r2.Header.Set(api.SenderHeader, api.SenderAPI) // never the client's word
	return r2
}
