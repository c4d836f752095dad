package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// defaultHeartbeat is how often an idle event stream gets a comment line,
// so proxies and load balancers do not close it.
const defaultHeartbeat = 15 * time.Second

// streamEvents is GET /events (docs/api.md, "The event stream"): Server-Sent
// Events from the daemon's bus — `id:` the sequence number, `event:` the
// type, `data:` one JSON object. Last-Event-ID (a reconnecting EventSource
// sends it) or ?since=SEQ replays what the ring keeps after it;
// ?agent=NAME keeps that agent's events (and the stream's own); ?follow=0
// answers what the ring keeps as one JSON list instead of streaming. A
// reader too slow to keep up gets stream.dropped and the response ends;
// the daemon never waits for it. Never waits for restore.
func (s *server) streamEvents(w http.ResponseWriter, r *http.Request) {
	if s.events == nil {
		api.WriteJSON(w, http.StatusServiceUnavailable, api.Errorf(api.CodeInternal, "this daemon has no event stream"))
		return
	}
	q := r.URL.Query()
	since, err := eventsSince(r)
	if err != nil {
		api.WriteJSON(w, http.StatusBadRequest, api.Errorf(api.CodeInvalidArgs, "GET /events: %w", err))
		return
	}
	filter, err := eventsFilter(q.Get("agent"))
	if err != nil {
		api.WriteJSON(w, http.StatusBadRequest, api.Errorf(api.CodeInvalidArgs, "GET /events: %w", err))
		return
	}
	switch q.Get("follow") {
	case "0", "false":
		list := s.events.Since(since, filter)
		if list == nil {
			list = []api.Event{}
		}
		api.WriteJSON(w, http.StatusOK, list)
		return
	case "", "1", "true":
	default:
		api.WriteJSON(w, http.StatusBadRequest, api.Errorf(api.CodeInvalidArgs, "GET /events: follow=%q: want 0 or 1", q.Get("follow")))
		return
	}

	// Where a reader that reconnects takes up (when no event reaches it
	// before then): read before Subscribe, so that anything published in
	// between is both in this stream and after it.
	from := since
	if from == 0 {
		from = s.events.Last()
	}
	sub := s.events.Subscribe(since, filter)
	defer sub.Close()
	rc := http.NewResponseController(w)
	// A stream outlives any write deadline a server sets per response.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The first bytes tell the reader the stream is up, how soon an
	// EventSource should come back after a drop, and (id: with no data,
	// which sets its last event id and dispatches nothing) where it takes
	// up then: a reader that saw no event before a restart still asks for
	// what it missed, not only for what comes after it is back.
	fmt.Fprintf(w, "retry: 2000\n")
	if from > 0 {
		fmt.Fprintf(w, "id: %d\n", from)
	}
	fmt.Fprintf(w, ": leo events after %d\n\n", from)
	_ = rc.Flush()

	beat := s.heartbeat
	if beat <= 0 {
		beat = defaultHeartbeat
	}
	tick := time.NewTicker(beat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.stopping:
			// What was published before the end (daemon.stopping) still
			// goes out.
			for {
				select {
				case e, ok := <-sub.Events():
					if !ok || writeEvent(w, e) != nil {
						return
					}
				default:
					_ = rc.Flush()
					return
				}
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			_ = rc.Flush()
		case e, ok := <-sub.Events():
			if !ok {
				return
			}
			if err := writeEvent(w, e); err != nil {
				return
			}
			_ = rc.Flush()
			if e.Type == api.EventStreamDropped {
				return
			}
		}
	}
}

// writeEvent writes one event in SSE framing. JSON never holds a raw
// newline, so data: is one line whatever the event carries.
func writeEvent(w http.ResponseWriter, e api.Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data)
	return err
}

// eventsSince is the sequence number a reader has seen: the Last-Event-ID
// header (an EventSource reconnecting) over ?since=.
func eventsSince(r *http.Request) (uint64, error) {
	raw, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if raw == "" {
		raw, what = r.URL.Query().Get("since"), "since"
	}
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a sequence number", what, raw)
	}
	return n, nil
}

// eventsFilter keeps one agent's events, and the stream's own (which name
// no agent); "" keeps everything.
func eventsFilter(agent string) (func(api.Event) bool, error) {
	if agent == "" {
		return nil, nil
	}
	if err := api.CheckName("agent", agent); err != nil {
		return nil, err
	}
	return func(e api.Event) bool {
		return e.Agent == agent || e.Type == api.EventStreamBehind || e.Type == api.EventStreamDropped
	}, nil
}
