// Package delivery puts messages into an agent's TUI: one FIFO queue per
// agent, and the paste protocol of reference/tmux-driving.md — paste only
// into an idle input line, confirm the text landed, then Enter, then confirm
// the TUI took it. A message that did not land is a failure, never "sent".
package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Gates are the pane flags checked before anything is typed.
type Gates struct {
	Dead     bool
	InMode   bool // copy mode or similar: keys would go to tmux, not the TUI
	InputOff bool
	// PID is the pane's process (0 when unknown): a new one means the TUI
	// was relaunched.
	PID int
}

// Pane is what delivery needs from tmux for one pane. The agent package
// adapts the tmux server to it; tests script it.
type Pane interface {
	Gates(ctx context.Context) (Gates, error)
	CancelMode(ctx context.Context) error
	// Capture is the visible screen as plain text (no SGR, joined lines).
	Capture(ctx context.Context) (string, error)
	// Paste sends text as one bracketed paste (load-buffer + paste-buffer -p).
	Paste(ctx context.Context, text string) error
	// SendKeys sends tmux key names (e.g. "Enter").
	SendKeys(ctx context.Context, keys ...string) error
}

// Target is one agent's pane and how to read its screen.
type Target struct {
	Pane   Pane
	Screen harness.ScreenReader
	// EnterDelay is the pause between the paste showing in the input and
	// Enter; zero sends Enter as soon as the landing is confirmed.
	EnterDelay time.Duration
	// BeforePaste, when set, runs once the input line is ready, right
	// before the paste, with the text about to be pasted. An error stops
	// the delivery with nothing typed. The agent package records the
	// message as in flight there, so that a daemon killed between paste
	// and Enter leaves the next one what it needs to finish it (Finish).
	BeforePaste func(text string) error
}

// DefaultEnterDelay is what callers use for adapters without
// harness.PasteTiming. The landing confirmation already proves the paste was
// read; this only keeps Enter out of the same input burst.
const DefaultEnterDelay = 20 * time.Millisecond

// Driver runs the paste protocol. The zero durations get defaults.
type Driver struct {
	Clock clock.Clock
	// Poll is the interval between screen captures while waiting.
	Poll time.Duration
	// ReadyTimeout bounds the wait for an idle, empty input line (a slow
	// starting TUI, a turn in flight, a dialog being answered).
	ReadyTimeout time.Duration
	// LandTimeout bounds the wait for the pasted text to show in the input.
	LandTimeout time.Duration
	// SubmitTimeout bounds the wait for the input to clear after Enter.
	SubmitTimeout time.Duration
	// Observe, when set, is told about dialogs answered (for logs).
	Observe func(event string)
}

func (d *Driver) clock() clock.Clock {
	if d.Clock == nil {
		return clock.New()
	}
	return d.Clock
}

func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

func (d *Driver) poll() time.Duration         { return orDefault(d.Poll, 10*time.Millisecond) }
func (d *Driver) readyTimeout() time.Duration { return orDefault(d.ReadyTimeout, 60*time.Second) }
func (d *Driver) landTimeout() time.Duration  { return orDefault(d.LandTimeout, 5*time.Second) }
func (d *Driver) submitTimeout() time.Duration {
	return orDefault(d.SubmitTimeout, 5*time.Second)
}

// Failure is a delivery that did not happen, with the stage it stopped at.
type Failure struct {
	Stage  string // "ready", "paste", "landed", "submit"
	Reason string
	Err    error
}

func (f *Failure) Error() string {
	if f.Err != nil {
		return fmt.Sprintf("%s: %s: %v", f.Stage, f.Reason, f.Err)
	}
	return f.Stage + ": " + f.Reason
}

func (f *Failure) Unwrap() error { return f.Err }

// ErrPaneDead is reported while the pane's process has exited.
var ErrPaneDead = errors.New("pane is dead")

// ErrNotLanded is Finish's outcome when the text of a delivery a daemon
// restart cut short is not in the input line: it may have been submitted
// before the restart or never have arrived, and it is not pasted again
// (at most once).
var ErrNotLanded = errors.New("daemon restarted during delivery; not known to have landed")

// AwaitReady waits until the TUI shows an idle, empty input line, answering
// any startup dialog from what the screen shows. It returns the ready screen.
func (d *Driver) AwaitReady(ctx context.Context, t Target) (harness.Screen, error) {
	return d.await(ctx, t, func(s harness.Screen) bool {
		return s.State == harness.ScreenReady && s.Input == ""
	})
}

// AwaitStarted waits until the TUI is up (its input line shows, idle or in a
// turn), answering startup dialogs on the way.
func (d *Driver) AwaitStarted(ctx context.Context, t Target) (harness.Screen, error) {
	return d.await(ctx, t, func(s harness.Screen) bool {
		return s.State == harness.ScreenReady || s.State == harness.ScreenBusy
	})
}

func (d *Driver) await(ctx context.Context, t Target, accept func(harness.Screen) bool) (harness.Screen, error) {
	c := d.clock()
	deadline := c.Now().Add(d.readyTimeout())
	var last harness.Screen
	var lastErr error
	lastDialog := ""
	for {
		s, err := d.look(ctx, t)
		switch {
		case err != nil:
			lastErr = err
		case s.State == harness.ScreenDialog:
			lastErr = nil
			// Answer once per appearance; a dialog that stays up after its
			// keys gets them again only after a fresh capture shows it.
			if len(s.DialogKeys) > 0 {
				if d.Observe != nil && s.Dialog != lastDialog {
					d.Observe("answering " + nameOr(s.Dialog, "dialog"))
				}
				lastDialog = s.Dialog
				if err := t.Pane.SendKeys(ctx, s.DialogKeys...); err != nil {
					lastErr = err
				}
				last = s
				if !c.Now().Before(deadline) {
					return last, &Failure{Stage: "ready", Reason: notReadyReason(last, lastErr, d.readyTimeout()), Err: lastErr}
				}
				// Give the TUI a moment to take the dialog down before the
				// next look, so the same keys are not sent twice to it.
				if err := d.sleep(ctx, 10*d.poll()); err != nil {
					return s, err
				}
				continue
			}
		case accept(s):
			return s, nil
		default:
			lastErr = nil
		}
		last = s
		if !c.Now().Before(deadline) {
			return last, &Failure{Stage: "ready", Reason: notReadyReason(last, lastErr, d.readyTimeout()), Err: lastErr}
		}
		if err := d.sleep(ctx, d.poll()); err != nil {
			return last, err
		}
	}
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func notReadyReason(s harness.Screen, err error, after time.Duration) string {
	switch {
	case errors.Is(err, ErrPaneDead):
		return fmt.Sprintf("the agent's TUI exited (not back after %s)", after)
	case err != nil:
		return fmt.Sprintf("pane not usable after %s", after)
	case s.State == harness.ScreenReady:
		// Never cleared by leo: it may be a person's typing.
		return fmt.Sprintf("the input line holds text that is not this message (%d characters; someone typing in an attached client?); still there after %s, and leo never clears it", len([]rune(s.Input)), after)
	case s.State == harness.ScreenDialog:
		return fmt.Sprintf("dialog %q still open after %s", nameOr(s.Dialog, "unknown"), after)
	default:
		return fmt.Sprintf("TUI not ready after %s (screen %s)", after, s.State)
	}
}

// look checks the gates (leaving copy mode if needed) and classifies a capture.
func (d *Driver) look(ctx context.Context, t Target) (harness.Screen, error) {
	s, _, err := d.observe(ctx, t)
	return s, err
}

// observe is look that also returns the gates it read.
func (d *Driver) observe(ctx context.Context, t Target) (harness.Screen, Gates, error) {
	g, err := t.Pane.Gates(ctx)
	if err != nil {
		return harness.Screen{}, g, err
	}
	if g.Dead {
		return harness.Screen{}, g, ErrPaneDead
	}
	if g.InMode {
		if err := t.Pane.CancelMode(ctx); err != nil {
			return harness.Screen{}, g, err
		}
	}
	if g.InputOff {
		return harness.Screen{}, g, errors.New("pane input is off")
	}
	capture, err := t.Pane.Capture(ctx)
	if err != nil {
		return harness.Screen{}, g, err
	}
	return t.Screen.Classify(capture), g, nil
}

func (d *Driver) sleep(ctx context.Context, dur time.Duration) error {
	tm := d.clock().NewTimer(dur)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C():
		return nil
	}
}

// Deliver puts message into the TUI and submits it:
//  1. wait for an idle, empty input line (answering dialogs);
//  2. paste it as one bracketed paste;
//  3. poll until the screen shows it in the input (bounded; never re-paste);
//  4. wait the adapter's enter delay, counted from the landing;
//  5. Enter, then confirm the input cleared or a turn started — resending
//     Enter once if the text still sits in the input.
func (d *Driver) Deliver(ctx context.Context, t Target, message string) error {
	// Every sender passed PasteText already (agent.Manager.Enqueue); it is
	// checked again here so that nothing reaches a paste without it.
	text, err := PasteText(message)
	if err != nil {
		return &Failure{Stage: "paste", Reason: "refused; nothing was pasted", Err: err}
	}
	if _, err := d.AwaitReady(ctx, t); err != nil {
		return err
	}
	if t.BeforePaste != nil {
		if err := t.BeforePaste(text); err != nil {
			return &Failure{Stage: "paste", Reason: "recording the message as in flight failed; nothing was pasted", Err: err}
		}
	}
	if err := t.Pane.Paste(ctx, text); err != nil {
		return &Failure{Stage: "paste", Reason: "paste failed", Err: err}
	}
	if err := d.awaitLanded(ctx, t, text); err != nil {
		return err
	}
	// The enter delay counts from when the screen showed the paste, not
	// from when tmux was asked to paste: a loaded TUI may read the paste
	// late, and codex's burst window starts when it reads it.
	if t.EnterDelay > 0 {
		if err := d.sleep(ctx, t.EnterDelay); err != nil {
			return err
		}
	}
	return d.submit(ctx, t, text)
}

// Finish completes a delivery that a daemon restart cut short after its
// BeforePaste: pasted is the text as it was pasted. It is never pasted
// again. When the input line shows it, it is submitted like any delivery
// (Enter after the adapter's delay, confirmed, Enter resent once). When the
// input stays empty — it was submitted before the restart, or never
// arrived — or holds something else, the outcome is ErrNotLanded (wrapped,
// with what the screen showed).
//
// An empty input is judged after the land timeout (a paste sent just
// before the restart may still be on its way); a busy TUI, or an input
// holding other text, is waited for up to the ready timeout.
func (d *Driver) Finish(ctx context.Context, t Target, pasted string) error {
	c := d.clock()
	start := c.Now()
	deadline := start.Add(max(d.readyTimeout(), d.landTimeout()))
	tries := 0
	for {
		s, err := d.look(ctx, t)
		switch {
		case errors.Is(err, ErrPaneDead):
			return fmt.Errorf("%w (the agent's TUI exited)", ErrNotLanded)
		case err != nil:
		case s.State == harness.ScreenReady && t.Screen.Landed(s, pasted):
			if t.EnterDelay > 0 {
				if err := d.sleep(ctx, t.EnterDelay); err != nil {
					return err
				}
			}
			return d.submit(ctx, t, pasted)
		case s.State == harness.ScreenReady && s.Input == "" && c.Since(start) >= d.landTimeout():
			return fmt.Errorf("%w (the input line was empty)", ErrNotLanded)
		}
		if !c.Now().Before(deadline) {
			what := "the pane could not be read"
			switch {
			case err != nil:
			case s.State == harness.ScreenReady:
				what = "the input line holds other text"
			default:
				what = "screen " + s.State.String()
			}
			return fmt.Errorf("%w (%s after %s)", ErrNotLanded, what, c.Since(start).Round(time.Second))
		}
		if err := d.sleep(ctx, d.backoff(&tries)); err != nil {
			return err
		}
	}
}

func (d *Driver) awaitLanded(ctx context.Context, t Target, text string) error {
	c := d.clock()
	deadline := c.Now().Add(d.landTimeout())
	tries := 0
	for {
		s, err := d.look(ctx, t)
		if err == nil && t.Screen.Landed(s, text) {
			return nil
		}
		if errors.Is(err, ErrPaneDead) {
			return &Failure{Stage: "landed", Reason: "the TUI exited before the pasted text showed", Err: err}
		}
		if !c.Now().Before(deadline) {
			// Re-check what the screen shows to say why; the text may still
			// be partly there, so it is never pasted again.
			reason := fmt.Sprintf("pasted text did not show in the input within %s", d.landTimeout())
			if err == nil {
				reason += fmt.Sprintf(" (screen %s, input %q)", s.State, clip(s.Input, 60))
			}
			return &Failure{Stage: "landed", Reason: reason, Err: err}
		}
		if err := d.sleep(ctx, d.backoff(&tries)); err != nil {
			return err
		}
	}
}

// backoff is the wait before the next look while a change is expected any
// moment: a capture costs well under a millisecond over control mode, so
// the first looks come fast, then settle at the poll interval.
func (d *Driver) backoff(tries *int) time.Duration {
	wait := time.Millisecond << min(*tries, 8)
	*tries++
	return min(wait, d.poll())
}

func (d *Driver) submit(ctx context.Context, t Target, text string) error {
	c := d.clock()
	// The TUI the text was pasted into: if another one shows an empty input
	// later (a restart raced this delivery), that is no proof of a submit.
	before, err := t.Pane.Gates(ctx)
	if err != nil {
		return &Failure{Stage: "submit", Reason: "reading the pane failed", Err: err}
	}
	if err := t.Pane.SendKeys(ctx, "Enter"); err != nil {
		return &Failure{Stage: "submit", Reason: "send Enter failed", Err: err}
	}
	start := c.Now()
	deadline := start.Add(d.submitTimeout())
	// If the text still sits in the input after this long, Enter was lost
	// (swallowed by a paste burst window): send it once more.
	resendAfter := d.submitTimeout() / 5
	resent := false
	tries := 0
	for {
		s, g, err := d.observe(ctx, t)
		if errors.Is(err, ErrPaneDead) {
			// The message was submitted and the TUI exited on it (e.g. a
			// command that quits): the text left the input.
			return nil
		}
		if err == nil && before.PID != 0 && g.PID != 0 && g.PID != before.PID {
			return &Failure{Stage: "submit", Reason: "the TUI was relaunched before the submit was confirmed; not known to have landed"}
		}
		if err == nil {
			if s.State == harness.ScreenBusy {
				return nil
			}
			if s.State == harness.ScreenReady && !t.Screen.Landed(s, text) {
				return nil
			}
			if !resent && s.State == harness.ScreenReady && c.Since(start) >= resendAfter {
				resent = true
				if err := t.Pane.SendKeys(ctx, "Enter"); err != nil {
					return &Failure{Stage: "submit", Reason: "resend Enter failed", Err: err}
				}
			}
		}
		if !c.Now().Before(deadline) {
			reason := fmt.Sprintf("the input did not clear within %s of Enter", d.submitTimeout())
			if err == nil {
				reason += fmt.Sprintf(" (screen %s)", s.State)
			}
			return &Failure{Stage: "submit", Reason: reason, Err: err}
		}
		if err := d.sleep(ctx, d.backoff(&tries)); err != nil {
			return err
		}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
