package real

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// limitReply is the limit error the step answers q with: each vendor's
// own (modelserver.LimitReply: codex's usage_limit_reached with its
// resets_at, which codex does not retry; the Chat API's 429 with
// retry-after, which opencode retries by itself), but for claude a plain
// 429 as an API key gets it: no reset time, and claude retries it about
// three minutes, then says rate_limit.
func limitReply(h string, q modelserver.Request, resets time.Time) modelserver.Reply {
	if h == "claude" {
		return modelserver.Reply{Status: http.StatusTooManyRequests}
	}
	return modelserver.LimitReply(q.API, resets, time.Now())
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
			return limitReply(r.h, q, resets)
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
