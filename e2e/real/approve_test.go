package real

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The answer step (issue 20): an agent whose harness asks before it runs
// a command (askOptions) is answered through leo, not the TUI:
//
//   - `leo agent approve` with no prompt shown: no_prompt;
//   - a call of `touch leo-approved`: `leo agent approve` (no --prompt:
//     the one status shows) → the command ran, the turn ends with the
//     reply, prompt.answered (by cli) is on the event stream;
//   - a call of `touch leo-denied`: `approve --prompt <the first id>` →
//     prompt_changed, nothing pressed (the prompt still shows); `leo agent
//     deny --prompt <its id>` → the command did not run, the turn ends.

// approveAgent names the template (and agent) of the step.
func (r *run) approveAgent() string { return r.h + "-approve" }

func (r *run) answerPrompts(s *step) {
	s.skipUnlessAsking(r.h)
	name := r.approveAgent()
	approved, denied := r.marker(), r.marker()
	call := r.askCall
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		switch {
		case q.Side:
		case slices.Contains(q.Markers, approved) && len(q.ToolResults) == 0:
			return modelserver.Reply{ToolCall: call("leo-approved")}
		case slices.Contains(q.Markers, approved):
			return modelserver.DefaultResponder(q) // ACK with every marker
		case slices.Contains(q.Markers, denied) && len(q.ToolResults) == 0:
			return modelserver.Reply{ToolCall: call("leo-denied")}
		case slices.Contains(q.Markers, denied):
			// claude puts the denied turn's words before the next
			// message's: the reply names every marker.
			return modelserver.DefaultResponder(q)
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)

	s.leo("agent", "spawn", name)
	s.waitRunning(name, 3*time.Minute)
	s.pane(name, realcli.ReadyText[r.h], time.Minute)
	stream := s.openEvents(name)

	// No prompt: nothing to answer.
	s.answerFails(api.CodeNoPrompt, "agent", "approve", name, "--prompt", "p-000000000000", "--json")
	s.answerFails(api.CodeNoPrompt, "agent", "approve", name, "--json")

	asks := func(file string) api.Prompt {
		s.Helper()
		at := s.waitAttention(name, 3*time.Minute, "asking to run touch "+file, func(at api.Attention) bool {
			return at.State == api.AttentionNeedsInput && at.Prompt != nil && len(at.Prompt.Choices) > 0 && strings.Contains(at.Prompt.Text, "touch "+file)
		})
		if !askChoices[r.h](at.Prompt.Choices) {
			s.Fatalf("the prompt %+v does not offer %s's choices", *at.Prompt, r.h)
		}
		return *at.Prompt
	}
	ws := r.workspace(name)

	// approve: the prompt status shows, named in the answer.
	s.send(name, "Please create the file leo-approved "+approved+" now")
	first := asks("leo-approved")
	var res api.AnswerResult
	out := s.leo("agent", "approve", name, "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		s.Fatalf("approve --json: %v: %s", err, out)
	}
	if res.Prompt.ID != first.ID || res.Answer != api.AnswerApprove || !res.Cleared {
		s.Fatalf("approve answered %+v, want prompt %s approved and cleared", res, first.ID)
	}
	s.Logf("approve: %s", strings.TrimSpace(out))
	s.waitAttention(name, 2*time.Minute, "idle with ACK "+approved, func(at api.Attention) bool {
		return at.State == api.AttentionIdle && strings.Contains(at.Detail, "ACK "+approved)
	})
	if _, err := os.Stat(filepath.Join(ws, "leo-approved")); err != nil {
		s.Fatalf("the approved command did not run: %v", err)
	}

	// A stale id: prompt_changed, and the prompt still waits.
	s.send(name, "Please create the file leo-denied "+denied+" now")
	second := asks("leo-denied")
	if second.ID == first.ID {
		s.Fatalf("two prompts about two commands have one id %s", first.ID)
	}
	s.answerFails(api.CodePromptChanged, "agent", "approve", name, "--prompt", first.ID, "--json")
	if at := s.attentionOf(name); at == nil || at.State != api.AttentionNeedsInput || at.Prompt == nil || at.Prompt.ID != second.ID {
		s.Fatalf("after prompt_changed the agent's attention is %+v, want prompt %s still waiting", at, second.ID)
	}
	if _, err := os.Stat(filepath.Join(ws, "leo-denied")); err == nil {
		s.Fatalf("leo-denied exists after a refused approve")
	}

	// deny, by its id.
	out = s.leo("agent", "deny", name, "--prompt", second.ID)
	s.Logf("deny: %s", strings.TrimSpace(out))
	if !strings.Contains(out, "answered") || !strings.Contains(out, second.ID) {
		s.Fatalf("deny says %q, want the prompt %s answered", out, second.ID)
	}
	s.waitAttention(name, 2*time.Minute, "the denied turn ended", func(at api.Attention) bool {
		return at.State == api.AttentionIdle || at.State == api.AttentionErrored
	})
	if _, err := os.Stat(filepath.Join(ws, "leo-denied")); err == nil {
		s.Fatalf("the denied command ran: leo-denied exists")
	}
	s.answerFails(api.CodeNoPrompt, "agent", "deny", name, "--prompt", second.ID, "--json")
	// The denied turn is over for leo's delivery too: the next message
	// goes in at once, not after a readiness timeout.
	after := r.marker()
	sentAt := time.Now()
	next := s.send(name, "And now just say "+after)
	s.delivered(name, next.ID, after, time.Minute)
	s.Logf("the message after the denial was delivered in %s", time.Since(sentAt).Round(100*time.Millisecond))
	// (claude sends the refused call's result with it: the model server
	// may read the request as the denied turn's, so any reply will do.)
	s.waitAttention(name, 2*time.Minute, "idle after "+after, func(at api.Attention) bool {
		return at.State == api.AttentionIdle && at.Since.After(sentAt) && strings.HasPrefix(at.Detail, "ACK")
	})

	answered := func(id, answer string) eventWant {
		return ev(api.EventPromptAnswered, answer+" of "+id+" by cli", func(e api.Event) bool {
			return e.PromptID == id && e.Answer == answer && e.By == api.SenderCLI
		})
	}
	evs := stream.expect(time.Minute, nil, []eventWant{answered(first.ID, api.AnswerApprove), answered(second.ID, api.AnswerDeny)})
	for _, e := range evs {
		if e.Type == api.EventPromptAnswered && e.PromptID != first.ID && e.PromptID != second.ID {
			s.Fatalf("an answer nobody gave is on the stream: %s", eventLine(e))
		}
	}
	if n := countType(evs, api.EventPromptAnswered); n != 2 {
		s.Fatalf("%d prompt.answered events, want 2 (the refused answers press nothing): %s", n, eventsLine(evs))
	}
}

// askCall is the step's asking tool call (askTool) about file.
func (r *run) askCall(file string) *modelserver.ToolCall {
	t := askTool[r.h]
	t.Input = strings.ReplaceAll(t.Input, "leo-asked", file)
	return &t
}

// ensureRunning spawns the agent name (its template's) unless an earlier
// step left it, and waits until its TUI is up.
func (s *step) ensureRunning(name string) {
	s.Helper()
	if _, err := s.r.w.Client.Get(s.ctx, name); err != nil {
		s.leo("agent", "spawn", name)
		s.waitRunning(name, 3*time.Minute)
		s.pane(name, realcli.ReadyText[s.r.h], time.Minute)
	}
}

// answerFails runs leo args (with --json) and wants it to fail with code.
func (s *step) answerFails(code api.Code, args ...string) {
	s.Helper()
	ctx, cancel := s.wait(time.Minute)
	defer cancel()
	raw, err := s.r.w.Leo(ctx, args...)
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	if err == nil || e.Error != string(code) {
		s.Fatalf("leo %s: %v %s, want %s", strings.Join(args, " "), err, raw, code)
	}
}

func countType(evs []api.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// questionCalls are the calls of each harness's question tool the
// question step's model server answers with (as the captures ask them:
// capturesignals for opencode, capturescreens -scenario question for
// claude).
var questionCalls = map[string]modelserver.ToolCall{
	"opencode": {Name: "question", Input: `{"questions":[{"header":"File","question":"Which file should I create?","options":[{"label":"alpha.txt","description":"The first file"},{"label":"beta.txt","description":"The second file"}]}]}`},
	"claude":   {Name: "AskUserQuestion", Input: `{"questions":[{"header":"File","question":"Which file should I create?","multiSelect":false,"options":[{"label":"alpha.txt","description":"The first file"},{"label":"beta.txt","description":"The second file"}]}]}`},
}

// answerQuestion: a question the harness asks (opencode's question tool,
// claude's AskUserQuestion) answered through leo with `leo agent answer
// NAME TEXT`: an option's label picks it, other text goes in as the
// person's own answer; the tool result the model gets carries it, and the
// turn ends with the reply.
func (r *run) answerQuestion(s *step) {
	call, ok := questionCalls[r.h]
	if !ok {
		s.Skipf("%s: it has no question tool leo reads off its screen", r.h)
	}
	name := r.approveAgent()
	picked, typed := r.marker(), r.marker()
	results := map[string]string{}
	var mu sync.Mutex
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		for _, m := range []string{picked, typed} {
			switch {
			case q.Side || !slices.Contains(q.Markers, m):
			case len(q.ToolResults) == 0:
				return modelserver.Reply{ToolCall: &call}
			default:
				mu.Lock()
				results[m] = q.ToolResults[0].Text
				mu.Unlock()
				return modelserver.Reply{Text: "ACK " + m}
			}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	s.ensureRunning(name)
	for _, c := range []struct{ marker, text string }{{picked, "beta.txt"}, {typed, "gamma.txt"}} {
		s.send(name, "Ask me which file "+c.marker)
		at := s.waitAttention(name, 3*time.Minute, "asking which file", func(at api.Attention) bool {
			return at.State == api.AttentionNeedsInput && at.Prompt != nil && at.Prompt.Kind == api.PromptQuestion && len(at.Prompt.Choices) > 0
		})
		s.Logf("question: %+v", *at.Prompt)
		out := s.leo("agent", "answer", name, c.text, "--prompt", at.Prompt.ID)
		s.Logf("answer %s: %s", c.text, strings.TrimSpace(out))
		s.waitAttention(name, 2*time.Minute, "idle with ACK "+c.marker, func(at api.Attention) bool {
			return at.State == api.AttentionIdle && strings.Contains(at.Detail, "ACK "+c.marker)
		})
		mu.Lock()
		got := results[c.marker]
		mu.Unlock()
		if !strings.Contains(got, c.text) {
			s.Fatalf("the question's tool result %q does not carry the answer %q", got, c.text)
		}
	}
}

// answerAlways: `leo agent approve --always` picks the harness's own
// "don't ask again" choice (claude's "Yes, and always allow …", opencode's
// "Allow always" and its Confirm): the command runs, and on the pins the
// same command on another file then runs without a prompt — the harness
// widened its own permission, exactly as far as its prompt offered. How
// far that is, is the harness's: claude 2.1.332's "always allow access to
// <dir>" does not cover the next touch, and asks again; on the newest
// CLIs the step says which it did and approves a second prompt once.
func (r *run) answerAlways(s *step) {
	s.skipUnlessAsking(r.h)
	name := r.approveAgent()
	once, again := r.marker(), r.marker()
	call := r.askCall
	r.ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		switch {
		case q.Side:
		case slices.Contains(q.Markers, again) && len(q.ToolResults) == 0:
			return modelserver.Reply{ToolCall: call("leo-always-2")}
		case slices.Contains(q.Markers, again):
		case slices.Contains(q.Markers, once) && len(q.ToolResults) == 0:
			return modelserver.Reply{ToolCall: call("leo-always-1")}
		}
		return modelserver.DefaultResponder(q)
	})
	defer r.ms.SetResponder(nil)
	s.ensureRunning(name)
	ws := r.workspace(name)

	s.send(name, "Please create the file leo-always-1 "+once+" now")
	at := s.waitAttention(name, 3*time.Minute, "asking to run touch leo-always-1", func(at api.Attention) bool {
		return at.State == api.AttentionNeedsInput && at.Prompt != nil && len(at.Prompt.Choices) > 0 && strings.Contains(at.Prompt.Text, "touch leo-always-1")
	})
	if !slices.Contains(at.Prompt.Answers, api.AnswerAlways) {
		s.Fatalf("the prompt %+v offers no always answer", *at.Prompt)
	}
	out := s.leo("agent", "approve", name, "--always", "--prompt", at.Prompt.ID)
	s.Logf("approve --always: %s", strings.TrimSpace(out))
	s.waitAttention(name, 2*time.Minute, "idle with ACK "+once, func(at api.Attention) bool {
		return at.State == api.AttentionIdle && strings.Contains(at.Detail, "ACK "+once)
	})
	if _, err := os.Stat(filepath.Join(ws, "leo-always-1")); err != nil {
		s.Fatalf("the command approved always did not run: %v", err)
	}

	// The same command again: no prompt this time.
	sentAt := time.Now()
	s.send(name, "Please create the file leo-always-2 "+again+" now")
	asked := false
	s.waitAttention(name, 2*time.Minute, "idle with ACK "+again+" (no prompt)", func(at api.Attention) bool {
		if at.State == api.AttentionNeedsInput && at.Prompt != nil && len(at.Prompt.Choices) > 0 && !asked {
			if !latest() {
				s.Fatalf("asked again after --always: %+v", *at.Prompt)
			}
			asked = true
			s.Logf("%s asked again after --always (its always choice did not cover this call): %s", r.h, at.Prompt.Text)
			s.leo("agent", "approve", name, "--prompt", at.Prompt.ID)
		}
		return at.State == api.AttentionIdle && at.Since.After(sentAt) && strings.Contains(at.Detail, "ACK "+again)
	})
	if !asked {
		s.Logf("%s ran the second call without asking", r.h)
	}
	if _, err := os.Stat(filepath.Join(ws, "leo-always-2")); err != nil {
		s.Fatalf("the second command did not run: %v", err)
	}
}
