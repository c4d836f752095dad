package codex

import (
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// codex exec's stream of a usage limit: its UsageLimitReached error, whose
// words name the reset ("try again at 2:47 PM."), as an error event and
// the turn.failed that ends the run; a 429 it gave up on has no time.
func TestEventStreamReadsLimits(t *testing.T) {
	defer func(f func() *time.Location) { codexZone = f }(codexZone)
	codexZone = func() *time.Location { return time.UTC }
	usage := `You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), or try again at 2:47 PM.`
	r := harnesstest.FeedStream(Codex{}, lines(startLine, turnLine,
		`{"type":"error","message":"`+usage+`"}`,
		`{"type":"turn.failed","error":{"message":"`+usage+`"}}`))
	if !r.Limited || r.ResetsAt.IsZero() || r.ResetsAt.Hour() != 14 || r.ResetsAt.Minute() != 47 || r.Error != usage {
		t.Fatalf("usage limit: %+v", r)
	}
	r = harnesstest.FeedStream(Codex{}, lines(startLine, turnLine,
		`{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}`))
	if !r.Limited || !r.ResetsAt.IsZero() {
		t.Fatalf("429: %+v", r)
	}
	r = harnesstest.FeedStream(Codex{}, lines(startLine, turnLine, `{"type":"turn.failed","error":{"message":"stream disconnected"}}`))
	if r.Limited {
		t.Fatalf("another failure taken for a limit: %+v", r)
	}
}
