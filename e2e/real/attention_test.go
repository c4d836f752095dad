package real

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The attention steps (issue 18) on every harness: a slow turn shows the
// agent working on the message until the reply comes, then idle with the
// reply's first line; a model error shows it errored in the harness's
// words (docs/agents.md, "Attention").

// slowHold is how long the model server holds the slow turn's reply.
const slowHold = 15 * time.Second

// attentionOf is the agent's attention now (nil: none, as for an agent
// that is not running).
func (s *step) attentionOf(name string) *api.Attention {
	s.Helper()
	return s.get(name).Attention
}

// waitAttention polls until the agent's attention holds cond.
func (s *step) waitAttention(name string, d time.Duration, what string, cond func(api.Attention) bool) api.Attention {
	s.Helper()
	var at *api.Attention
	s.poll(d, name+" "+what, func() (bool, string) {
		at = s.attentionOf(name)
		return at != nil && cond(*at), fmt.Sprintf("attention %+v", at)
	})
	return *at
}

// slowTurn: two messages whose replies the model server holds back for
// slowHold each: the agent is working on each message (its id, its first
// line) the whole time, then idle with the reply's first line. They are a
// new conversation's first two turns: a codex without MCP servers asks
// for the thread's title after the first turn's reply (a side request,
// held here a while), so that title side thread's turn would end — and
// run codex's notify — while the second turn waits for its reply; it must
// not read as that turn's end.
func (r *run) slowTurn(s *step) {
	before, reset := s.get(r.h), time.Now()
	s.leo("agent", "reset", r.h)
	s.poll(2*time.Minute, "running after the reset", func() (bool, string) {
		a := s.get(r.h)
		return a.State == api.StateRunning && (a.SessionID == "" || a.SessionID != before.SessionID), describe(a)
	})
	a, b := r.marker(), r.marker()
	r.first = a // the new conversation's first turn
	reply := func(m string) string { return "ACK " + m + " after a while\nand a second line of the reply" }
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		switch {
		case q.Side && r.h == "codex":
			return modelserver.Reply{Text: modelserver.SideReply, Delay: sideHold}
		case q.Side:
		case slices.Contains(q.Markers, b):
			return modelserver.Reply{Text: reply(b), Delay: slowHold}
		case slices.Contains(q.Markers, a):
			return modelserver.Reply{Text: reply(a), Delay: slowHold}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	s.heldTurn(a, reply(a))
	req := s.heldTurn(b, reply(b))
	var side []string
	during := false
	for _, q := range r.ms.Requests() {
		if q.Side && q.Time.After(reset) {
			answered := q.Time
			if r.h == "codex" {
				answered = answered.Add(sideHold)
			}
			side = append(side, fmt.Sprintf("#%d answered at %+.1fs", q.Seq, answered.Sub(req.Time).Seconds()))
			during = during || (answered.After(req.Time) && answered.Before(req.Time.Add(slowHold-2*time.Second)))
		}
	}
	// codex 0.171.0 asks for no title when an MCP server is configured,
	// as leo's bridge is in this suite (docs/harness-behaviour/codex.md,
	// "Turn end: notify"): then only the adapter's test over the real
	// title payload holds the title's turn end to nothing.
	s.Logf("side requests, answered from %s's turn request: %v (one during its held reply: %v)", b, side, during)
}

// sideHold holds codex's side requests (its title) in slowTurn: long
// enough that the title, asked after the first turn, comes back during
// the second.
const sideHold = 8 * time.Second

// heldTurn sends a message with marker m whose reply (reply, held back by
// the model server for slowHold) comes late: the agent is working on it
// from its delivery until the reply is due, then idle with the reply's
// first line. It returns the turn's request.
func (s *step) heldTurn(m, reply string) modelserver.Request {
	s.Helper()
	r := s.r
	first := "Take your time with this one " + m
	stream := s.openEvents(r.h)
	res := s.send(r.h, first+"\nthere is a second line too")
	s.waitAttention(r.h, 3*time.Minute, "working on "+m, func(at api.Attention) bool {
		return at.State == api.AttentionWorking && at.MessageID == res.ID && at.Detail == first
	})
	req := s.turn(m, time.Minute)
	// Until the reply is due, nothing may say the turn is over: not the
	// screen, not the record, not a side thread's turn end.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for until := req.Time.Add(slowHold - 2*time.Second); time.Now().Before(until); {
		at := s.attentionOf(r.h)
		if at == nil || at.State != api.AttentionWorking || at.MessageID != res.ID {
			s.Fatalf("%.1fs into %s's held reply: attention %+v, want working on %s", time.Since(req.Time).Seconds(), m, at, res.ID)
		}
		select {
		case <-s.ctx.Done():
			s.Fatalf("the run ended during %s's held reply", m)
		case <-tick.C:
		}
	}
	at := s.waitAttention(r.h, 2*time.Minute, "idle with "+m+"'s reply", func(at api.Attention) bool {
		return at.State == api.AttentionIdle && at.Detail == api.FirstLine(reply)
	})
	s.Logf("idle: %+v", at)
	s.delivered(r.h, res.ID, m, time.Minute)
	s.pane(r.h, "ACK "+m, time.Minute)
	s.once(m)
	// The stream said the same, in order: queued, delivered, working on
	// it, the turn's end and idle with the reply's first line.
	line := api.FirstLine(reply)
	evs := stream.expect(30*time.Second, []eventWant{failedEv(res.ID)},
		append(messageChain(res.ID),
			attentionEv(api.AttentionWorking, "on "+res.ID, func(at api.Attention) bool { return at.MessageID == res.ID && at.Detail == first }),
			attentionEv(api.AttentionIdle, "with "+m+"'s reply", func(at api.Attention) bool { return at.Detail == line })),
		[]eventWant{
			ev(api.EventMessageQueued, res.ID, func(e api.Event) bool { return e.MessageID == res.ID }),
			ev(api.EventTurnStarted, "", nil),
			ev(api.EventTurnEnded, "ok with "+m+"'s reply", func(e api.Event) bool { return e.State == "ok" && e.FirstLine == line }),
		})
	s.Logf("the event stream: %s", eventsLine(evs))
	return req
}

// modelError: the model server answers a turn HTTP 400 that refuses the
// request (refusal), which none of the CLIs retries: the agent is errored,
// in the harness's words (they carry the server's message); the next
// message is answered and the agent is idle again.
func (r *run) modelError(s *step) {
	m := r.marker()
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && len(q.Markers) > 0 && q.Markers[len(q.Markers)-1] == m {
			return modelserver.Reply{Status: http.StatusBadRequest, ErrorBody: refusal(q.API)}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	stream := s.openEvents(r.h)
	sent := time.Now()
	res := s.send(r.h, "This one the model refuses "+m+" please")
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	req := s.turn(m, time.Minute)
	s.Logf("delivered %.1fs after the send, the turn at the model server %+.1fs", time.Since(sent).Seconds(), req.Time.Sub(sent).Seconds())
	at := s.waitAttention(r.h, 2*time.Minute, "errored in the harness's words", func(at api.Attention) bool {
		return at.State == api.AttentionErrored
	})
	s.Logf("errored %.1fs after the send: %+v", time.Since(sent).Seconds(), at)
	// Refused at once: claude 2.1.332 asks seven more times within a
	// second (2.1.197 and the others once), never over minutes.
	s.Logf("%d requests carried %s", len(modelserver.WithMarker(r.ms.Requests(), m)), m)
	if !strings.Contains(at.Detail, "scripted error") {
		s.Fatalf("errored with %q, want the harness's words for the server's error (modelserver: scripted error)", at.Detail)
	}
	// The next turn may carry the refused message too (claude sends both
	// as one user turn): answer its own marker only.
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && len(q.Markers) > 0 {
			return modelserver.Reply{Text: "ACK " + q.Markers[len(q.Markers)-1]}
		}
		return modelserver.DefaultResponder(q)
	})
	next, _ := s.exchange(r.h, "After the model error.")
	s.waitAttention(r.h, 2*time.Minute, "idle after the next turn", func(at api.Attention) bool {
		return at.State == api.AttentionIdle && at.Detail == "ACK "+next
	})
	// On the stream: the message queued and delivered, then errored in the
	// harness's words (whether a working came between depends on which
	// signal came first: a refusal ends the turn at once), then idle with
	// the next turn's reply.
	errored := attentionEv(api.AttentionErrored, "with the server's error", func(at api.Attention) bool { return strings.Contains(at.Detail, "scripted error") })
	queued := ev(api.EventMessageQueued, res.ID, func(e api.Event) bool { return e.MessageID == res.ID })
	evs := stream.expect(30*time.Second, []eventWant{failedEv(res.ID)},
		messageChain(res.ID),
		[]eventWant{queued, errored, attentionEv(api.AttentionIdle, "with ACK "+next, func(at api.Attention) bool { return at.Detail == "ACK "+next })})
	s.Logf("the event stream: %s", eventsLine(evs))
	// A turn that started before the error ends in it.
	started := ev(api.EventTurnStarted, "", nil)
	if matched([]eventWant{queued, started, errored}, evs) == 3 {
		stream.expect(30*time.Second, nil, []eventWant{queued, started,
			ev(api.EventTurnEnded, "error with the server's error", func(e api.Event) bool {
				return e.State == "error" && strings.Contains(e.Reason, "scripted error")
			}), errored})
	}
}

// refusal is the body of modelError's HTTP 400, one the CLI does not
// retry over time: for claude the model server's own (api_error), for
// codex and opencode an invalid_request_error (opencode 1.18.33 retries a
// 400 whose body says server_error, the model server's own, five times
// over about 75 s).
func refusal(a modelserver.API) string {
	if a == modelserver.Anthropic {
		return ""
	}
	return `{"error":{"type":"invalid_request_error","message":"modelserver: scripted error","code":null}}`
}
