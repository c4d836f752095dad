package real

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// streamFor is how long the model server streams the first message's
// reply: long enough that the two messages after it are sent mid-stream.
const streamFor = 12 * time.Second

// streamedTwoAtOnce: A's reply streams slowly (as every real model's
// does), and B and C are sent at once while it streams. codex hides its
// busy line while it streams text, so its screen looks idle; leo must
// still wait for the turn's end (the harness's record). The model server
// then sees three turns, in order, each carrying one message, B's only
// after A's stream ended, and A's whole reply shows on the pane.
func (r *run) streamedTwoAtOnce(s *step) {
	a, b, c := r.marker(), r.marker(), r.marker()
	tail := "and that is the end of the streamed answer"
	long := "ACK " + a + " " + strings.Repeat("this answer streams word by word ", 6) + tail
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && slices.Equal(q.Markers, []string{a}) {
			return modelserver.Reply{Text: long, StreamFor: streamFor}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	h, _ := harness.Lookup(r.h)
	tr, recorded := h.(harness.TurnRecorder)
	// Only the turns started from now on count: an earlier turn's entries
	// may still be written meanwhile (codex records task_complete after the
	// reply shows; claude 2.1.197 may write a new session's first turn only
	// later, its end first).
	activity := func(since time.Time) harness.TurnActivity {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		act, err := tr.TurnActivity(ctx, harness.SessionQuery{Workspace: r.workspace(r.h), Env: r.w.UserEnv, Since: since}, s.get(r.h).SessionID)
		if err != nil {
			s.Fatalf("reading the harness's record: %v", err)
		}
		return act
	}
	if recorded {
		// The previous step's turn has its end in the record before the
		// count starts (codex writes task_complete after the reply shows;
		// written after since, it counted as a fourth end here once).
		s.poll(time.Minute, "the previous turn's end in the harness's record", func() (bool, string) {
			act := activity(time.Time{})
			return !act.Running, fmt.Sprintf("%+v", act)
		})
	}
	since := time.Now()
	ended := func() harness.TurnActivity { return activity(since) }
	resA := s.send(r.h, "Stream a long answer "+a+" please")
	s.delivered(r.h, resA.ID, a, 3*time.Minute)
	reqA := s.turn(a, time.Minute)
	s.pane(r.h, "ACK "+a, time.Minute) // streaming has begun
	sentAt := time.Now()
	if sentAt.After(reqA.Time.Add(streamFor - 2*time.Second)) {
		s.Fatalf("A's stream had (nearly) ended before B and C were sent (%s after its request): the step proves nothing", sentAt.Sub(reqA.Time).Round(time.Millisecond))
	}
	resB := s.send(r.h, "Second "+b+" please")
	resC := s.send(r.h, "Third "+c+" please")
	s.delivered(r.h, resB.ID, b, 3*time.Minute)
	s.delivered(r.h, resC.ID, c, 3*time.Minute)
	reqB, reqC := s.turn(b, time.Minute), s.turn(c, time.Minute)
	ms := []string{a, b, c}
	for _, req := range modelserver.Turns(r.ms.Requests()) {
		n := 0
		for _, m := range req.Markers {
			if slices.Contains(ms, m) {
				n++
			}
		}
		if n > 1 {
			s.Fatalf("turn #%d carried %v: messages merged into one turn", req.Seq, req.Markers)
		}
	}
	if !(reqA.Seq < reqB.Seq && reqB.Seq < reqC.Seq) {
		s.Fatalf("turns out of order: #%d #%d #%d for %v", reqA.Seq, reqB.Seq, reqC.Seq, ms)
	}
	if early := reqA.Time.Add(streamFor - time.Second); reqB.Time.Before(early) {
		s.Fatalf("B reached the model %s after A, while A's %s stream was still running: B was put into A's turn", reqB.Time.Sub(reqA.Time).Round(time.Millisecond), streamFor)
	}
	for _, m := range ms {
		s.once(m)
	}
	s.pane(r.h, tail, time.Minute) // A's reply, whole
	for _, m := range []string{b, c} {
		s.pane(r.h, "ACK "+m, time.Minute)
	}
	// Where the harness records its turns' ends, it ended three more.
	if recorded {
		// C's reply shows before its end is recorded: wait for that first.
		var after harness.TurnActivity
		s.poll(time.Minute, "C's turn end in the harness's record", func() (bool, string) {
			after = ended()
			return !after.Running && after.Ended >= 3, fmt.Sprintf("%+v", after)
		})
		if after.Ended != 3 {
			s.Fatalf("the harness's record since A was sent: %+v after C; want three ended, none running", after)
		}
	}
	s.Logf("A's turn #%d, B #%d %s later, C #%d %s later", reqA.Seq, reqB.Seq, fmt.Sprint(reqB.Time.Sub(reqA.Time).Round(time.Millisecond)), reqC.Seq, fmt.Sprint(reqC.Time.Sub(reqA.Time).Round(time.Millisecond)))
}
