package claude

import (
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// claude -p's stream of an API key's 429: the assistant message of its API
// error (error "rate_limit") and a result that is an error with its words;
// no reset time. A usage limit's words name one.
func TestEventStreamReadsLimits(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return at }
	apiErr := `API Error: Request rejected (429) · rate limited`
	r := harnesstest.FeedStream(Claude{}, lines(initLine,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`+apiErr+`"}]},"parent_tool_use_id":null,"session_id":"s-1","error":"rate_limit"}`,
		`{"type":"result","subtype":"success","is_error":true,"result":"`+apiErr+`","session_id":"s-1"}`))
	if !r.Limited || !r.ResetsAt.IsZero() || r.Succeeded {
		t.Fatalf("429: %+v", r)
	}
	r = harnesstest.FeedStream(Claude{}, lines(initLine,
		`{"type":"result","subtype":"success","is_error":true,"result":"You've hit your session limit · resets in 5m","session_id":"s-1"}`))
	if !r.Limited || !r.ResetsAt.Equal(at.Add(5*time.Minute)) {
		t.Fatalf("session limit: %+v", r)
	}
	r = harnesstest.FeedStream(Claude{}, lines(initLine, `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500","session_id":"s-1"}`))
	if r.Limited {
		t.Fatalf("another failure taken for a limit: %+v", r)
	}
}
