package opencode

import (
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// opencode run's stream of a 429 it did not retry past: an error event
// with the APIError's status and response headers; retry-after names
// the reset.
func TestEventStreamReadsLimits(t *testing.T) {
	before := time.Now()
	r := harnesstest.FeedStream(Opencode{}, lines(
		`{"type":"error","timestamp":1,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429,"isRetryable":true,"responseHeaders":{"retry-after":"5"}}}}`))
	if !r.Limited || r.ResetsAt.Before(before.Add(5*time.Second-time.Millisecond)) || r.ResetsAt.After(time.Now().Add(5*time.Second)) {
		t.Fatalf("429 with retry-after: %+v", r)
	}
	r = harnesstest.FeedStream(Opencode{}, lines(
		`{"type":"error","timestamp":1,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Bad Request","statusCode":400}}}`))
	if r.Limited {
		t.Fatalf("a 400 taken for a limit: %+v", r)
	}
}
