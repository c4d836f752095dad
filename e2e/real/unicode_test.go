package real

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// unicodeRedrawn: text the TUI draws differently from what was pasted — a
// skin-tone modifier (claude and codex drop it), a decomposed accent
// (claude composes it), a tab (drawn as spaces), leading spaces (dropped)
// — is delivered, each followed by a plain message that must be delivered
// too (issue 15 item 2: the landed check never matched, the message stayed
// in the input line and every later one failed).
func (r *run) unicodeRedrawn(s *step) {
	for _, text := range []string{"thumbs 👍🏽", "cafe\u0301", "a\ttab", "    leading spaces"} {
		m := r.marker()
		res := s.send(r.h, text+" "+m)
		s.delivered(r.h, res.ID, m, 3*time.Minute)
		s.turn(m, time.Minute)
		s.pane(r.h, "ACK "+m, time.Minute)
		s.once(m)
		s.exchange(r.h, "Plain after "+strings.Fields(text)[0]+".")
	}
}

// rateLimited: the model server answers one turn HTTP 429 (every request
// of it, the CLI's retries included, until the TUI shows the error), then
// a plain message is delivered (issue 15 item 3: claude 2.1.332 puts the
// hint "Resend your message to try again" into its input line, which leo
// took for a person's typing).
func (r *run) rateLimited(s *step) {
	m := r.marker()
	var limited atomic.Int32
	var lastLimited atomic.Int64 // unix nanoseconds of the last 429
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && slices.Contains(q.Markers, m) {
			limited.Add(1)
			lastLimited.Store(time.Now().UnixNano())
			return modelserver.Reply{Status: http.StatusTooManyRequests}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	res := s.send(r.h, "Rate limit this one "+m+" please")
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	h, _ := harness.Lookup(r.h)
	// claude retries a 429 ten times over about three minutes.
	s.poll(6*time.Minute, r.h+"'s TUI idle after the rate-limited turn", func() (bool, string) {
		scr, text := s.screen(h, r.h)
		return limited.Load() > 0 && scr.State == harness.ScreenReady && !strings.Contains(text, "ACK "+m),
			scr.State.String() + " input " + scr.Input + ":\n" + lastLines(text, 15)
	})
	// Let the TUI settle on its error screen (and its hint, if any) first:
	// ready for 3 s in a row with no retry of the limited request meanwhile
	// (opencode retries with a growing backoff and looks ready between
	// its tries).
	var readySince time.Time
	s.poll(6*time.Minute, r.h+"'s TUI idle for 3 s in a row, retrying no more", func() (bool, string) {
		scr, _ := s.screen(h, r.h)
		if scr.State != harness.ScreenReady {
			readySince = time.Time{}
			return false, scr.State.String()
		}
		if last := time.Unix(0, lastLimited.Load()); readySince.IsZero() || last.After(readySince) {
			readySince = time.Now()
		}
		return time.Since(readySince) >= 3*time.Second, "ready since " + readySince.Format(time.TimeOnly)
	})
	// The next turn may carry the rate-limited message too (claude sends
	// both as one user turn): answer its own marker only.
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && len(q.Markers) > 0 {
			return modelserver.Reply{Text: "ACK " + q.Markers[len(q.Markers)-1]}
		}
		return modelserver.DefaultResponder(q)
	})
	s.exchange(r.h, "After the rate limit.")
}
