package agent

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Interrupt presses the harness's interrupt key(s) in the agent's pane
// (harness.Interrupter): the turn in flight ends and the TUI stays, ready
// for the next message. Nothing is queued or waited for: on an idle TUI
// the key does nothing. A stopped agent is agent_stopped.
func (m *Manager) Interrupt(ctx context.Context, name string) (api.Agent, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Agent{}, err
	}
	if err := a.interrupt(ctx); err != nil {
		return api.Agent{}, err
	}
	return m.Get(name)
}

func (a *agent) interrupt(ctx context.Context) error {
	m := a.m
	a.mu.Lock()
	name, state := a.rec.Name, a.rec.State
	a.mu.Unlock()
	if state == api.StateStopped {
		return api.Errorf(api.CodeAgentStopped, "agent %s is stopped; there is no turn to interrupt", name)
	}
	h, harnessName := a.harness()
	in, ok := h.(harness.Interrupter)
	if !ok {
		return api.Errorf(api.CodeInvalidArgs, "agent %s: the %s harness names no interrupt key", name, harnessName)
	}
	pane := agentPane{a}
	// One key per send, apart: two Escapes in one write reach the TUI as
	// one Alt+Escape, which opencode does not take as its second press.
	for i, k := range in.InterruptKeys() {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-m.clk.After(interruptKeyGap):
			}
		}
		if err := pane.SendKeys(ctx, k); err != nil {
			if errors.Is(err, delivery.ErrPaneDead) {
				return api.Errorf(api.CodeAgentStopped, "agent %s has no live pane (it is starting or restarting); nothing to interrupt", name)
			}
			return api.Errorf(api.CodeTmux, "agent %s: interrupt: %w", name, err)
		}
	}
	m.log.Info("interrupt sent", "agent", name, "harness", harnessName)
	if c, ok := h.(harness.InputClearer); ok {
		a.clearRestored(ctx, h.Screen(), c.ClearInputKeys())
	}
	return nil
}

// interruptKeyGap separates the presses of a multi-key interrupt.
const interruptKeyGap = 200 * time.Millisecond

// clearRestored waits (a few seconds at most) for an interrupted TUI to
// settle and, if it put leo's last message back into its input line
// (claude does when the model had not answered yet), clears that line with
// the adapter's keys: no later message could be pasted over it, and it is
// leo's own text, never a person's. Anything else in the line is left.
func (a *agent) clearRestored(ctx context.Context, r harness.ScreenReader, keys []string) {
	m := a.m
	a.mu.Lock()
	last, name := a.lastSent, a.rec.Name
	a.mu.Unlock()
	if last == "" || len(keys) == 0 {
		return
	}
	pane := agentPane{a}
	lines := strings.Count(last, "\n") + 1
	presses := lines // a clear may take one line at a time
	deadline := m.clk.Now().Add(restoreWait)
	for m.clk.Now().Before(deadline) {
		text, err := pane.Capture(ctx)
		if err != nil {
			return
		}
		s := r.Classify(text)
		switch {
		case s.State == harness.ScreenReady && s.Input == "":
			if presses < lines {
				return // cleared
			}
		case s.State == harness.ScreenReady && presses > 0 && (r.Landed(s, last) || strings.Contains(last, s.Input)):
			if err := pane.SendKeys(ctx, keys...); err != nil {
				return
			}
			presses--
			m.log.Info("cleared the interrupted message the TUI put back in its input line", "agent", name)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.clk.After(100 * time.Millisecond):
		}
	}
}

// restoreWait bounds how long an interrupt waits to see whether the TUI
// put the interrupted message back into its input line.
const restoreWait = 3 * time.Second
