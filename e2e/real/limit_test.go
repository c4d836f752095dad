package real

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// limitReply is each CLI's usage or rate limit as its own code reads it:
// codex's 429 usage_limit_reached with its resets_at (codex does not retry
// it), claude's plain 429 (an API key's: no reset time; claude retries it
// about three minutes, then says rate_limit), opencode's 429 with
// retry-after (opencode retries by itself then).
func limitReply(h string, resets time.Time) modelserver.Reply {
	switch h {
	case "codex":
		return modelserver.Reply{Status: http.StatusTooManyRequests, ErrorBody: fmt.Sprintf(
			`{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":%d}}`, resets.Unix())}
	case "opencode":
		// The OpenAI-compatible provider's 429 body, whose words opencode
		// shows as its retry status.
		return modelserver.Reply{Status: http.StatusTooManyRequests, Header: map[string]string{"retry-after": "5"},
			ErrorBody: `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`}
	}
	return modelserver.Reply{Status: http.StatusTooManyRequests}
}

// usageLimitHeld: the model server answers a turn with the CLI's limit
// error; the agent becomes limited (with resets_at where the CLI names
// one); a message sent meanwhile is held — not pasted, not failed — and
// delivered once the limit is over (the reset plus leo's margin, leo's
// backoff, or the CLI's own retry), once.
func (r *run) usageLimitHeld(s *step) {
	m, held := r.marker(), r.marker()
	var limiting atomic.Bool
	limiting.Store(true)
	resets := time.Now().Add(5 * time.Second)
	var first sync.Once
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && len(q.Markers) > 0 && q.Markers[len(q.Markers)-1] == m && limiting.Load() {
			if r.h == "opencode" {
				// opencode retries after retry-after by itself: the
				// limit is over by then.
				first.Do(func() { time.AfterFunc(5*time.Second, func() { limiting.Store(false) }) })
			}
			return limitReply(r.h, resets)
		}
		if !q.Side && len(q.Markers) > 0 {
			return modelserver.Reply{Text: "ACK " + q.Markers[len(q.Markers)-1]}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	res := s.send(r.h, "Limit this one "+m+" please")
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	at := s.waitAttention(r.h, 6*time.Minute, "limited", func(at api.Attention) bool { return at.State == api.AttentionLimited })
	limiting.Store(false)
	// codex words the reset to the minute: within a minute of the body's.
	if r.h == "codex" && (at.ResetsAt == nil || at.ResetsAt.Sub(resets).Abs() > time.Minute) {
		s.Fatalf("codex limited without its reset: %+v (want about %s)", at, resets.UTC().Format(time.RFC3339))
	}
	res2 := s.send(r.h, "Held one "+held+" please")
	if a := s.get(r.h); a.HeldUntil == nil && r.h != "opencode" {
		s.Fatalf("limited but not held: %+v", a.Attention)
	}
	s.delivered(r.h, res2.ID, held, 4*time.Minute)
	s.turn(held, 2*time.Minute)
	s.pane(r.h, "ACK "+held, 2*time.Minute)
	s.once(held)
	if a := s.get(r.h); a.HeldUntil != nil {
		s.Fatalf("still held after the delivery: %s", a.HeldUntil)
	}
}
