package opencode

import (
	"strconv"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// opencode run's stream of a 429 it did not retry past: an error event
// with the APIError's status and response headers; retry-after names
// the reset, counted from the event's own time.
func TestEventStreamReadsLimits(t *testing.T) {
	at := time.Now().Truncate(time.Millisecond)
	r := harnesstest.FeedStream(Opencode{}, lines(
		`{"type":"error","timestamp":`+strconv.FormatInt(at.UnixMilli(), 10)+`,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429,"isRetryable":true,"responseHeaders":{"retry-after":"5"}}}}`))
	if d := r.ResetsAt.Sub(at); !r.Limited || d < 5*time.Second || d > 5*time.Second+time.Millisecond {
		t.Fatalf("429 with retry-after: %+v", r)
	}
	r = harnesstest.FeedStream(Opencode{}, lines(
		`{"type":"error","timestamp":1,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Bad Request","statusCode":400}}}`))
	if r.Limited {
		t.Fatalf("a 400 taken for a limit: %+v", r)
	}
}
