package real

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The conversation steps (issue 19) on every harness: `leo agent send
// --reply` prints the reply of that message's turn, read from the
// harness's own record — never an earlier turn's, even one still running
// when the send is made; `leo agent conversation --json` lists the turns
// in order with their replies and senders (empty for text a person typed
// in the TUI), and still does after the TUI was killed and resumed.

// sentTurn is a turn a conversation step made: its marker and who sent it
// ("" for typed in the TUI).
type sentTurn struct{ marker, sender string }

// replyOf runs `leo agent send --reply --json` and returns its outcome.
func (s *step) replyOf(name, text string) api.MessageOutcome {
	s.Helper()
	out := s.leo("agent", "send", name, text, "--reply", "--json", "--timeout", "100s")
	var o api.MessageOutcome
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		s.Fatalf("send --reply --json printed %q: %v", out, err)
	}
	return o
}

// sendReply: the reply is the text the model server answered the turn
// with, and the turn's usage is what it reported.
func (r *run) sendReply(s *step) {
	m := r.marker()
	o := s.replyOf(r.h, "Answer this one "+m+" please")
	if o.Status != api.MessageDelivered || o.Reply == nil || o.Outcome != api.OutcomeTurnOK {
		s.Fatalf("outcome %+v", o)
	}
	if !strings.Contains(o.Reply.Text, "ACK "+m) {
		s.Fatalf("reply %q, want the model server's answer to %s", o.Reply.Text, m)
	}
	if o.Usage == nil || o.Usage.OutputTokens == 0 || o.Usage.InputTokens == 0 {
		s.Fatalf("usage %+v, want the tokens the model server reported", o.Usage)
	}
	s.once(m)
	r.replied = append(r.replied, sentTurn{m, api.SenderCLI})
}

// replyOfThatTurn: a slow turn A (its reply held back), then at once
// `send --reply` B: the answer is B's reply, not A's.
func (r *run) replyOfThatTurn(s *step) {
	a, b := r.marker(), r.marker()
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && slices.Contains(q.Markers, a) {
			return modelserver.Reply{Text: "ACK " + a + " slowly", Delay: 10 * time.Second}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	first := s.send(r.h, "A slow one "+a+" please")
	o := s.replyOf(r.h, "And then this one "+b+" please")
	if o.Reply == nil || !strings.Contains(o.Reply.Text, "ACK "+b) || strings.Contains(o.Reply.Text, a) {
		s.Fatalf("send --reply %s answered %+v, want %s's reply and nothing of %s's", b, o, b, a)
	}
	s.delivered(r.h, first.ID, a, time.Minute)
	s.once(a)
	s.once(b)
	r.replied = append(r.replied, sentTurn{a, api.SenderCLI}, sentTurn{b, api.SenderCLI})
}

// typedTurn: text a person types in the TUI is a turn of the
// conversation with no sender.
func (r *run) typedTurn(s *step) {
	m := r.marker()
	text := "Typed by hand " + m + " please"
	pane := s.paneID(r.h)
	if out, err := r.w.Tmux("send-keys", "-t", pane, "-l", text); err != nil {
		s.Fatalf("send-keys: %v %s", err, out)
	}
	s.pane(r.h, text, time.Minute)
	// codex takes keys that come fast as a paste, and an Enter inside its
	// burst window as a newline: the Enter waits out the window the
	// adapter names (the text already showed, so this is past it).
	if ad, ok := harness.Lookup(r.h); ok {
		if pt, ok := ad.(harness.PasteTiming); ok {
			<-time.After(pt.EnterDelay())
		}
	}
	if out, err := r.w.Tmux("send-keys", "-t", pane, "Enter"); err != nil {
		s.Fatalf("send-keys Enter: %v %s", err, out)
	}
	s.turn(m, time.Minute)
	s.pane(r.h, "ACK "+m, time.Minute)
	r.replied = append(r.replied, sentTurn{m, ""})
	s.poll(time.Minute, "the typed turn in the conversation", func() (bool, string) {
		c := s.conversation(r.h)
		t, ok := turnOf(c, m)
		return ok && t.Outcome == api.OutcomeTurnOK, fmt.Sprintf("turn %+v", t)
	})
}

// conversationResumed: the turns of these steps, in order, each with its
// reply and sender — and the same after the TUI was killed and resumed.
func (r *run) conversationResumed(s *step) {
	check := func(when string) api.Conversation {
		c := s.conversation(r.h)
		last := -1
		for _, st := range r.replied {
			i := slices.IndexFunc(c.Turns, func(t api.Turn) bool { return strings.Contains(t.User.Text, st.marker) })
			if i < 0 {
				s.Fatalf("%s: no turn of %s in conversation %s (%d turns)", when, st.marker, c.ConversationID, len(c.Turns))
			}
			t := c.Turns[i]
			if i <= last {
				s.Fatalf("%s: the turn of %s is #%d, before the one sent earlier (#%d)", when, st.marker, i, last)
			}
			last = i
			if !strings.Contains(t.Reply.Text, "ACK "+st.marker) || t.Outcome != api.OutcomeTurnOK {
				s.Fatalf("%s: turn of %s: reply %q outcome %s", when, st.marker, t.Reply.Text, t.Outcome)
			}
			if t.User.Sender != st.sender {
				s.Fatalf("%s: turn of %s has sender %q, want %q", when, st.marker, t.User.Sender, st.sender)
			}
			if t.Usage == nil || t.Usage.OutputTokens == 0 {
				s.Fatalf("%s: turn of %s has usage %+v", when, st.marker, t.Usage)
			}
		}
		return c
	}
	if len(r.replied) < 4 {
		s.Fatalf("the earlier conversation steps left %d turns to check", len(r.replied))
	}
	before := check("before the kill")
	pid := s.panePID(r.h)
	restarts := s.get(r.h).Restarts
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		s.Fatalf("kill %d: %v", pid, err)
	}
	s.poll(2*time.Minute, "restart after the kill", func() (bool, string) {
		a := s.get(r.h)
		return a.Restarts > restarts && a.State == api.StateRunning, describe(a)
	})
	after := check("after the resume")
	if after.ConversationID != before.ConversationID {
		s.Fatalf("conversation %s after the resume, was %s", after.ConversationID, before.ConversationID)
	}
}

// conversation is `leo agent conversation NAME --json`.
func (s *step) conversation(name string) api.Conversation {
	s.Helper()
	out := s.leo("agent", "conversation", name, "--json")
	var c api.Conversation
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		s.Fatalf("conversation --json printed %q: %v", out, err)
	}
	return c
}

func turnOf(c api.Conversation, marker string) (api.Turn, bool) {
	for _, t := range c.Turns {
		if strings.Contains(t.User.Text, marker) {
			return t, true
		}
	}
	return api.Turn{}, false
}
