package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Answer gives a person's answer to the prompt the agent's screen shows
// (leo agent approve, deny, answer; docs/agents.md, "Answering prompts").
// It reads the screen now and presses the adapter's keys only while that
// screen shows a prompt leo can read — req.Prompt's, when named — with no
// paste in between (a.keys): no_prompt when none shows, prompt_changed
// when another does, prompt_unanswerable for one leo cannot read (kind
// dialog), not_offered for an answer the prompt does not offer; nothing
// is pressed then. After the keys it waits (answerWait at most) for the
// prompt to go away, and says whether it did.
func (m *Manager) Answer(ctx context.Context, name string, req api.AnswerRequest) (api.AnswerResult, error) {
	if !slices.Contains(api.Answers, req.Answer) {
		return api.AnswerResult{}, api.Errorf(api.CodeInvalidArgs, "answer %s: %q is not one of %s", name, req.Answer, strings.Join(api.Answers, ", "))
	}
	if req.Answer == api.AnswerText {
		// The same edge as every message: text only.
		text, err := delivery.PasteText(req.Text)
		if err != nil {
			return api.AnswerResult{}, api.Errorf(api.CodeInvalidArgs, "answer %s: %w", name, err)
		}
		if strings.TrimSpace(text) == "" {
			return api.AnswerResult{}, api.Errorf(api.CodeInvalidArgs, "answer %s: the answer's text is empty", name)
		}
		req.Text = text
	} else if req.Text != "" {
		return api.AnswerResult{}, api.Errorf(api.CodeInvalidArgs, "answer %s: text goes only with the answer %q", name, api.AnswerText)
	}
	if req.Sender == "" {
		req.Sender = api.SenderCLI
	}
	a, err := m.lookup(name)
	if err != nil {
		return api.AnswerResult{}, err
	}
	return a.answer(ctx, req)
}

// answerWait bounds the wait for an answered prompt to go away; pressGap
// separates the presses of a multi-press answer (a TUI redraws between
// them: opencode's second stage of "Allow always").
const (
	answerWait     = 10 * time.Second
	promptDrawWait = 3 * time.Second
	promptSettle   = time.Second
	confirmGap     = 200 * time.Millisecond
	pressGap       = 300 * time.Millisecond
)

func (a *agent) answer(ctx context.Context, req api.AnswerRequest) (api.AnswerResult, error) {
	m := a.m
	a.mu.Lock()
	name, state := a.rec.Name, a.rec.State
	var shown *api.Prompt // what attention says is asked (a hook's prompt too)
	if x := a.attentionLocked(); x != nil && x.State == api.AttentionNeedsInput {
		shown = x.Prompt
	}
	a.mu.Unlock()
	if state == api.StateStopped {
		return api.AnswerResult{}, api.Errorf(api.CodeAgentStopped, "agent %s is stopped; there is no prompt to answer", name)
	}
	t, ok := a.livePane()
	if !ok {
		return api.AnswerResult{}, api.Errorf(api.CodeNoPrompt, "agent %s has no live pane (it is starting or restarting); nothing was pressed", name)
	}
	h, harnessName := a.harness()

	// A harness's hook may say it asks before its screen draws the prompt
	// (opencode's permission.asked): while attention says a prompt waits,
	// the screen is given promptDrawWait to show it. A prompt other than
	// the one named may be one still being drawn (its title before its
	// body): it is prompt_changed only once it has stayed so promptSettle.
	drawBy := m.clk.Now().Add(promptDrawWait)
	var settleBy time.Time
	var s harness.Screen
	for {
		a.keys.Lock()
		capture, err := t.Pane.Capture(ctx)
		if err != nil {
			a.keys.Unlock()
			if errors.Is(err, delivery.ErrPaneDead) {
				return api.AnswerResult{}, api.Errorf(api.CodeNoPrompt, "agent %s has no live pane; nothing was pressed", name)
			}
			return api.AnswerResult{}, api.Errorf(api.CodeTmux, "agent %s: read the screen: %w", name, err)
		}
		s = t.Screen.Classify(capture)
		now := m.clk.Now()
		if s.Prompt == nil {
			if shown == nil || shown.Kind == api.PromptDialog || !now.Before(drawBy) {
				break // a.keys held
			}
		} else {
			named := req.Prompt == "" || api.PromptID(s.Prompt.Kind, s.Prompt.Text, s.Prompt.Choices) == req.Prompt
			if !named && settleBy.IsZero() {
				settleBy = now.Add(promptSettle)
			}
			if named || !now.Before(settleBy) {
				// The keys go only to a prompt two looks apart agree on: a
				// person's key the TUI took but has not drawn yet leaves
				// the old prompt on one look.
				again, err := a.lookAgain(ctx, t)
				if err != nil {
					a.keys.Unlock()
					return api.AnswerResult{}, err
				}
				if again.Prompt != nil && samePrompt(*again.Prompt, *s.Prompt) {
					break // a.keys held
				}
			}
		}
		a.keys.Unlock()
		select {
		case <-ctx.Done():
			return api.AnswerResult{}, ctx.Err()
		case <-m.clk.After(100 * time.Millisecond):
		}
	}
	if s.Prompt == nil {
		a.keys.Unlock()
		if shown != nil && shown.Kind == api.PromptDialog {
			return api.AnswerResult{}, api.Errorf(api.CodePromptUnanswerable, "agent %s asks something leo cannot read off its screen (%s); answer it in the TUI (leo attach %s); nothing was pressed", name, api.FirstLine(shown.Text), name)
		}
		return api.AnswerResult{}, api.Errorf(api.CodeNoPrompt, "agent %s: its screen shows no prompt; nothing was pressed", name)
	}
	p := api.Prompt{Kind: s.Prompt.Kind, Text: s.Prompt.Text, Choices: slices.Clone(s.Prompt.Choices)}
	p.ID = api.PromptID(p.Kind, p.Text, p.Choices)
	p.Answers = answersOf(h, p)
	res := api.AnswerResult{Agent: name, Prompt: p, Answer: req.Answer}
	if req.Prompt != "" && req.Prompt != p.ID {
		a.keys.Unlock()
		a.asked(*s.Prompt) // attention shows the prompt that is there
		return res, api.Errorf(api.CodePromptChanged, "agent %s: prompt %s is no longer shown; the screen shows %s (%s); nothing was pressed", name, req.Prompt, p.ID, api.FirstLine(strings.Join(strings.Fields(p.Text), " ")))
	}
	pa, ok := h.(harness.PromptAnswerer)
	if p.Kind == api.PromptDialog || !ok {
		a.keys.Unlock()
		return res, api.Errorf(api.CodePromptUnanswerable, "agent %s: leo does not answer %s's %s prompts; answer it in the TUI (leo attach %s); nothing was pressed", name, harnessName, p.Kind, name)
	}
	presses, choice, err := pa.AnswerKeys(*s.Prompt, req.Answer, req.Text)
	if err != nil {
		a.keys.Unlock()
		if errors.Is(err, harness.ErrNotOffered) {
			return res, api.Errorf(api.CodeNotOffered, "agent %s: %s; nothing was pressed", name, err.Error())
		}
		return res, api.Errorf(api.CodeInternal, "agent %s: %w", name, err)
	}
	res.Choice = choice
	err = a.press(ctx, presses)
	a.keys.Unlock()
	if err != nil {
		if errors.Is(err, delivery.ErrPaneDead) {
			return res, api.Errorf(api.CodeAgentStopped, "agent %s: its pane went away while the answer was pressed", name)
		}
		return res, api.Errorf(api.CodeTmux, "agent %s: answer %s: %w", name, req.Answer, err)
	}
	m.log.Info("prompt answered", "agent", name, "harness", harnessName, "prompt", p.ID, "answer", req.Answer, "choice", choice, "by", req.Sender)
	m.publish(api.Event{Type: api.EventPromptAnswered, Agent: name, PromptID: p.ID, Answer: req.Answer, By: req.Sender, FirstLine: choice})
	res.Cleared, res.NextPrompt = a.awaitAnswered(ctx, t, p.ID)
	return res, nil
}

// press sends presses to a's pane, pressGap apart; a.keys must be held.
func (a *agent) press(ctx context.Context, presses []harness.Press) error {
	pane := agentPane{a}
	for i, p := range presses {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-a.m.clk.After(pressGap):
			}
		}
		var err error
		if p.Literal != "" {
			err = pane.sendLiteral(ctx, p.Literal)
		} else {
			err = pane.SendKeys(ctx, p.Keys...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// awaitAnswered waits until a's screen no longer shows prompt id: cleared,
// with the prompt it shows instead when another came. False when id still
// shows at answerWait (or the screen cannot be read).
func (a *agent) awaitAnswered(ctx context.Context, t delivery.Target, id string) (bool, *api.Prompt) {
	deadline := a.m.clk.Now().Add(answerWait)
	h, _ := a.harness()
	for {
		if capture, err := t.Pane.Capture(ctx); err == nil {
			s := t.Screen.Classify(capture)
			if s.Prompt == nil {
				return true, nil
			}
			next := api.Prompt{Kind: s.Prompt.Kind, Text: s.Prompt.Text, Choices: slices.Clone(s.Prompt.Choices)}
			if next.ID = api.PromptID(next.Kind, next.Text, next.Choices); next.ID != id {
				next.Answers = answersOf(h, next)
				a.asked(*s.Prompt)
				return true, &next
			}
		}
		if !a.m.clk.Now().Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-a.m.clk.After(100 * time.Millisecond):
		}
	}
}

func (p agentPane) sendLiteral(ctx context.Context, text string) error {
	id, err := p.pane()
	if err != nil {
		return err
	}
	return p.tmux().SendLiteral(ctx, id, text)
}

// answersOf are the answers leo can give p through h (api.Prompt.Answers).
func answersOf(h harness.Harness, p api.Prompt) []string {
	pa, ok := h.(harness.PromptAnswerer)
	if !ok || p.Kind == api.PromptDialog {
		return nil
	}
	hp := harness.Prompt{Kind: p.Kind, Text: p.Text, Choices: p.Choices}
	var out []string
	for _, answer := range api.Answers {
		if _, _, err := pa.AnswerKeys(hp, answer, "text"); err == nil {
			out = append(out, answer)
		}
	}
	return out
}

// lookAgain classifies a's screen after confirmGap; a.keys must be held
// (no paste comes between the looks).
func (a *agent) lookAgain(ctx context.Context, t delivery.Target) (harness.Screen, error) {
	select {
	case <-ctx.Done():
		return harness.Screen{}, ctx.Err()
	case <-a.m.clk.After(confirmGap):
	}
	capture, err := t.Pane.Capture(ctx)
	if err != nil {
		return harness.Screen{}, nil // the next look says what is there
	}
	return t.Screen.Classify(capture), nil
}

func samePrompt(x, y harness.Prompt) bool {
	return api.PromptID(x.Kind, x.Text, x.Choices) == api.PromptID(y.Kind, y.Text, y.Choices)
}
