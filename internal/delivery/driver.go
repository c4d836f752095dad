// Package delivery puts messages into an agent's TUI: one FIFO queue per
// agent, and the paste protocol (docs/agents.md, "Each delivery") — paste only
// into an idle input line, confirm the text landed, then Enter, then confirm
// the TUI took it. A message that did not land is a failure, never "sent".
package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/api"
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
	// TurnsRecorded, when set, counts the user turns the harness's own
	// record (transcript, rollout, session store) holds whose text is text,
	// recorded at or after since. A count that grew after Enter is the
	// proof of a submit (an earlier, identical message does not count);
	// without it (an adapter with no record to read) an input line that
	// cleared after Enter is taken as the submit, as the best leo can know.
	TurnsRecorded func(ctx context.Context, text string, since time.Time) (int, error)
	// PastedAt is when the text Finish completes was pasted (its in-flight
	// record): a turn recorded since then means it was already taken.
	PastedAt time.Time
	// Turn is the agent's last submitted turn, kept across deliveries so
	// that the next message waits until that turn is over (nil: no memory,
	// an idle empty input line is enough).
	Turn *Turn
	// Activity, when set, reads the harness's own record of turn starts
	// and ends for the TUI's current launch (harness.TurnRecorder). While
	// it says a turn runs, nothing is pasted, whatever the screen shows
	// (codex hides its busy line while it streams a reply); a submitted
	// turn is over when the record counts one more end than before its
	// Enter. Without it the screen is the only witness.
	Activity func(ctx context.Context) (harness.TurnActivity, error)
	// Leftover is leo's own earlier paste that failed and may still sit in
	// the input line: seen there, it is leo's (never a person's typing), so
	// leo clears it with ClearKeys and goes on; without ClearKeys, or when
	// the keys do not clear it, the delivery fails at once saying so.
	Leftover *Leftover
	// ClearKeys are the tmux keys that clear the TUI's input line
	// (harness.InputClearer), pressed only on leo's own leftover paste.
	ClearKeys []string
	// AwaitsPerson, when set, says whether the agent waits for a person
	// (its attention is needs_input or limited, from the harness's own
	// signals). While it does, and while the screen shows the harness
	// asking (Screen.Prompt), the wait for an idle input line has no
	// deadline: a person's pace is not a fault. The screen still decides
	// when to paste.
	AwaitsPerson func() bool
	// Asked, when set, is told of each look whose screen shows the harness
	// asking a person (Screen.Prompt).
	Asked func(p harness.Prompt)
}

// Turn is what delivery remembers of the last message it submitted to a
// TUI. Right after Enter some TUIs show an empty, idle input line before
// their busy line (codex, for ~175 ms), and codex hides its busy line while
// it streams the reply: pasting then folds the next message into the
// running turn. So the next message waits until the turn is over. Where
// the harness records turn ends (Target.Activity: claude, codex,
// opencode), the turn is over when its end is recorded — at once, however
// short the turn was. Where the screen is the only witness: a busy screen
// seen and gone, or, when no busy screen was ever seen (a turn shorter
// than a look), an idle screen that stays idle for Settle.
type Turn struct {
	SubmittedAt time.Time
	PID         int
	SawBusy     bool
	// Recorded: the harness's record was read right before Enter, and
	// EndedBefore is the number of turn ends it held then.
	Recorded    bool
	EndedBefore int
	over        bool
	idleSince   time.Time
}

// recordGrace is how long after its submit a turn the harness's record
// knows neither running nor ended is waited for before the screen decides
// alone (a record that lags, or a submit the harness took as no turn).
const recordGrace = 15 * time.Second

// Over reports whether the remembered turn is finished.
func (t *Turn) Over() bool { return t == nil || t.SubmittedAt.IsZero() || t.over }

// observe updates the turn from one look at the TUI and, when rec is not
// nil, at the harness's record of turns.
func (t *Turn) observe(now time.Time, s harness.Screen, g Gates, settle time.Duration, rec *harness.TurnActivity) {
	if t.Over() {
		return
	}
	if g.PID != 0 && t.PID != 0 && g.PID != t.PID {
		t.over = true // a relaunched TUI has no turn in flight
		return
	}
	if rec != nil && rec.Found && t.Recorded {
		switch {
		case rec.Running:
			t.SawBusy, t.idleSince = true, time.Time{}
			return
		case rec.Ended > t.EndedBefore:
			t.over = true
			return
		case now.Sub(t.SubmittedAt) < recordGrace:
			return // the record has not caught up with the submit yet
		}
	}
	switch {
	case s.State == harness.ScreenBusy || s.Held:
		t.SawBusy = true
		t.idleSince = time.Time{}
	case s.State == harness.ScreenReady && s.Input == "":
		if t.SawBusy {
			t.over = true
			return
		}
		if t.idleSince.IsZero() {
			t.idleSince = now
		}
		if now.Sub(t.idleSince) >= settle {
			t.over = true
		}
	default:
		t.idleSince = time.Time{}
	}
}

// Leftover is the text of a delivery that failed after its paste, and what
// the input line showed when it failed.
type Leftover struct {
	ID    string
	Text  string
	Input string
}

// in reports whether s shows the leftover in its input line. After leo
// pressed its clear keys (partly), a part of what it showed still counts:
// a clear may take one line of a multi-line paste at a time.
func (l *Leftover) in(r harness.ScreenReader, s harness.Screen, partly bool) bool {
	if l == nil || s.State != harness.ScreenReady || s.Input == "" {
		return false
	}
	return s.Input == l.Input || r.Landed(s, l.Text) || (partly && strings.Contains(l.Input, s.Input))
}

// clearPresses bounds the clear-key presses spent on a leftover: one per
// line it holds, and one more.
func (l *Leftover) clearPresses() int {
	return strings.Count(l.Input, "\n") + 2
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
	// PollMax is the longest wait between looks while waiting for a TUI
	// to become ready: the looks start at Poll and back off to it, so a
	// waiting agent costs a few captures a second, not a hundred.
	PollMax time.Duration
	// SubmitTimeout bounds the wait for proof of a turn after Enter.
	SubmitTimeout time.Duration
	// Settle is how long a TUI must stay idle after a submit in which no
	// busy screen was seen before the next message is pasted.
	// Only where the screen is the only witness: a turn the harness's
	// record says ended needs none.
	Settle time.Duration
	// CommandTimeout bounds the wait for the harness's record of a
	// command (Command): a compaction summarises the whole conversation,
	// which a real model may take minutes over.
	CommandTimeout time.Duration
	// CommandIdle is how long a TUI that took a command may sit idle
	// before the command is judged to have recorded nothing (see Command).
	CommandIdle time.Duration
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

func (d *Driver) poll() time.Duration { return orDefault(d.Poll, 10*time.Millisecond) }
func (d *Driver) pollMax() time.Duration {
	return max(orDefault(d.PollMax, 250*time.Millisecond), d.poll())
}
func (d *Driver) settle() time.Duration       { return orDefault(d.Settle, time.Second) }
func (d *Driver) readyTimeout() time.Duration { return orDefault(d.ReadyTimeout, DefaultReadyTimeout) }

// DefaultReadyTimeout is how long a TUI may take to show an idle input line.
const DefaultReadyTimeout = 60 * time.Second

func (d *Driver) commandTimeout() time.Duration {
	return orDefault(d.CommandTimeout, 10*time.Minute)
}
func (d *Driver) commandIdle() time.Duration { return orDefault(d.CommandIdle, 10*time.Second) }

func (d *Driver) landTimeout() time.Duration { return orDefault(d.LandTimeout, 5*time.Second) }
func (d *Driver) submitTimeout() time.Duration {
	return orDefault(d.SubmitTimeout, 15*time.Second)
}

// Failure is a delivery that did not happen, with the stage it stopped at.
type Failure struct {
	Stage  string // "ready", "paste", "landed", "submit"
	Reason string
	Err    error
	// Input is what the input line showed when a pasted message failed
	// (stages landed and submit): leo's own text, whatever it looks like.
	Input string
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
//
// When t.Turn remembers a submitted turn, it also waits until that turn is
// over, so each message gets its own turn. When the input line holds leo's
// own failed paste (t.Leftover), leo clears it with t.ClearKeys and goes
// on; with no keys, or keys that do not clear it, it fails at once saying
// so: no person is going to clear it. Text that is not leo's is never
// cleared: it may be a person's typing.
//
// When t.Activity reads the harness's record, a turn the record says runs
// is waited for whatever the screen shows: it may be a turn leo started
// (before a daemon restart, too), a person's, or a task's.
func (d *Driver) AwaitReady(ctx context.Context, t Target) (harness.Screen, error) {
	return d.await(ctx, t, func(s harness.Screen, rec *harness.TurnActivity) bool {
		return s.State == harness.ScreenReady && s.Input == "" && t.Turn.Over() && !recordRuns(rec)
	})
}

// activity reads t.Activity; nil when there is none or the read failed
// (the next look asks again).
func (t Target) activity(ctx context.Context) *harness.TurnActivity {
	if t.Activity == nil {
		return nil
	}
	a, err := t.Activity(ctx)
	if err != nil {
		return nil
	}
	return &a
}

// overrule returns rec, or, for a harness that writes no end for some
// turns (rec.EndsUnrecorded: claude's turn interrupted before the model
// answered), a copy that counts the running turn as ended once the screen
// has shown an idle, empty input line for settle: such a harness draws
// every running turn as busy. *since is when that screen was first seen
// (zero while the screen or the record says otherwise).
func overrule(rec *harness.TurnActivity, s harness.Screen, now time.Time, since *time.Time, settle time.Duration) *harness.TurnActivity {
	if !recordRuns(rec) || !rec.EndsUnrecorded || s.State != harness.ScreenReady || s.Input != "" || s.Held {
		*since = time.Time{}
		return rec
	}
	if since.IsZero() {
		*since = now
	}
	if now.Sub(*since) < settle {
		return rec
	}
	over := *rec
	over.Running = false
	over.Ended++ // the end the record lacks, witnessed by the screen
	return &over
}

// recordRuns reports whether rec says a turn is running.
func recordRuns(rec *harness.TurnActivity) bool { return rec != nil && rec.Found && rec.Running }

// AwaitStarted waits until the TUI is up (its input line shows, idle or in a
// turn), answering startup dialogs on the way.
func (d *Driver) AwaitStarted(ctx context.Context, t Target) (harness.Screen, error) {
	return d.await(ctx, t, func(s harness.Screen, _ *harness.TurnActivity) bool {
		return s.State == harness.ScreenReady || s.State == harness.ScreenBusy
	})
}

func (d *Driver) await(ctx context.Context, t Target, accept func(harness.Screen, *harness.TurnActivity) bool) (harness.Screen, error) {
	c := d.clock()
	deadline := c.Now().Add(d.readyTimeout())
	var last harness.Screen
	var lastErr error
	lastDialog := ""
	tries, cleared := 0, 0
	var doubted time.Time // since when an idle screen contradicts the record
	lastLine := ""        // the last line the screen showed, for a failure's reason
	for {
		lookStart := time.Now()
		s, g, capture, err := d.observeCapture(ctx, t)
		if took := time.Since(lookStart); took > suspendedLook {
			// A look of tmux calls (each bounded far below this) that took
			// so long means leo itself did not run meanwhile (SIGSTOP, a
			// stopped terminal): that time is not the TUI's, so it does
			// not count against the readiness timeout, and a look the
			// pause cut short is taken again. (Measured on the process's
			// own clock, not the injected one.)
			deadline = deadline.Add(took)
			if err != nil && ctx.Err() == nil {
				continue
			}
		}
		var rec *harness.TurnActivity
		if err == nil {
			rec = overrule(t.activity(ctx), s, c.Now(), &doubted, d.settle())
			t.Turn.observe(c.Now(), s, g, d.settle(), rec)
			lastLine = lastScreenLine(capture)
		}
		if err == nil && s.Prompt != nil && t.Asked != nil {
			t.Asked(*s.Prompt)
		}
		if (err == nil && s.Prompt != nil) || (t.AwaitsPerson != nil && t.AwaitsPerson()) {
			// A person is asked: the readiness timeout counts from when
			// they have answered, not from when the message came.
			deadline = c.Now().Add(d.readyTimeout())
		}
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
					return last, &Failure{Stage: "ready", Reason: notReadyReason(last, t.Turn, lastErr, d.readyTimeout()), Err: lastErr}
				}
				// Give the TUI a moment to take the dialog down before the
				// next look, so the same keys are not sent twice to it.
				if err := d.sleep(ctx, 10*d.poll()); err != nil {
					return s, err
				}
				continue
			}
		case accept(s, rec):
			return s, nil
		case t.Leftover.in(t.Screen, s, cleared > 0) && len(t.ClearKeys) > 0 && cleared < t.Leftover.clearPresses():
			// leo's own text, never a person's: clear it so the queue goes
			// on, then look again once the TUI has redrawn.
			lastErr = nil
			if cleared == 0 && d.Observe != nil {
				d.Observe("clearing leo's own failed paste of message " + t.Leftover.ID + " from the input line")
			}
			cleared++
			if err := t.Pane.SendKeys(ctx, t.ClearKeys...); err != nil {
				lastErr = err
			}
			if err := d.sleep(ctx, 10*d.poll()); err != nil {
				return s, err
			}
			continue
		case t.Leftover.in(t.Screen, s, cleared > 0):
			how := "leo has no key that clears this TUI's input line"
			if cleared > 0 {
				how = fmt.Sprintf("leo's clear keys (%s) did not clear it", strings.Join(t.ClearKeys, " "))
			}
			return s, &Failure{Stage: "ready", Reason: fmt.Sprintf(
				"the input line still holds leo's own paste of message %s, which failed (not a person's typing); %s: clear it in the TUI, or restart the agent", t.Leftover.ID, how)}
		default:
			lastErr = nil
		}
		last = s
		if !c.Now().Before(deadline) {
			reason := notReadyReason(last, t.Turn, lastErr, d.readyTimeout())
			if lastErr == nil && last.State == harness.ScreenStarting && lastLine != "" {
				reason += fmt.Sprintf("; the screen's last line: %q", lastLine)
			}
			if lastErr == nil && recordRuns(rec) && accept(s, nil) {
				reason = fmt.Sprintf("the harness's record shows a turn still running after %s", d.readyTimeout())
			}
			return last, &Failure{Stage: "ready", Reason: reason, Err: lastErr}
		}
		if err := d.sleep(ctx, d.awaitBackoff(&tries)); err != nil {
			return last, err
		}
	}
}

// awaitBackoff is the wait before the next look while waiting for a TUI
// that may take seconds (starting, in a turn): a first few looks within
// milliseconds (a turn shorter than a poll — a fast reply — is over by
// then, and the next message should not pay a whole poll for it), ten at
// the poll interval, then doubling up to PollMax.
func (d *Driver) awaitBackoff(tries *int) time.Duration {
	*tries++
	switch {
	case *tries <= quickLooks:
		return min(time.Millisecond<<(*tries-1), d.poll())
	case *tries <= quickLooks+10:
		return d.poll()
	}
	return min(d.poll()<<min(*tries-quickLooks-10, 16), d.pollMax())
}

// quickLooks are the looks of awaitBackoff at 1, 2, 4 and 8 ms.
const quickLooks = 4

// suspendedLook is how long one look (a few tmux calls, each bounded by the
// tmux timeout, 10 s) can take only if the daemon was not running.
const suspendedLook = 30 * time.Second

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func notReadyReason(s harness.Screen, turn *Turn, err error, after time.Duration) string {
	switch {
	case err == nil && s.State == harness.ScreenBusy:
		return fmt.Sprintf("the TUI is still in a turn after %s", after)
	case err == nil && s.Held:
		return fmt.Sprintf("the TUI is still starting, holding a submitted message, after %s", after)
	case err == nil && s.State == harness.ScreenReady && s.Input == "" && !turn.Over():
		return fmt.Sprintf("the previous message's turn did not end within %s", after)
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
	s, g, _, err := d.observeCapture(ctx, t)
	return s, g, err
}

// observeCapture is observe that also returns the capture it classified.
func (d *Driver) observeCapture(ctx context.Context, t Target) (harness.Screen, Gates, string, error) {
	g, err := t.Pane.Gates(ctx)
	if err != nil {
		return harness.Screen{}, g, "", err
	}
	if g.Dead {
		return harness.Screen{}, g, "", ErrPaneDead
	}
	if g.InMode {
		if err := t.Pane.CancelMode(ctx); err != nil {
			return harness.Screen{}, g, "", err
		}
	}
	if g.InputOff {
		return harness.Screen{}, g, "", errors.New("pane input is off")
	}
	capture, err := t.Pane.Capture(ctx)
	if err != nil {
		return harness.Screen{}, g, "", err
	}
	return t.Screen.Classify(capture), g, capture, nil
}

// lastScreenLine is a capture's last line that is not blank, trimmed and
// cut short: what a TUI that never became usable last said.
func lastScreenLine(capture string) string {
	lines := strings.Split(strings.TrimRight(capture, " \t\r\n"), "\n")
	return api.FirstLine(lines[len(lines)-1])
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
		case t.TurnsRecorded != nil && t.recordedSince(ctx, pasted, t.PastedAt.Add(-time.Second)) > 0:
			// Taken before the restart, maybe still drawn in the box: no
			// Enter may follow.
			return nil
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
			return &Failure{Stage: "landed", Reason: reason, Err: err, Input: s.Input}
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

// submit presses Enter and waits for proof that the TUI took the text as a
// turn: a busy screen, or the harness's own record of the turn
// (t.TurnsRecorded). An input line that cleared is only a hint: with a
// record to read it proves nothing by itself. A TUI that holds the submit
// while it starts (codex's "Waiting for startup") is waited for up to the
// ready timeout. If the text still sits in the input after a fifth of the
// submit timeout, Enter was lost (swallowed by a paste burst window) and is
// sent once more.
func (d *Driver) submit(ctx context.Context, t Target, text string) error {
	c := d.clock()
	// The TUI the text was pasted into: if another one shows an empty input
	// later (a restart raced this delivery), that is no proof of a submit.
	before, err := t.Pane.Gates(ctx)
	if err != nil {
		return &Failure{Stage: "submit", Reason: "reading the pane failed", Err: err}
	}
	start := c.Now()
	since := start.Add(-time.Second) // the record's clock may run a little behind
	known := 0
	if t.TurnsRecorded != nil {
		known = t.recordedSince(ctx, text, since)
	}
	turn := t.newTurn(ctx, start, before.PID)
	if err := t.Pane.SendKeys(ctx, "Enter"); err != nil {
		return &Failure{Stage: "submit", Reason: "send Enter failed", Err: err}
	}
	confirmed := func(sawBusy bool) error {
		if t.Turn != nil {
			turn.SawBusy = sawBusy
			*t.Turn = turn
		}
		return nil
	}
	deadline := start.Add(d.submitTimeout())
	held := false
	resendAfter := d.submitTimeout() / 5
	if t.TurnsRecorded == nil {
		resendAfter = min(resendAfter, time.Second)
	}
	resent := false
	tries := 0
	var asked time.Time
	var s harness.Screen
	for {
		var g Gates
		s, g, err = d.observe(ctx, t)
		if errors.Is(err, ErrPaneDead) {
			// The TUI exited on Enter (a command that quits): the text left
			// the input, and there is no turn to wait for.
			return nil
		}
		if err == nil && before.PID != 0 && g.PID != 0 && g.PID != before.PID {
			return &Failure{Stage: "submit", Reason: "the TUI was relaunched before the submit was confirmed; not known to have landed"}
		}
		if err == nil {
			inInput := s.State == harness.ScreenReady && t.Screen.Landed(s, text)
			if s.State == harness.ScreenBusy {
				return confirmed(true)
			}
			// The record is read whatever the screen shows: a TUI may keep
			// drawing the text in its box for a while after taking it.
			// The record is read at every early look, then at most five
			// times a second: a long turn's wait costs little.
			if t.TurnsRecorded != nil && (tries < 10 || c.Since(asked) >= 200*time.Millisecond) {
				asked = c.Now()
				if t.recordedSince(ctx, text, since) > known {
					return confirmed(false)
				}
			}
			switch {
			case s.Held:
				// Neither failed nor a turn yet: the TUI submits it once
				// it is up.
				if !held {
					held = true
					deadline = start.Add(max(d.readyTimeout(), d.submitTimeout()))
				}
			case inInput:
				if !resent && c.Since(start) >= resendAfter {
					resent = true
					if err := t.Pane.SendKeys(ctx, "Enter"); err != nil {
						return &Failure{Stage: "submit", Reason: "resend Enter failed", Err: err}
					}
				}
			case t.TurnsRecorded == nil && s.State == harness.ScreenReady:
				return confirmed(false)
			}
		}
		if !c.Now().Before(deadline) {
			return &Failure{Stage: "submit", Reason: notSubmittedReason(s, err, t, text, c.Since(start)), Err: err, Input: s.Input}
		}
		if err := d.sleep(ctx, d.backoff(&tries)); err != nil {
			return err
		}
	}
}

// CommandRecord reports what the harness's own record holds of a command
// run at or after since: done, or refused with the harness's words. An
// error is a read that failed (the next look asks again).
type CommandRecord func(ctx context.Context, since time.Time) (done bool, refused string, err error)

// Command runs a command of the harness's TUI (text the adapter names,
// e.g. "/compact"): it waits for an idle, empty input line like Deliver,
// pastes the command, confirms it landed, presses Enter after the
// adapter's delay, then waits for the harness's record of it (record) —
// the only proof, since a command makes no user turn. Enter is resent once
// if the command still sits in the input. The wait ends without proof when
// the TUI has been idle for CommandIdle after a busy screen went away (a
// command that did its work and recorded nothing), for 3×CommandIdle when
// no busy screen was ever seen, or at CommandTimeout.
func (d *Driver) Command(ctx context.Context, t Target, command string, record CommandRecord) error {
	text, err := PasteText(command)
	if err != nil || text == "" {
		return &Failure{Stage: "paste", Reason: "the harness command is not plain text; nothing was typed", Err: err}
	}
	if _, err := d.AwaitReady(ctx, t); err != nil {
		return err
	}
	if err := t.Pane.Paste(ctx, text); err != nil {
		return &Failure{Stage: "paste", Reason: "paste failed", Err: err}
	}
	if err := d.awaitLanded(ctx, t, text); err != nil {
		return err
	}
	if t.EnterDelay > 0 {
		if err := d.sleep(ctx, t.EnterDelay); err != nil {
			return err
		}
	}
	c := d.clock()
	before, err := t.Pane.Gates(ctx)
	if err != nil {
		return &Failure{Stage: "submit", Reason: "reading the pane failed", Err: err}
	}
	start := c.Now()
	since := start.Add(-time.Second) // the record's clock may run a little behind
	turn := t.newTurn(ctx, start, before.PID)
	if err := t.Pane.SendKeys(ctx, "Enter"); err != nil {
		return &Failure{Stage: "submit", Reason: "send Enter failed", Err: err}
	}
	deadline := start.Add(d.commandTimeout())
	resendAfter := min(d.submitTimeout()/5, 3*time.Second)
	resent, sawBusy := false, false
	var idleSince, asked time.Time
	tries := 0
	check := func() (bool, error) {
		asked = c.Now()
		done, refused, err := record(ctx, since)
		switch {
		case err != nil:
			return false, nil
		case refused != "":
			return false, &Failure{Stage: "command", Reason: fmt.Sprintf("the harness ran %s but refused it: %s", text, refused)}
		case done:
			if t.Turn != nil {
				// Recorded done is over: a command is no turn the
				// record ends (claude's /compact), and a harness still in
				// a turn says so on its record and screen.
				turn.SawBusy, turn.over = sawBusy, true
				*t.Turn = turn
			}
			return true, nil
		}
		return false, nil
	}
	for {
		s, g, err := d.observe(ctx, t)
		if errors.Is(err, ErrPaneDead) {
			return &Failure{Stage: "command", Reason: fmt.Sprintf("the TUI exited after %s", text), Err: err}
		}
		if err == nil && before.PID != 0 && g.PID != 0 && g.PID != before.PID {
			return &Failure{Stage: "command", Reason: fmt.Sprintf("the TUI was relaunched before the harness recorded %s", text)}
		}
		if tries < 10 || c.Since(asked) >= 200*time.Millisecond {
			if ok, ferr := check(); ok || ferr != nil {
				return ferr
			}
		}
		if err == nil {
			switch {
			case s.State == harness.ScreenBusy || s.Held:
				sawBusy, idleSince = true, time.Time{}
			case s.State == harness.ScreenReady && t.Screen.Landed(s, text):
				idleSince = time.Time{}
				if !resent && c.Since(start) >= resendAfter {
					resent = true
					if err := t.Pane.SendKeys(ctx, "Enter"); err != nil {
						return &Failure{Stage: "submit", Reason: "resend Enter failed", Err: err}
					}
				}
			case s.State == harness.ScreenReady && s.Input == "":
				if idleSince.IsZero() {
					idleSince = c.Now()
				}
				quiet := 3 * d.commandIdle()
				if sawBusy {
					quiet = d.commandIdle()
				}
				if c.Since(idleSince) >= quiet {
					if ok, ferr := check(); ok || ferr != nil {
						return ferr
					}
					return &Failure{Stage: "command", Reason: fmt.Sprintf("the TUI took %s and is idle again, but the harness recorded nothing of it within %s", text, c.Since(start).Round(time.Second))}
				}
			default:
				idleSince = time.Time{}
			}
		}
		if !c.Now().Before(deadline) {
			if ok, ferr := check(); ok || ferr != nil {
				return ferr
			}
			return &Failure{Stage: "command", Reason: fmt.Sprintf("the harness recorded nothing of %s within %s (screen %s)", text, d.commandTimeout(), s.State), Err: err, Input: s.Input}
		}
		if err := d.sleep(ctx, d.awaitBackoff(&tries)); err != nil {
			return err
		}
	}
}

// newTurn is the memory of a turn about to be submitted (Enter at start,
// into the TUI of pid): with the harness's turn ends counted right before
// Enter when the record can be read.
func (t Target) newTurn(ctx context.Context, start time.Time, pid int) Turn {
	turn := Turn{SubmittedAt: start, PID: pid}
	if rec := t.activity(ctx); rec != nil {
		turn.Recorded, turn.EndedBefore = true, rec.Ended
	}
	return turn
}

// recordedSince is TurnsRecorded with a read error counted as nothing
// recorded (the next look asks again).
func (t Target) recordedSince(ctx context.Context, text string, since time.Time) int {
	n, err := t.TurnsRecorded(ctx, text, since)
	if err != nil {
		return 0
	}
	return n
}

// notSubmittedReason says what the screen showed when no proof of a turn
// came, in words that match what a person would see on it.
func notSubmittedReason(s harness.Screen, err error, t Target, text string, after time.Duration) string {
	after = after.Round(time.Second)
	switch {
	case err != nil:
		return fmt.Sprintf("the pane could not be read for %s after Enter; not known to have landed", after)
	case s.Held:
		return fmt.Sprintf("the TUI was still starting %s after Enter, holding the message; not known to have landed", after)
	case s.State == harness.ScreenReady && t.Screen.Landed(s, text):
		return fmt.Sprintf("the message still sat in the input line %s after Enter (sent twice); it was not submitted", after)
	case s.State == harness.ScreenReady && s.Input == "":
		return fmt.Sprintf("the input line cleared but the harness recorded no turn for the message within %s; not known to have landed", after)
	default:
		return fmt.Sprintf("no turn started within %s of Enter (screen %s, input %q); not known to have landed", after, s.State, clip(s.Input, 60))
	}
}

// clip shortens s to at most n bytes for a failure reason, never cutting
// a UTF-8 character in half.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
