package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// askYAML makes each fake harness ask before it runs a command, as the
// real ones do with these options (the fakes imitate their prompts:
// testutil/fakeharness/{claude,opencode}_permission.go).
var askYAML = map[string]string{
	"claude":   "    harness_options:\n      permission_mode: default\n",
	"opencode": "    harness_options:\n      permission: {bash: ask}\n",
}

// answerEnv is an env whose claude and opencode ask, with a manager
// publishing to a bus, and agent h running.
func answerEnv(t *testing.T, h string) (*testEnv, *Manager, func() []api.Event) {
	t.Helper()
	e := newEnv(t)
	for name, y := range askYAML {
		e.tmpl[name] += y
	}
	e.writeConfig()
	bus := e.withEvents()
	m := e.manager()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	waitAttention(t, m, h, api.AttentionIdle)
	return e, m, func() []api.Event { return bus.Since(0, nil) }
}

// ask sends a message whose turn calls command, and once the fake asks
// tells the manager so, as the harness's hook would (the tests run no
// hooks), and waits for the prompt the screen shows about it.
func (e *testEnv) ask(t *testing.T, m *Manager, h, command string) api.Prompt {
	t.Helper()
	before := e.fakeEvents("permission_asked")
	if _, err := m.Send(context.Background(), h, "please run it fake-ask:"+command); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fake to ask about "+command, 30*time.Second, func() bool { return len(e.fakeEvents("permission_asked")) > len(before) })
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalNeedsInput, Text: "Bash " + command})
	var p *api.Prompt
	waitFor(t, "the prompt about "+command, 30*time.Second, func() bool {
		at := attentionOf(t, m, h)
		p = at.Prompt
		return at.State == api.AttentionNeedsInput && p != nil && len(p.Choices) > 0 && strings.Contains(p.Text, command)
	})
	return *p
}

// answered are the choices the fake's prompts took, in order.
func (e *testEnv) answered() []string { return e.fakeEvents("permission_answered") }

// fakeEvents are the choices (or commands) of the fake's events of kind.
func (e *testEnv) fakeEvents(kind string) []string {
	data, _ := os.ReadFile(e.harnLog)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct{ Event, Choice, Command string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == kind {
			out = append(out, ev.Choice+ev.Command)
		}
	}
	return out
}

// answerEvents are the prompt.answered events of h.
func answerEvents(evs []api.Event, h string) []api.Event {
	var out []api.Event
	for _, e := range evs {
		if e.Type == api.EventPromptAnswered && e.Agent == h {
			out = append(out, e)
		}
	}
	return out
}

// The fakes' answers, by harness and leo's answer (opencode's replies).
var fakeChoice = map[string]map[string]string{
	"claude":   {api.AnswerApprove: "Yes", api.AnswerDeny: "No"},
	"opencode": {api.AnswerApprove: "once", api.AnswerAlways: "always", api.AnswerDeny: "reject"},
}

// Approve, always and deny press the keys of the prompt's own choice:
// the fake's prompt takes that choice, the prompt goes away, the turn
// ends, and the answer is logged and on the stream with who gave it.
func TestAnswerApproveAlwaysDeny(t *testing.T) {
	for _, h := range []string{"claude", "opencode"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e, m, events := answerEnv(t, h)
			ctx := context.Background()
			var want []string
			for i, answer := range []string{api.AnswerApprove, api.AnswerDeny, api.AnswerAlways} {
				cmd := "touch f" + string(rune('a'+i))
				p := e.ask(t, m, h, cmd)
				res, err := m.Answer(ctx, h, api.AnswerRequest{Prompt: p.ID, Answer: answer, Sender: api.SenderWeb})
				if err != nil {
					t.Fatalf("%s: %v", answer, err)
				}
				if res.Prompt.ID != p.ID || !res.Cleared || res.Choice == "" {
					t.Fatalf("%s: %+v, want prompt %s cleared", answer, res, p.ID)
				}
				choice := fakeChoice[h][answer]
				if h == "claude" && answer == api.AnswerAlways {
					choice = res.Choice // "Yes, and always allow access to claude/ …"
					if !strings.HasPrefix(choice, "Yes, and always allow") {
						t.Fatalf("always picked %q", choice)
					}
				}
				want = append(want, choice)
				waitFor(t, "the fake took "+choice, 10*time.Second, func() bool { return len(e.answered()) == len(want) })
				if got := e.answered(); got[len(got)-1] != choice {
					t.Fatalf("%s: the fake took %q, want %q", answer, got, want)
				}
				waitAttention(t, m, h, api.AttentionIdle)
			}
			// Always means the harness's own always: the same command runs
			// again without a prompt.
			res, err := m.Send(ctx, h, "please run it fake-ask:touch fc")
			if err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, m, h, res.ID)
			waitFor(t, "the turn after always", 30*time.Second, func() bool {
				return attentionOf(t, m, h).State == api.AttentionIdle && len(answerEvents(events(), h)) == 3
			})
			if got := e.answered(); len(got) != 3 {
				t.Fatalf("asked again after always: %q", got)
			}
			evs := answerEvents(events(), h)
			for i, answer := range []string{api.AnswerApprove, api.AnswerDeny, api.AnswerAlways} {
				if evs[i].Answer != answer || evs[i].By != api.SenderWeb || evs[i].PromptID == "" {
					t.Errorf("event %d: %+v, want %s by web", i, evs[i], answer)
				}
			}
			if log := e.logBuf.String(); strings.Count(log, `msg="prompt answered"`) != 3 || !strings.Contains(log, "by=web") {
				t.Errorf("the log does not say each answer and who gave it:\n%s", log)
			}
		})
	}
}

// A prompt that changed between the caller's look (the id it names) and
// leo's: prompt_changed, and nothing is pressed — the new prompt still
// waits, untouched; then answered by its own id it goes.
func TestAnswerPromptChangedPressesNothing(t *testing.T) {
	for _, h := range []string{"claude", "opencode"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e, m, events := answerEnv(t, h)
			ctx := context.Background()
			old := e.ask(t, m, h, "touch one")
			// A person answers it in the TUI; the next turn asks anew.
			testutil.NewRawTmux(e.tmux).Run(t, "send-keys", "-t", e.paneID(h), "Enter")
			waitAttention(t, m, h, api.AttentionIdle)
			cur := e.ask(t, m, h, "touch two")
			if cur.ID == old.ID {
				t.Fatalf("two prompts, one id %s", cur.ID)
			}
			_, err := m.Answer(ctx, h, api.AnswerRequest{Prompt: old.ID, Answer: api.AnswerDeny})
			if !api.HasCode(err, api.CodePromptChanged) || !strings.Contains(err.Error(), cur.ID) {
				t.Fatalf("answer to the old prompt: %v, want prompt_changed naming %s", err, cur.ID)
			}
			if got := e.answered(); len(got) != 1 {
				t.Fatalf("the fake's prompts took %q: only the person's answer", got)
			}
			if at := attentionOf(t, m, h); at.State != api.AttentionNeedsInput || at.Prompt == nil || at.Prompt.ID != cur.ID {
				t.Fatalf("after prompt_changed: %+v, want the new prompt waiting", at)
			}
			if n := len(answerEvents(events(), h)); n != 0 {
				t.Fatalf("%d prompt.answered events for a refused answer", n)
			}
			if _, err := m.Answer(ctx, h, api.AnswerRequest{Prompt: cur.ID, Answer: api.AnswerDeny}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the denial taken", 10*time.Second, func() bool { return len(e.answered()) == 2 })
		})
	}
}

// A person answered in the TUI at the moment leo was asked to: leo's
// look shows no prompt, so no_prompt, and no key reaches the TUI (its
// input line stays empty, and the person's answer stands).
func TestAnswerAfterAPersonAnsweredInTheTUIPressesNothing(t *testing.T) {
	for _, h := range []string{"claude", "opencode"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e, m, events := answerEnv(t, h)
			p := e.ask(t, m, h, "touch mine")
			testutil.NewRawTmux(e.tmux).Run(t, "send-keys", "-t", e.paneID(h), "Enter")
			waitFor(t, "the person's answer taken", 10*time.Second, func() bool { return len(e.answered()) == 1 })
			_, err := m.Answer(context.Background(), h, api.AnswerRequest{Prompt: p.ID, Answer: api.AnswerDeny})
			if !api.HasCode(err, api.CodeNoPrompt) {
				t.Fatalf("answer after the person's: %v, want no_prompt", err)
			}
			waitAttention(t, m, h, api.AttentionIdle)
			if s := e.screenOf(h, h); s.Input != "" || s.Prompt != nil {
				t.Fatalf("after no_prompt the screen shows %+v: leo typed into it", s)
			}
			if got := e.answered(); len(got) != 1 || got[0] != fakeChoice[h][api.AnswerApprove] {
				t.Fatalf("the fake's prompt took %q, want the person's approval only", got)
			}
			if n := len(answerEvents(events(), h)); n != 0 {
				t.Fatalf("%d prompt.answered events for a refused answer", n)
			}
		})
	}
}

// The refusals that press nothing: a bad answer, text with a control
// character, an answer the prompt does not offer, none shown.
func TestAnswerRefusals(t *testing.T) {
	e, m, _ := answerEnv(t, "claude")
	ctx := context.Background()
	if _, err := m.Answer(ctx, "claude", api.AnswerRequest{Answer: api.AnswerApprove}); !api.HasCode(err, api.CodeNoPrompt) {
		t.Fatalf("with no prompt: %v, want no_prompt", err)
	}
	p := e.ask(t, m, "claude", "touch z")
	for _, c := range []struct {
		req  api.AnswerRequest
		code api.Code
	}{
		{api.AnswerRequest{Answer: "maybe"}, api.CodeInvalidArgs},
		{api.AnswerRequest{Answer: api.AnswerApprove, Text: "x"}, api.CodeInvalidArgs},
		{api.AnswerRequest{Answer: api.AnswerText, Text: "yes\x1b[201~\r"}, api.CodeInvalidArgs},
		{api.AnswerRequest{Answer: api.AnswerText, Text: "yes"}, api.CodeNotOffered},
	} {
		c.req.Prompt = p.ID
		if _, err := m.Answer(ctx, "claude", c.req); !api.HasCode(err, c.code) {
			t.Errorf("%+v: %v, want %s", c.req, err, c.code)
		}
	}
	if got := e.answered(); len(got) != 0 {
		t.Fatalf("a refused answer pressed keys: %q", got)
	}
	if at := attentionOf(t, m, "claude"); at.State != api.AttentionNeedsInput || at.Prompt.ID != p.ID {
		t.Fatalf("the prompt does not wait any more: %+v", at)
	}
}

// pi asks nothing (its tools run without a prompt, and its adapter is no
// harness.PromptAnswerer): an answer to a pi agent finds no prompt on its
// screen and presses nothing.
func TestAnswerOnPiIsNoPrompt(t *testing.T) {
	_, m, _ := answerEnv(t, "pi")
	for _, a := range []string{api.AnswerApprove, api.AnswerDeny} {
		if _, err := m.Answer(context.Background(), "pi", api.AnswerRequest{Answer: a}); !api.HasCode(err, api.CodeNoPrompt) {
			t.Fatalf("%s to pi: %v, want no_prompt", a, err)
		}
	}
}
