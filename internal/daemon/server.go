package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/notify"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// server answers the socket API. Its handlers (routes.go) are thin: decode,
// call the manager or the config store, encode.
type server struct {
	version  string
	homeRoot string
	pid      int
	started  time.Time
	// tmux is the tmux binary's version (/health "tmux").
	tmux     string
	resolver binpath.Resolver
	agents   Agents
	tasks    Tasks
	// config is the running config (GET /templates).
	config func() *config.Config
	// setEnabled edits tasks.<name>.enabled in leo.yaml.
	setEnabled func(task string, enabled bool) error
	// turnEnds takes the harnesses' turn-end reports (POST /hooks/turn-end).
	turnEnds *turnend.Hub
	// reload re-reads and validates leo.yaml, swapping it in only when valid.
	reload func(ctx context.Context) (api.ReloadResult, error)
	log    *slog.Logger
	// drainer pauses deliveries and waits for turns (POST /drain).
	drainer *drainer
	// web reports the web server's state (/health "web"); nil before it
	// exists.
	web func() *api.WebState
	// problems lists what /health reports under "problems".
	problems func() []string
	// notifier is the notifier engine (GET /notify, POST /notify/test);
	// nil in tests that build a server without one.
	notifier *notify.Engine

	// ready is closed when boot restore is done. Until then /health says
	// ready:false and the other routes wait (up to readyWait) for it.
	ready     chan struct{}
	readyOnce sync.Once
	readyWait time.Duration
	// events is the daemon's event stream (GET /events); heartbeat how
	// often an idle stream gets a comment (0: defaultHeartbeat).
	events    *events.Bus
	heartbeat time.Duration
	// streamWriteWait bounds one write to a stream's reader (0:
	// defaultStreamWriteWait).
	streamWriteWait time.Duration

	// stopping is closed when shutdown begins, releasing waiting requests.
	stopping chan struct{}
	stopOnce sync.Once
}

func (s *server) stopServing() { s.stopOnce.Do(func() { close(s.stopping) }) }

func (s *server) markReady() { s.readyOnce.Do(func() { close(s.ready) }) }

func (s *server) isReady() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// awaitReady holds a request that arrived during boot restore until the
// daemon is ready, so a command typed right after `leo service` starts just
// takes a moment longer instead of failing.
func (s *server) awaitReady(ctx context.Context) error {
	if s.isReady() {
		return nil
	}
	t := time.NewTimer(s.readyWait)
	defer t.Stop()
	select {
	case <-s.ready:
		return nil
	case <-s.stopping:
		return api.Errorf(api.CodeNotReady, "leo daemon is shutting down")
	case <-ctx.Done():
		return api.Errorf(api.CodeNotReady, "leo daemon is still restoring agents")
	case <-t.C:
		return api.Errorf(api.CodeNotReady, "leo daemon is still restoring agents; try again shortly")
	}
}

// health is computed fresh on every call: claude is looked up each time, so
// installing it while the daemon runs shows up without a restart.
func (s *server) health() api.Health {
	h := api.Health{
		Version: s.version,
		PID:     s.pid,
		Started: s.started,
		Ready:   s.isReady(),
		Home:    s.homeRoot,
		Tmux:    s.tmux,
		Agents:  len(s.agents.List()),
	}
	if s.problems != nil {
		h.Problems = s.problems()
	}
	if s.web != nil {
		h.Web = s.web()
	}
	if p, err := s.resolver.Lookup("claude"); err == nil {
		h.Claude = api.ClaudeState{Found: true, Path: p}
	}
	return h
}

// endpoint is a route's body: it returns the value to encode (status 200)
// or an error (its code picks the status).
type endpoint func(r *http.Request) (any, error)

// handle adapts an endpoint; gated endpoints wait for boot restore first.
func (s *server) handle(gated bool, fn endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var (
			v   any
			err error
		)
		if gated {
			err = s.awaitReady(r.Context())
		}
		if err == nil {
			v, err = fn(r)
		}
		status := http.StatusOK
		if err != nil {
			e := asAPIError(err)
			status = api.HTTPStatus(e.Code)
			v = e
			if status >= 500 {
				s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "code", e.Code, "err", e.Message)
			}
		}
		api.WriteJSON(w, status, v)
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", status, "took", time.Since(start))
	}
}

// asAPIError gives every error a stable code; an uncoded one is internal.
func asAPIError(err error) *api.Error {
	var e *api.Error
	if errors.As(err, &e) {
		return e
	}
	return &api.Error{Code: api.CodeInternal, Message: err.Error()}
}

// decodeBody decodes a JSON object strictly into v: unknown fields, a
// second value or a body over api.MaxRequestBody are invalid_args, named by
// route. An empty body is allowed only when optional. The raw bytes are
// checked first (api.CheckJSONText): the decoder would silently turn
// invalid UTF-8 into U+FFFD, and what lands must be what was sent.
func decodeBody(r *http.Request, v any, optional bool) error {
	route := r.Method + " " + r.URL.Path
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, api.MaxRequestBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return api.Errorf(api.CodeInvalidArgs, "%s: request body is larger than %d bytes", route, api.MaxRequestBody)
		}
		return api.Errorf(api.CodeInvalidArgs, "%s: request body: %w", route, err)
	}
	if err := api.CheckJSONText(route+": request body", raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			if optional {
				return nil
			}
			return api.Errorf(api.CodeInvalidArgs, "%s: request body is empty; expected a JSON object", route)
		}
		return api.Errorf(api.CodeInvalidArgs, "%s: request body: %s", route, strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return api.Errorf(api.CodeInvalidArgs, "%s: request body: unexpected data after the JSON object", route)
	}
	return nil
}
