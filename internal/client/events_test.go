package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/lockfile"
)

// A follower's since rides as Last-Event-ID; with no event given, where it
// takes up is the stream's opening id; a stream cut without its end is
// ErrStreamEnded (ask again), never a failure.
func TestFollowEventsTakesUpWhereTheStreamLeftIt(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	asked := make(chan string, 4)
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.Header.Get("Last-Event-ID") + " " + r.URL.RawQuery
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.Header.Get("Last-Event-ID") {
		case "":
			// Opens at 41, no event, then the connection breaks.
			fmt.Fprint(w, "retry: 2000\nid: 41\n: leo events after 41\n\n: ping\n\n")
			w.(http.Flusher).Flush()
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		default:
			fmt.Fprint(w, "id: 41\n\nid: 42\nevent: problem\ndata: {\"seq\":42,\"type\":\"problem\",\"reason\":\"a\\nb\"}\n\n")
		}
	}))
	c := client.New(h)
	var got []api.Event
	collect := func(e api.Event) error { got = append(got, e); return nil }

	last, err := c.FollowEvents(context.Background(), client.EventsQuery{Agent: "bob"}, collect)
	if !errors.Is(err, client.ErrStreamEnded) || last != 41 || len(got) != 0 {
		t.Fatalf("cut stream: last %d, %v, events %v; want 41, ErrStreamEnded, none", last, err, got)
	}
	if a := <-asked; a != " agent=bob" {
		t.Fatalf("first request: %q", a)
	}
	last, err = c.FollowEvents(context.Background(), client.EventsQuery{Agent: "bob", Since: last}, collect)
	if !errors.Is(err, client.ErrStreamEnded) || last != 42 || len(got) != 1 || got[0].Reason != "a\nb" {
		t.Fatalf("again: last %d, %v, events %+v", last, err, got)
	}
	if a := <-asked; a != "41 agent=bob" {
		t.Fatalf("reconnect asked %q, want Last-Event-ID 41 (no since in the query)", a)
	}
}

// A daemon that takes the connection but never answers is daemon_down
// after ReadTimeout, as for any read; a stream that then stays quiet is
// never cut by the client.
func TestFollowEventsBoundsTheAnswerNotTheStream(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	silentSocket(t, h.SocketPath())
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	done := make(chan error, 1)
	go func() {
		_, err := client.New(h).FollowEvents(context.Background(), client.EventsQuery{}, func(api.Event) error { return nil })
		done <- err
	}()
	select {
	case err := <-done:
		want := fmt.Sprintf("leo daemon (pid %d) holds the socket but does not answer: no reply to GET /events within 5s", os.Getpid())
		if !client.IsDaemonDown(err) || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("got %v\nwant prefix %q", err, want)
		}
	case <-time.After(client.ReadTimeout + 20*time.Second):
		t.Fatal("FollowEvents to a silent daemon still waiting")
	}
}

// The stream itself has no bound: headers, then nothing for longer than
// ReadTimeout, then an event.
func TestFollowEventsWaitsOnAQuietStream(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out ReadTimeout")
	}
	t.Parallel()
	h := newHome(t)
	release := make(chan struct{})
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "id: 7\nevent: problem\ndata: {\"seq\":7,\"type\":\"problem\"}\n\n")
	}))
	timer := time.AfterFunc(client.ReadTimeout+time.Second, func() { close(release) })
	defer timer.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got uint64
	last, err := client.New(h).FollowEvents(ctx, client.EventsQuery{}, func(e api.Event) error {
		got = e.Seq
		cancel()
		return nil
	})
	if err != nil || got != 7 || last != 7 {
		t.Fatalf("quiet stream: got %d, last %d, %v", got, last, err)
	}
}
