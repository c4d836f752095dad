package real

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// limitFor is how long the model server answers the limited run's turn
// with the vendor's limit error.
const limitFor = 15 * time.Second

// taskRunLimited: the model server answers a one-shot run's turn with the
// CLI's own usage/rate limit error (modelserver.LimitReply) until a reset
// 15 s after the first one, then normally. A CLI that gives up is recorded
// limited and leo retries once after the reset (the task has retries: 1);
// a CLI that waits the limit out itself ends the run on its own, and leo
// does not run it again. Either way the turn is answered once: nothing is
// doubled.
func (r *run) taskRunLimited(s *step) {
	r.limitedNoRetry(s)
	m := r.marker()
	w := &limitWindow{marker: m, window: limitFor}
	r.ms.SetResponder(w.reply)
	defer r.ms.SetResponder(nil)
	_, rec, out := s.runTaskMarked(r.limJob(), m)
	_, nLimited, nAnswered := w.counts()
	s.Logf("%d limit answers, %d answered; record: attempt %d, outcome %s, warnings %q", nLimited, nAnswered, rec.Attempt, rec.Outcome, rec.Warnings)
	if rec.Outcome != api.OutcomeSucceeded || !strings.Contains(rec.Reply, "ACK "+m) {
		s.Fatalf("the limited run did not end succeeded with the reply: %s", out)
	}
	if nLimited == 0 || nAnswered != 1 {
		s.Fatalf("%d limit answers and %d answered turns: want the limit, then the turn answered once", nLimited, nAnswered)
	}
	switch rec.Attempt {
	case 2:
		// The CLI gave up: leo recorded the attempt limited and retried
		// after the reset.
		if len(rec.Warnings) == 0 || !strings.HasPrefix(rec.Warnings[0], "attempt 1: limited (usage_limit)") {
			s.Fatalf("a second attempt without the first limited: %q", rec.Warnings)
		}
		ctx, cancel := s.wait(time.Minute)
		defer cancel()
		logs, err := r.w.Leo(ctx, "task", "logs", r.limJob(), "--run", rec.ID)
		if err != nil || !strings.Contains(string(logs), "a usage limit: retrying after") {
			s.Fatalf("the run's log does not say when it retried: %v %s", err, lastLines(string(logs), 10))
		}
	case 1:
		// The CLI waited the limit out itself (claude and opencode honour
		// a short retry-after): one attempt, nothing doubled.
		if r.h == "codex" {
			s.Fatalf("codex 0.171.0 does not retry a usage_limit_reached, yet one attempt succeeded: %s", out)
		}
	default:
		s.Fatalf("attempt %d: the task allows one retry: %s", rec.Attempt, out)
	}
}

// limitedNoRetry: a task without retries under the same limit (for claude
// one of 90 s, which it gives up on at once, as the limited_* capture
// shows). A CLI that gives up leaves the record limited (reason
// usage_limit): codex with the reset it named as resets_at, claude with
// none (an API key's 429 names no time), which holds claude 1 min
// (LimitBackoff) before the next step part runs. opencode waits it out.
func (r *run) limitedNoRetry(s *step) {
	m := r.marker()
	window := limitFor
	if r.h == "claude" {
		window = 90 * time.Second
	}
	w := &limitWindow{marker: m, window: window}
	r.ms.SetResponder(w.reply)
	defer r.ms.SetResponder(nil)
	_, rec, out := s.runTaskMarked(r.limJobNoRetry(), m)
	at, _, _ := w.counts()
	s.Logf("without retries: outcome %s (%s), resets_at %v, attempt %d", rec.Outcome, rec.Reason, rec.ResetsAt, rec.Attempt)
	if r.h == "claude" {
		if rec.Outcome != api.OutcomeLimited || rec.Reason != api.ReasonUsageLimit || rec.ResetsAt != nil ||
			!strings.HasPrefix(rec.Message, "API Error: Request rejected (429)") {
			s.Fatalf("want limited (usage_limit) with no reset time: %s", out)
		}
		return
	}
	if r.h != "codex" {
		if rec.Outcome != api.OutcomeSucceeded {
			s.Fatalf("%s waits a 15 s limit out itself, yet: %s", r.h, out)
		}
		return
	}
	if rec.Outcome != api.OutcomeLimited || rec.Reason != api.ReasonUsageLimit || rec.ResetsAt == nil || rec.Attempt != 1 {
		s.Fatalf("want limited (usage_limit) with resets_at: %s", out)
	}
	// codex names the minute of the reset; leo takes the end of it.
	if d := rec.ResetsAt.Sub(at); d < 0 || d > time.Minute {
		s.Fatalf("resets_at %v for a reset at %v: want the end of its minute", rec.ResetsAt, at)
	}
	ctx, cancel := s.wait(time.Minute)
	defer cancel()
	hist, err := r.w.Leo(ctx, "task", "history", r.limJobNoRetry())
	if err != nil || !strings.Contains(string(hist), "limited") || !strings.Contains(string(hist), "resets ") {
		s.Fatalf("leo task history does not show the limit: %v %s", err, hist)
	}
}

// limitWindow answers the turn requests carrying marker with the vendor's
// limit error (modelserver.LimitReply) for window from the first of them,
// then "ACK marker"; it counts both kinds of answer.
type limitWindow struct {
	marker string
	window time.Duration

	mu                sync.Mutex
	reset             time.Time
	limited, answered int
}

func (w *limitWindow) reply(q modelserver.Request) modelserver.Reply {
	if q.Side || !slices.Contains(q.Markers, w.marker) {
		return modelserver.DefaultResponder(q)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if w.reset.IsZero() {
		w.reset = now.Add(w.window)
	}
	if now.Before(w.reset) {
		w.limited++
		return modelserver.LimitReply(q.API, w.reset, now)
	}
	w.answered++
	return modelserver.Reply{Text: "ACK " + w.marker}
}

// counts is the limit's reset and how many of each answer were given.
func (w *limitWindow) counts() (reset time.Time, limited, answered int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reset, w.limited, w.answered
}
