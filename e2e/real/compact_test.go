package real

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/claude"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// compact: `leo agent compact` runs the real TUI's /compact (typed by the
// daemon into the idle input line), the delivery is confirmed only by the
// harness's own record of a compaction, which the adapter reads here too,
// no turn ever carries "/compact" as a message, and the TUI takes the next
// message. claude declines a conversation too short ("Not enough messages
// to compact." after one exchange, on 2.1.197), so two more come first.
func (r *run) compact(s *step) {
	s.exchange(r.h, "Before the compaction, one.")
	s.exchange(r.h, "Before the compaction, two.")
	since := time.Now().Add(-time.Second)
	before := len(r.ms.Requests())
	var res api.SendResult
	if out := s.leo("agent", "compact", r.h, "--json"); json.Unmarshal([]byte(out), &res) != nil || res.ID == "" {
		s.Fatalf("leo agent compact --json: %q", out)
	}
	var d api.Delivery
	s.poll(3*time.Minute, "the compaction's outcome", func() (bool, string) {
		a := s.get(r.h)
		for _, x := range a.Deliveries {
			if x.ID == res.ID {
				d = x
				return true, ""
			}
		}
		return false, describe(a)
	})
	if d.Status != "delivered" || d.Kind != api.DeliveryCompact {
		s.Fatalf("compaction %s: %s %s (kind %q)", res.ID, d.Status, d.Error, d.Kind)
	}
	h, _ := harness.Lookup(r.h)
	c, ok := h.(harness.Compacter)
	if !ok {
		s.Fatalf("the %s adapter names no compact command", r.h)
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	a := s.get(r.h)
	cs, err := c.Compactions(ctx, harness.SessionQuery{Workspace: r.workspace(r.h), Env: r.w.UserEnv, Since: since}, a.SessionID)
	if err != nil || len(cs) == 0 || cs[len(cs)-1].Refused != "" {
		s.Fatalf("the harness's record after the compaction: %+v, %v", cs, err)
	}
	reqs := r.ms.Requests()[before:]
	if len(reqs) == 0 {
		s.Fatalf("the compaction asked the model server nothing (no summary was made)")
	}
	for _, q := range reqs {
		if strings.TrimSpace(q.UserText) == c.CompactCommand() {
			s.Fatalf("request #%d carried %q as the user's message: the command was taken as a turn", q.Seq, q.UserText)
		}
	}
	s.exchange(r.h, "After the compaction.")
}

// interrupt: a turn whose answer the model server holds back is ended by
// leo's interrupt (the adapter's keys, through the daemon): the TUI shows
// an idle, empty input line again long before the answer would come, the
// held answer never shows, and the next message is delivered.
func (r *run) interrupt(s *step) {
	m := r.marker()
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && slices.Contains(q.Markers, m) {
			return modelserver.Reply{Text: "ACK " + m, Delay: 10 * time.Minute}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	res := s.send(r.h, "A slow one "+m+" please")
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	s.turn(m, time.Minute)
	h, _ := harness.Lookup(r.h)
	s.poll(time.Minute, r.h+"'s TUI in the held turn", func() (bool, string) {
		scr, text := s.screen(h, r.h)
		return scr.State == harness.ScreenBusy, scr.State.String() + ":\n" + lastLines(text, 15)
	})
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	if _, err := r.w.Client.Interrupt(ctx, r.h); err != nil {
		s.Fatalf("interrupt: %v", err)
	}
	s.poll(time.Minute, r.h+"'s TUI idle again after the interrupt", func() (bool, string) {
		scr, text := s.screen(h, r.h)
		return scr.State == harness.ScreenReady && scr.Input == "", scr.State.String() + " input " + scr.Input + ":\n" + lastLines(text, 15)
	})
	if _, text := s.screen(h, r.h); strings.Contains(text, "ACK "+m) {
		s.Fatalf("the held answer showed: the turn was not interrupted")
	}
	s.exchange(r.h, "After the interrupt.")
}

// screen is the agent's pane as the adapter classifies it.
func (s *step) screen(h harness.Harness, name string) (harness.Screen, string) {
	s.Helper()
	panes, err := s.r.w.AgentPanes()
	if err != nil {
		s.Fatalf("list panes: %v", err)
	}
	ps := panes["leo-"+name]
	if len(ps) != 1 {
		s.Fatalf("agent %s: panes %+v", name, ps)
	}
	out, err := s.r.w.Tmux("capture-pane", "-p", "-J", "-t", ps[0].PaneID)
	if err != nil {
		s.Fatalf("capture %s: %v", name, err)
	}
	return h.Screen().Classify(out), out
}
