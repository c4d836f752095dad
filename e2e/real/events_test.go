package real

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
)

// The attention steps check what they did on the HTTP API's event stream
// (docs/api.md, "The event stream"), read as a client outside leo reads
// it: GET /api/v1/events on the daemon's loopback port with the bearer
// token from state/api.token, the Server-Sent Events parsed here, not by
// leo's client. A step opens the stream before it acts, so nothing it
// causes is missed, and at its end asks for chains of events in order;
// the harnesses add events of their own (a hook's working before leo's
// delivery, a screen's second look), so a chain is a subsequence, never
// an exact list.

// eventStream is one open stream of an agent's events.
type eventStream struct {
	s      *step
	agent  string
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader ends

	mu     sync.Mutex
	events []api.Event
	err    error // why the stream ended, when it did
	grew   chan struct{}
}

// eventWant is one event a chain waits for.
type eventWant struct {
	what string
	ok   func(api.Event) bool
}

// ev is an eventWant of type typ whose event also holds cond (nil: any).
func ev(typ, what string, cond func(api.Event) bool) eventWant {
	return eventWant{what: typ + " " + what, ok: func(e api.Event) bool {
		return e.Type == typ && (cond == nil || cond(e))
	}}
}

// attentionEv is an agent.attention event to state whose attention holds
// cond (nil: any).
func attentionEv(state api.AttentionState, what string, cond func(api.Attention) bool) eventWant {
	return ev(api.EventAgentAttention, string(state)+" "+what, func(e api.Event) bool {
		return e.Attention != nil && e.Attention.State == state && (cond == nil || cond(*e.Attention))
	})
}

// openEvents opens the HTTP API's stream of agent's events and returns
// once the daemon has answered (it subscribes the reader before it
// answers: whatever happens from then on is on the stream). The stream
// is closed when the step ends.
func (s *step) openEvents(agent string) *eventStream {
	s.Helper()
	r := s.r
	tok, err := apitoken.Read(r.w.Home.TokenPath())
	if err != nil {
		s.Fatalf("the API token: %v", err)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	u := fmt.Sprintf("http://127.0.0.1:%d/api/v1/events?agent=%s", r.webPort(), url.QueryEscape(agent))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		s.Fatalf("GET /api/v1/events: %v", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	// The answer's headers are bounded; the stream after them is not.
	answered := time.AfterFunc(30*time.Second, cancel)
	resp, err := http.DefaultClient.Do(req)
	answered.Stop()
	if err != nil {
		cancel()
		s.Fatalf("GET /api/v1/events: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		cancel()
		s.Fatalf("GET /api/v1/events: %s (%s): %s", resp.Status, ct, body)
	}
	es := &eventStream{s: s, agent: agent, cancel: cancel, done: make(chan struct{}), grew: make(chan struct{})}
	go es.read(resp.Body)
	s.Cleanup(es.close)
	return es
}

func (es *eventStream) close() {
	es.cancel()
	<-es.done
}

// read parses the stream: frames of id:, event: and data: lines ended by
// a blank line; comments (heartbeats) are skipped. Every event's id: must
// be its seq and its event: its type.
func (es *eventStream) read(body io.ReadCloser) {
	defer close(es.done)
	defer body.Close()
	br := bufio.NewReader(body)
	var id, typ, data string
	var err error
	for err == nil {
		var line string
		line, err = br.ReadString('\n')
		if err != nil {
			break
		}
		line = strings.TrimRight(line, "\r\n")
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if data != "" {
				err = es.add(id, typ, data)
			}
			id, typ, data = "", "", ""
		case field == "": // a comment
		case field == "id":
			id = value
		case field == "event":
			typ = value
		case field == "data":
			if data != "" {
				data += "\n"
			}
			data += value
		}
	}
	es.mu.Lock()
	es.err = err
	close(es.grew)
	es.grew = nil
	es.mu.Unlock()
}

// add keeps the event of one frame.
func (es *eventStream) add(id, typ, data string) error {
	var e api.Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return fmt.Errorf("unreadable event %q: %w", data, err)
	}
	if seq, err := strconv.ParseUint(id, 10, 64); err != nil || seq != e.Seq || typ != e.Type {
		return fmt.Errorf("frame id %q event %q for an event of seq %d, type %s", id, typ, e.Seq, e.Type)
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if n := len(es.events); n > 0 && e.Seq <= es.events[n-1].Seq {
		return fmt.Errorf("event %d (%s) after %d: out of order", e.Seq, e.Type, es.events[n-1].Seq)
	}
	if e.Agent != "" && e.Agent != es.agent {
		return fmt.Errorf("event %d (%s) of agent %q on the stream of %q", e.Seq, e.Type, e.Agent, es.agent)
	}
	es.events = append(es.events, e)
	close(es.grew)
	es.grew = make(chan struct{})
	return nil
}

// snapshot is what the stream gave so far, a channel closed when it
// gives more, and why it ended (nil: it has not).
func (es *eventStream) snapshot() ([]api.Event, <-chan struct{}, error) {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.events, es.grew, es.err
}

// expect waits up to d for each chain's events to come in its order
// (other events may come between them), and fails the step with what
// came when one does not — or at once when an event matches one of
// never. It returns the events seen.
func (es *eventStream) expect(d time.Duration, never []eventWant, chains ...[]eventWant) []api.Event {
	es.s.Helper()
	ctx, cancel := es.s.wait(d)
	defer cancel()
	for {
		evs, grew, err := es.snapshot()
		for _, e := range evs {
			for _, n := range never {
				if n.ok(e) {
					es.s.Fatalf("on the event stream: %s (%s); the stream: %s", n.what, eventLine(e), eventsLine(evs))
				}
			}
		}
		missing := ""
		for _, chain := range chains {
			if got := matched(chain, evs); got < len(chain) {
				missing = fmt.Sprintf("%s (after %s)", chain[got].what, chainLine(chain[:got]))
				break
			}
		}
		if missing == "" {
			return evs
		}
		if err != nil || grew == nil {
			es.s.Fatalf("the event stream ended (%v) without %s; it gave: %s", err, missing, eventsLine(evs))
		}
		select {
		case <-grew:
		case <-ctx.Done():
			es.s.Fatalf("the event stream gave no %s within %v; it gave: %s", missing, d, eventsLine(evs))
		}
	}
}

// matched is how many of chain's events occur in evs in order.
func matched(chain []eventWant, evs []api.Event) int {
	i := 0
	for _, e := range evs {
		if i < len(chain) && chain[i].ok(e) {
			i++
		}
	}
	return i
}

func chainLine(chain []eventWant) string {
	if len(chain) == 0 {
		return "the stream's opening"
	}
	var w []string
	for _, c := range chain {
		w = append(w, c.what)
	}
	return strings.Join(w, " → ")
}

// eventLine is one event in a few words, for a failure's text.
func eventLine(e api.Event) string {
	b := fmt.Sprintf("#%d %s %s", e.Seq, e.At.Format("15:04:05.000"), e.Type)
	if a := e.Attention; a != nil {
		b += fmt.Sprintf(" %s %q msg=%s", a.State, a.Detail, a.MessageID)
		if a.Prompt != nil {
			b += fmt.Sprintf(" prompt=%q", a.Prompt.Text)
		}
	}
	for _, f := range []string{e.MessageID, e.State, e.FirstLine, e.Reason} {
		if f != "" {
			b += " " + strconv.Quote(f)
		}
	}
	return b
}

func eventsLine(evs []api.Event) string {
	if len(evs) == 0 {
		return "nothing"
	}
	var l []string
	for _, e := range evs {
		l = append(l, eventLine(e))
	}
	return strings.Join(l, "; ")
}

// messageChain is a message's events on the stream, in order: queued,
// delivered.
func messageChain(id string) []eventWant {
	return []eventWant{
		ev(api.EventMessageQueued, id, func(e api.Event) bool { return e.MessageID == id }),
		ev(api.EventMessageDelivered, id, func(e api.Event) bool { return e.MessageID == id }),
	}
}

// failedEv is the message's failure, which never may come.
func failedEv(id string) eventWant {
	return ev(api.EventMessageFailed, id, func(e api.Event) bool { return e.MessageID == id })
}
