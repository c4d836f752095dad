package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// EventsQuery says which events a reader wants: those after Since (0:
// from now on when following, everything the daemon keeps otherwise),
// of Agent only when set.
type EventsQuery struct {
	Since uint64
	Agent string
}

func (q EventsQuery) path(follow bool) string {
	v := url.Values{}
	if q.Since > 0 {
		v.Set("since", strconv.FormatUint(q.Since, 10))
	}
	if q.Agent != "" {
		v.Set("agent", q.Agent)
	}
	if !follow {
		v.Set("follow", "0")
	}
	if len(v) == 0 {
		return "/events"
	}
	return "/events?" + v.Encode()
}

// RecentEvents is what the daemon's event ring keeps that q asks for,
// oldest first.
func (c *Client) RecentEvents(ctx context.Context, q EventsQuery) ([]api.Event, error) {
	var out []api.Event
	err := c.do(ctx, ReadTimeout, http.MethodGet, q.path(false), nil, &out)
	return out, err
}

// ErrStreamEnded is FollowEvents' answer when the daemon ended the stream
// (it shut down, or dropped a reader too slow to keep up): reconnect with
// the last sequence number seen to catch up.
var ErrStreamEnded = errors.New("the daemon ended the event stream")

// FollowEvents reads the event stream, giving fn each event in order,
// until ctx ends (nil), the stream ends (ErrStreamEnded), or fn fails (its
// error). q.Since rides as Last-Event-ID, as an EventSource sends it when
// it reconnects. last is where a follower takes up again: the sequence
// number of the last event given to fn, or the stream's own opening id
// (the newest event when it opened) when none was, or q.Since before that.
// The daemon must answer within ReadTimeout (daemon_down if not); the
// stream after that has no bound. A stream cut short (the daemon stopped
// or was killed, the connection broke) is ErrStreamEnded too.
func (c *Client) FollowEvents(ctx context.Context, q EventsQuery, fn func(api.Event) error) (last uint64, err error) {
	last = q.Since
	target, err := c.target(EventsQuery{Agent: q.Agent}.path(true))
	if err != nil {
		return last, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, target, nil)
	if err != nil {
		return last, api.Errorf(api.CodeInternal, "build request GET /events: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if q.Since > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(q.Since, 10))
	}
	if c.web != nil {
		req.Header.Set("Authorization", c.web.auth)
	}
	// The headers are bounded like any read; the stream after them is not.
	var noAnswer atomic.Bool
	bound := time.AfterFunc(ReadTimeout, func() { noAnswer.Store(true); cancel() })
	resp, err := c.http.Do(req)
	bound.Stop()
	if err != nil {
		if ctx.Err() != nil {
			return last, nil
		}
		if noAnswer.Load() {
			err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		}
		return last, c.transportError(ctx, "GET /events", ReadTimeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return last, decodeError(resp.StatusCode, data)
	}
	var fnErr error
	err = readSSE(resp.Body, func(e api.Event) error {
		if err := fn(e); err != nil {
			fnErr = err
			return err
		}
		last = e.Seq
		return nil
	}, func(id uint64) { last = id })
	var unreadable *api.Error
	switch {
	case fnErr != nil:
		return last, fnErr
	case ctx.Err() != nil:
		return last, nil
	case errors.As(err, &unreadable):
		// Asking again would get the same event again.
		return last, err
	}
	return last, ErrStreamEnded
}

// ReadEvents parses a Server-Sent Events stream of the daemon's events
// (docs/api.md), giving fn each one; comments (heartbeats) and fields it
// does not use are skipped. It returns nil at the end of the stream.
func ReadEvents(r io.Reader, fn func(api.Event) error) error { return readSSE(r, fn, nil) }

// readSSE is ReadEvents, and gives onID (when set) the id of a frame that
// carries no event: the stream's opening id, where a reader that gets no
// event takes up.
func readSSE(r io.Reader, fn func(api.Event) error, onID func(uint64)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data strings.Builder
	id := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() == 0 {
				if n, err := strconv.ParseUint(id, 10, 64); err == nil && onID != nil {
					onID(n)
				}
				id = ""
				continue
			}
			var e api.Event
			if err := json.Unmarshal([]byte(data.String()), &e); err != nil {
				return api.Errorf(api.CodeInternal, "leo daemon sent an unreadable event: %w", err)
			}
			data.Reset()
			id = ""
			if err := fn(e); err != nil {
				return err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimPrefix(strings.TrimPrefix(line, "id:"), " ")
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// ReconnectWait is how long a follower waits before it asks again after
// the stream ended or the daemon was down.
const ReconnectWait = 2 * time.Second
