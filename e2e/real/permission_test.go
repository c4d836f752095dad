package real

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The permission step (issue 18): an agent whose harness asks before it
// runs a command is sent a message the model server answers with a call of
// a command that needs approval. Its attention goes working → needs_input
// (the prompt's text names the command) → answered in the TUI, with the
// keys a person presses → working → idle; a second message sent while the
// prompt waited is held past the readiness timeout, not failed, and is
// delivered once the prompt is answered. Harnesses without an entry in
// askOptions skip the step.

// askOptions are the harness_options of the step's template that make the
// harness ask (claude 2.1.332 defaults to "auto", which asks nobody).
var askOptions = map[string]string{
	"claude":   "permission_mode: default",
	"opencode": "permission: {bash: ask}",
}

// whyNoAsking says why a harness without askOptions asks nobody.
var whyNoAsking = map[string]string{
	"codex": "leo launches codex with -a never (the spec's approval policy): it never asks",
	"pi":    "pi has no permission prompts: its tools run without asking",
}

// skipUnlessAsking skips the step for a harness that asks nobody.
func (s *step) skipUnlessAsking(h string) {
	if _, ok := askOptions[h]; ok {
		return
	}
	why := whyNoAsking[h]
	if why == "" {
		why = "no asking configuration in this step yet"
	}
	s.Skipf("%s: %s", h, why)
}

// askTool is the call the model server answers the step's first message
// with, by harness; askCommand is the command it runs.
const askCommand = "touch leo-asked"

var askTool = map[string]modelserver.ToolCall{
	"claude":   {Name: "Bash", Input: `{"command":"` + askCommand + `","description":"Create the file leo-asked"}`},
	"opencode": {Name: "bash", Input: `{"command":"` + askCommand + `","description":"Create the file leo-asked"}`},
}

// approveKeys answer the prompt "yes, once", as a person would press them
// (claude: "1. Yes"; opencode: Enter on "Allow once", the choice under the
// cursor; docs/harness-behaviour/<harness>.md).
var approveKeys = map[string][]string{
	"claude":   {"1"},
	"opencode": {"Enter"},
}

// askChoices check the prompt's choices are the harness's, in its words.
var askChoices = map[string]func([]string) bool{
	"claude": func(c []string) bool {
		return c[0] == "Yes" && slices.ContainsFunc(c, func(c string) bool { return strings.HasPrefix(c, "No") })
	},
	"opencode": func(c []string) bool { return slices.Equal(c, []string{"Allow once", "Allow always", "Reject"}) },
}

// askAgent names the template (and agent) of the permission step.
func (r *run) askAgent() string { return r.h + "-ask" }

// askStepHold is how long the second message is held while the prompt
// waits: past the readiness timeout that used to fail it.
var askStepHold = delivery.DefaultReadyTimeout + 10*time.Second

func (r *run) permissionPrompt(s *step) {
	s.skipUnlessAsking(r.h)
	name := r.askAgent()
	ask, second := r.marker(), r.marker()
	tool := askTool[r.h]
	// Both of the asking turn's replies are held back a few seconds, so a
	// poll sees the agent working before the prompt and after it.
	const think = 3 * time.Second
	var secondSeen atomic.Bool
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		switch {
		case q.Side:
		case slices.Contains(q.Markers, second):
			secondSeen.Store(true)
			return modelserver.Reply{Text: "ACK " + second}
		case slices.Contains(q.Markers, ask) && len(q.ToolResults) == 0:
			return modelserver.Reply{ToolCall: &tool, Delay: think}
		case slices.Contains(q.Markers, ask):
			return modelserver.Reply{Text: "ACK " + ask, Delay: think}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)

	s.leo("agent", "spawn", name)
	s.waitRunning(name, 3*time.Minute)
	s.pane(name, realcli.ReadyText[r.h], time.Minute)
	stream := s.openEvents(name)

	// seen are the attention states the polls saw, each change once.
	var seen []api.AttentionState
	attention := func() *api.Attention {
		a := s.get(name)
		if at := a.Attention; at != nil && (len(seen) == 0 || seen[len(seen)-1] != at.State) {
			seen = append(seen, at.State)
		}
		return a.Attention
	}
	until := func(d time.Duration, what string, cond func(*api.Attention) bool) *api.Attention {
		s.Helper()
		var at *api.Attention
		s.poll(d, name+" "+what, func() (bool, string) {
			at = attention()
			return at != nil && cond(at), fmt.Sprintf("attention %+v (seen %v)", at, seen)
		})
		return at
	}

	first := s.send(name, "Please create the file leo-asked "+ask+" now")
	until(2*time.Minute, "working", func(at *api.Attention) bool { return at.State == api.AttentionWorking })
	at := until(2*time.Minute, "needs input", func(at *api.Attention) bool {
		return at.State == api.AttentionNeedsInput && at.Prompt != nil && at.Prompt.Text != "" && len(at.Prompt.Choices) > 0
	})
	if p := at.Prompt; p.Kind != api.PromptPermission || !strings.Contains(p.Text, askCommand) || p.ID == "" || !askChoices[r.h](p.Choices) {
		s.Fatalf("the prompt %+v does not name %q with %s's choices", p, askCommand, r.h)
	}
	s.Logf("prompt: %+v", *at.Prompt)
	s.delivered(name, first.ID, ask, time.Minute)

	// A message sent while the prompt waits is held, past the readiness
	// timeout, and says what it waits for.
	held := s.send(name, "And then this one "+second+" please")
	sent := time.Now()
	s.poll(askStepHold+time.Minute, "the second message held while the prompt waits", func() (bool, string) {
		a := s.get(name)
		for _, d := range a.Deliveries {
			if d.ID == held.ID {
				s.Fatalf("the held message was recorded %s (%s) while the prompt waited", d.Status, d.Error)
			}
		}
		if secondSeen.Load() {
			s.Fatalf("the second message reached the model while the prompt waited")
		}
		if at := a.Attention; at == nil || at.State != api.AttentionNeedsInput {
			s.Fatalf("attention %+v while the prompt waited", at)
		}
		return time.Since(sent) >= askStepHold && a.Queued == 1, fmt.Sprintf("queued %d, held %s", a.Queued, time.Since(sent).Round(time.Second))
	})
	if out := s.leo("agent", "status", name); !strings.Contains(out, "asks permission") || !strings.Contains(out, askCommand) {
		s.Fatalf("agent status does not say what the message waits for:\n%s", out)
	}

	// Answered in the TUI, as a person would.
	pane := s.paneID(name)
	for _, k := range approveKeys[r.h] {
		if out, err := r.w.Tmux("send-keys", "-t", pane, k); err != nil {
			s.Fatalf("send-keys %s: %v %s", k, err, out)
		}
	}
	until(time.Minute, "working after the answer", func(at *api.Attention) bool { return at.State == api.AttentionWorking })
	until(2*time.Minute, "idle with the reply", func(at *api.Attention) bool {
		return at.State == api.AttentionIdle && strings.Contains(at.Detail, "ACK "+ask)
	})
	if _, err := os.Stat(filepath.Join(r.workspace(name), "leo-asked")); err != nil {
		s.Fatalf("the approved command did not run: %v", err)
	}
	s.delivered(name, held.ID, second, 3*time.Minute)
	s.turn(second, time.Minute)
	s.pane(name, "ACK "+second, time.Minute)
	s.once(second)
	until(time.Minute, "idle after the second message", func(at *api.Attention) bool {
		return at.State == api.AttentionIdle && strings.Contains(at.Detail, "ACK "+second)
	})
	want := []api.AttentionState{api.AttentionWorking, api.AttentionNeedsInput, api.AttentionWorking, api.AttentionIdle}
	s.Logf("attention went %v", seen)
	if !subsequence(want, seen) {
		s.Fatalf("attention went %v, want %v in that order", seen, want)
	}
	r.permissionEvents(stream, first.ID, held.ID, ask, second)
}

// permissionEvents checks the step on the HTTP API's event stream: the
// agent's attention goes working → needs_input (a permission prompt that
// names the command) → working → idle with the asking turn's reply; the
// message sent while the prompt waited is queued during needs_input and
// delivered only after the answer (the working that follows), never
// failed; both turns end ok with their replies' first lines.
func (r *run) permissionEvents(es *eventStream, first, held, ask, second string) {
	es.s.Helper()
	replied := func(m string) func(api.Attention) bool {
		return func(at api.Attention) bool { return strings.Contains(at.Detail, "ACK "+m) }
	}
	asks := attentionEv(api.AttentionNeedsInput, "asking to run "+askCommand, func(at api.Attention) bool {
		return at.Prompt != nil && at.Prompt.Kind == api.PromptPermission && strings.Contains(at.Prompt.Text, askCommand)
	})
	working := attentionEv(api.AttentionWorking, "", nil)
	evs := es.expect(time.Minute, []eventWant{failedEv(first), failedEv(held)},
		messageChain(first),
		[]eventWant{working, asks, working, attentionEv(api.AttentionIdle, "with ACK "+ask, replied(ask))},
		append([]eventWant{asks}, append(messageChain(held), working, attentionEv(api.AttentionIdle, "with ACK "+second, replied(second)))...),
		[]eventWant{asks, working, ev(api.EventMessageDelivered, held, func(e api.Event) bool { return e.MessageID == held })},
		// A turn a hook started carries no message id (claude's prompt
		// hook comes before leo records the delivery); its end does.
		[]eventWant{
			ev(api.EventTurnStarted, "", nil),
			ev(api.EventMessageQueued, held, func(e api.Event) bool { return e.MessageID == held }),
			ev(api.EventTurnEnded, "ok with ACK "+ask, func(e api.Event) bool { return e.State == "ok" && strings.Contains(e.FirstLine, "ACK "+ask) }),
			ev(api.EventTurnStarted, "", nil),
			ev(api.EventTurnEnded, "ok of "+held+" with ACK "+second, func(e api.Event) bool {
				return e.State == "ok" && e.MessageID == held && strings.Contains(e.FirstLine, "ACK "+second)
			}),
		},
	)
	es.s.Logf("the event stream: %s", eventsLine(evs))
}

// subsequence reports whether want occurs in got in order.
func subsequence[T comparable](want, got []T) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// paneID is the pane of agent name.
func (s *step) paneID(name string) string {
	s.Helper()
	panes, err := s.r.w.AgentPanes()
	if err != nil {
		s.Fatalf("list panes: %v", err)
	}
	ps := panes["leo-"+name]
	if len(ps) != 1 {
		s.Fatalf("agent %s: panes %+v", name, ps)
	}
	return ps[0].PaneID
}
