package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// lockedBuffer is an io.Writer a test reads while a command writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// `leo events --follow` over a daemon that ends the stream (a restart)
// asks again with Last-Event-ID for what came after the last event it
// printed, says on stderr that it waits, and prints each event once, as
// text (a sender's escapes blanked) or one JSON object a line.
func TestEventsFollowReconnectsWithLastEventID(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", asJSON), func(t *testing.T) {
			h := home.Home{Root: testutil.ShortTempDir(t, "leo-ev")}
			if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("unix", h.SocketPath())
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
			frame := func(e api.Event) string {
				e.At = at
				data, _ := json.Marshal(e)
				return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data)
			}
			asked := make(chan string, 8)
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked <- r.Header.Get("Last-Event-ID")
				w.Header().Set("Content-Type", "text/event-stream")
				switch r.Header.Get("Last-Event-ID") {
				case "":
					fmt.Fprint(w, "id: 10\n\n"+frame(api.Event{Seq: 11, Type: api.EventMessageQueued, Agent: "bob", MessageID: "m-1", FirstLine: "hi \x1b[31mred"}))
				default:
					fmt.Fprint(w, "id: 11\n\n"+frame(api.Event{Seq: 12, Type: api.EventDaemonStarting, Reason: "leo 2, pid 7"}))
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				}
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			out, errOut := &lockedBuffer{}, &lockedBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- runEvents(ctx, &EventsOptions{IO: &IOStreams{Out: out, ErrOut: errOut}, Client: client.New(h), JSON: asJSON, Follow: true, Agent: "bob", Reconnect: time.Millisecond})
			}()
			testutil.WaitFor(t, 10*time.Second, func() bool { return strings.Count(out.String(), "\n") >= 2 }, "two events printed")
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("leo events --follow: %v, want nil at Ctrl-C", err)
			}
			if a, b := <-asked, <-asked; a != "" || b != "11" {
				t.Fatalf("asked with Last-Event-ID %q then %q, want none then 11", a, b)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("printed %q, want two events once each", out.String())
			}
			if asJSON {
				var e api.Event
				if err := json.Unmarshal([]byte(lines[0]), &e); err != nil || e.Seq != 11 || e.FirstLine != "hi \x1b[31mred" {
					t.Fatalf("JSON line %q (%v)", lines[0], err)
				}
			} else {
				if strings.ContainsRune(out.String(), '\x1b') || !strings.Contains(lines[0], "  11  message.queued  agent=bob  message=m-1  \u201chi  [31mred\u201d") {
					t.Fatalf("line %q", lines[0])
				}
				if !strings.Contains(lines[1], "  12  daemon.starting  — leo 2, pid 7") {
					t.Fatalf("line %q", lines[1])
				}
			}
			if !strings.Contains(errOut.String(), "leo events: the stream ended") || !strings.Contains(errOut.String(), "after 11") {
				t.Fatalf("stderr %q", errOut.String())
			}
		})
	}
}

// The first connection failing is the client's usual daemon_down.
func TestEventsFollowWithNoDaemonIsDaemonDown(t *testing.T) {
	h := home.Home{Root: testutil.ShortTempDir(t, "leo-ev")}
	err := runEvents(context.Background(), &EventsOptions{IO: &IOStreams{Out: &lockedBuffer{}, ErrOut: &lockedBuffer{}}, Client: client.New(h), Follow: true})
	if !client.IsDaemonDown(err) || !strings.Contains(err.Error(), "leo daemon is not running") {
		t.Fatalf("got %v, want daemon_down", err)
	}
}
