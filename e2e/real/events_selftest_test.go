package real

import (
	"io"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// readFrames runs the event stream's reader over body to its end.
func readFrames(body string) ([]api.Event, error) {
	es := &eventStream{agent: "coder", done: make(chan struct{}), grew: make(chan struct{})}
	es.read(io.NopCloser(strings.NewReader(body)))
	evs, _, err := es.snapshot()
	return evs, err
}

const openingFrame = "retry: 2000\nid: 7\n: leo events after 7\n\n"

func TestEventStreamReaderTakesTheDaemonsFrames(t *testing.T) {
	body := openingFrame +
		"id: 8\nevent: message.queued\ndata: {\"seq\":8,\"type\":\"message.queued\",\"agent\":\"coder\",\"message_id\":\"m-1\"}\n\n" +
		": ping\n\n" +
		"id: 9\r\nevent: agent.attention\r\ndata: {\"seq\":9,\"type\":\"agent.attention\",\"agent\":\"coder\",\"attention\":{\"state\":\"working\",\"message_id\":\"m-1\"}}\r\n\r\n"
	evs, err := readFrames(body)
	if err != io.EOF || len(evs) != 2 || evs[0].MessageID != "m-1" || evs[1].Attention == nil || evs[1].Attention.State != api.AttentionWorking {
		t.Fatalf("events %+v, end %v; want the two events, then the end of the body", evs, err)
	}
	chain := append(messageChain("m-1")[:1], attentionEv(api.AttentionWorking, "", func(at api.Attention) bool { return at.MessageID == "m-1" }))
	if got := matched(chain, evs); got != 2 {
		t.Errorf("matched %d of the chain, want 2", got)
	}
	if got := matched([]eventWant{chain[1], chain[0]}, evs); got != 1 {
		t.Errorf("the chain out of order matched %d, want 1", got)
	}
}

// A frame whose id: is not its seq, whose event: is not its type, that
// comes out of order or is of another agent ends the reading with why.
func TestEventStreamReaderRefusesBadFrames(t *testing.T) {
	good := "id: 8\nevent: turn.started\ndata: {\"seq\":8,\"type\":\"turn.started\",\"agent\":\"coder\"}\n\n"
	for name, frame := range map[string]string{
		"id":      "id: 10\nevent: turn.ended\ndata: {\"seq\":9,\"type\":\"turn.ended\",\"agent\":\"coder\"}\n\n",
		"event":   "id: 9\nevent: turn.started\ndata: {\"seq\":9,\"type\":\"turn.ended\",\"agent\":\"coder\"}\n\n",
		"order":   "id: 8\nevent: turn.ended\ndata: {\"seq\":8,\"type\":\"turn.ended\",\"agent\":\"coder\"}\n\n",
		"agent":   "id: 9\nevent: turn.ended\ndata: {\"seq\":9,\"type\":\"turn.ended\",\"agent\":\"other\"}\n\n",
		"garbled": "id: 9\nevent: turn.ended\ndata: {\"seq\":9,\n\n",
	} {
		evs, err := readFrames(openingFrame + good + frame + good)
		if err == nil || err == io.EOF || len(evs) != 1 {
			t.Errorf("%s: events %+v, end %v; want the first event, then a refusal", name, evs, err)
		}
	}
}
