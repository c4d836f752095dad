package delivery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// scriptPane is an in-memory TUI: it renders "state|input" and reacts to
// paste and keys the way the real ones do, with knobs for the failure modes
// users meet on the real TUIs (swallowed Enter, dropped paste, slow
// start, dialogs, copy mode).
type scriptPane struct {
	mu          sync.Mutex
	looksLeft   int // captures that still show "starting"
	dialog      bool
	dialogStays bool // the dialog ignores its keys
	inMode      bool
	input       string
	busyLooks   int
	dropPaste   bool
	swallowEnts int // Enters turned into newlines
	submitted   []string
	pastes      int
	enters      int
	dialogKeys  int
	cancels     int
	dead        bool
	pid         int
	// relaunchOnEnter: the TUI is replaced by a fresh one (new pid, empty
	// input) as the Enter arrives, as a racing restart would do.
	relaunchOnEnter bool
	// gapAfterEnter: looks right after a submit that show an empty, idle
	// input before the busy line (codex's ~175 ms); heldOnEnter: looks
	// during which a submit is held while the TUI starts (codex's "Waiting
	// for startup"), the text still in the input.
	gapAfterEnter, heldOnEnter int
	gap, held                  int
	// merged counts pastes that arrived while a turn was running: text
	// the real TUIs fold into the running turn.
	merged int
	// draw, when set, is how the TUI draws a paste (the input it shows).
	draw func(string) string
	// C-u empties the input (claude's, codex's, opencode's clear key)
	// unless clearIgnored; clears counts the presses.
	clearIgnored bool
	clears       int
}

func (p *scriptPane) Gates(context.Context) (Gates, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Gates{Dead: p.dead, InMode: p.inMode, PID: p.pid}, nil
}

func (p *scriptPane) CancelMode(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inMode = false
	p.cancels++
	return nil
}

func (p *scriptPane) Capture(context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.looksLeft > 0:
		p.looksLeft--
		return "starting|", nil
	case p.dialog:
		return "dialog|", nil
	case p.held > 0:
		p.held--
		if p.held == 0 {
			p.submitLocked()
		}
		return "held|" + p.input, nil
	case p.gap > 0:
		p.gap--
		return "ready|" + p.input, nil
	case p.busyLooks > 0:
		p.busyLooks--
		return "busy|" + p.input, nil
	}
	return "ready|" + p.input, nil
}

func (p *scriptPane) Paste(_ context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pastes++
	if p.gap > 0 || p.busyLooks > 0 || p.held > 0 {
		p.merged++
	}
	if p.inMode {
		return nil // keys went to copy mode
	}
	if !p.dropPaste {
		if p.draw != nil {
			text = p.draw(text)
		}
		p.input += text
	}
	return nil
}

func (p *scriptPane) SendKeys(_ context.Context, keys ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		if k == "C-u" {
			p.clears++
			if !p.clearIgnored {
				p.input = ""
			}
			continue
		}
		if k != "Enter" {
			continue
		}
		if p.dialog {
			p.dialog = p.dialogStays
			p.dialogKeys++
			continue
		}
		p.enters++
		if p.relaunchOnEnter {
			p.relaunchOnEnter = false
			p.pid++
			p.input = ""
			continue
		}
		if p.swallowEnts > 0 {
			p.swallowEnts--
			p.input += "\n"
			continue
		}
		if p.heldOnEnter > 0 {
			p.held, p.heldOnEnter = p.heldOnEnter, 0
			continue
		}
		p.submitLocked()
	}
	return nil
}

func (p *scriptPane) submitLocked() {
	p.submitted = append(p.submitted, strings.TrimSuffix(p.input, "\n"))
	p.input = ""
	p.gap = p.gapAfterEnter
	p.busyLooks = 2
}

type scriptScreen struct{}

func (scriptScreen) Classify(c string) harness.Screen {
	state, input, _ := strings.Cut(c, "|")
	switch state {
	case "ready":
		return harness.Screen{State: harness.ScreenReady, Input: input}
	case "busy":
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	case "held":
		return harness.Screen{State: harness.ScreenStarting, Input: input, Held: true}
	case "dialog":
		return harness.Screen{State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}}
	}
	return harness.Screen{State: harness.ScreenStarting}
}

func (scriptScreen) Landed(s harness.Screen, pasted string) bool {
	return strings.TrimSpace(pasted) != "" && strings.Contains(s.Input, pasted)
}

func fastDriver() *Driver {
	return &Driver{Poll: time.Millisecond, PollMax: 5 * time.Millisecond, ReadyTimeout: 2 * time.Second, LandTimeout: 200 * time.Millisecond, SubmitTimeout: 500 * time.Millisecond}
}

func TestDeliverSubmitsMultiLineMessageAsOnePaste(t *testing.T) {
	p := &scriptPane{}
	msg := "line one\nline two\n"
	if err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, msg); err != nil {
		t.Fatal(err)
	}
	if p.pastes != 1 || p.enters != 1 {
		t.Fatalf("pastes=%d enters=%d, want 1 and 1", p.pastes, p.enters)
	}
	if len(p.submitted) != 1 || p.submitted[0] != "line one\nline two" {
		t.Fatalf("submitted %q, want one submission without the trailing newline", p.submitted)
	}
}

func TestDeliverWaitsForSlowStartAndAnswersDialog(t *testing.T) {
	p := &scriptPane{looksLeft: 20, dialog: true}
	var events []string
	d := fastDriver()
	d.Observe = func(e string) { events = append(events, e) }
	if err := d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi"); err != nil {
		t.Fatal(err)
	}
	if p.dialogKeys != 1 {
		t.Fatalf("dialog answered %d times, want 1", p.dialogKeys)
	}
	if len(p.submitted) != 1 || p.submitted[0] != "hi" {
		t.Fatalf("submitted %q", p.submitted)
	}
	if len(events) != 1 || !strings.Contains(events[0], "trust") {
		t.Fatalf("events %q", events)
	}
}

func TestDeliverLeavesCopyModeFirst(t *testing.T) {
	p := &scriptPane{inMode: true}
	if err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi"); err != nil {
		t.Fatal(err)
	}
	if p.cancels != 1 || len(p.submitted) != 1 {
		t.Fatalf("cancels=%d submitted=%q", p.cancels, p.submitted)
	}
}

func TestDeliverResendsSwallowedEnterOnce(t *testing.T) {
	p := &scriptPane{swallowEnts: 1}
	if err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi"); err != nil {
		t.Fatal(err)
	}
	if p.enters != 2 || len(p.submitted) != 1 || p.submitted[0] != "hi" {
		t.Fatalf("enters=%d submitted=%q, want 2 Enters and one submission", p.enters, p.submitted)
	}
}

func TestDeliverReportsFailureWhenEnterNeverTakes(t *testing.T) {
	p := &scriptPane{swallowEnts: 100}
	err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "submit" {
		t.Fatalf("err = %v, want a submit failure", err)
	}
	if p.enters != 2 {
		t.Fatalf("enters = %d, want exactly 2 (one resend, no more)", p.enters)
	}
}

func TestDeliverNeverRepastesWhenTextDoesNotLand(t *testing.T) {
	p := &scriptPane{dropPaste: true}
	err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "landed" {
		t.Fatalf("err = %v, want a landed failure", err)
	}
	if p.pastes != 1 || p.enters != 0 {
		t.Fatalf("pastes=%d enters=%d, want 1 paste and no Enter", p.pastes, p.enters)
	}
}

func TestDeliverFailsWhenNeverReady(t *testing.T) {
	p := &scriptPane{looksLeft: 1 << 30}
	d := fastDriver()
	d.ReadyTimeout = 50 * time.Millisecond
	err := d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "ready" || p.pastes != 0 {
		t.Fatalf("err=%v pastes=%d, want a ready failure and no paste", err, p.pastes)
	}
}

func TestDeliverWaitsForBusyTurnToEnd(t *testing.T) {
	p := &scriptPane{busyLooks: 30, input: ""}
	if err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "next"); err != nil {
		t.Fatal(err)
	}
	if len(p.submitted) != 1 {
		t.Fatalf("submitted %q", p.submitted)
	}
}

func TestDeliverRecordsTheMessageRightBeforeThePaste(t *testing.T) {
	p := &scriptPane{busyLooks: 5}
	var recorded []string
	tg := Target{Pane: p, Screen: scriptScreen{}, BeforePaste: func(text string) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.pastes != 0 || p.busyLooks != 0 {
			t.Errorf("BeforePaste ran with pastes=%d busyLooks=%d: not right before the paste", p.pastes, p.busyLooks)
		}
		recorded = append(recorded, text)
		return nil
	}}
	if err := fastDriver().Deliver(context.Background(), tg, "hi\n"); err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 || recorded[0] != "hi" {
		t.Fatalf("recorded %q, want the pasted text once", recorded)
	}
}

func TestDeliverPastesNothingWhenRecordingFails(t *testing.T) {
	p := &scriptPane{}
	tg := Target{Pane: p, Screen: scriptScreen{}, BeforePaste: func(string) error { return errors.New("disk full") }}
	err := fastDriver().Deliver(context.Background(), tg, "hi")
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "paste" || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want a paste failure naming the cause", err)
	}
	if p.pastes != 0 || p.enters != 0 {
		t.Fatalf("pastes=%d enters=%d, want nothing typed", p.pastes, p.enters)
	}
}

func TestDeliverFailsSayingTheInputHoldsTextAndLeavesIt(t *testing.T) {
	p := &scriptPane{input: "a person's draft"}
	d := fastDriver()
	d.ReadyTimeout = 50 * time.Millisecond
	err := d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "ready" || !strings.Contains(f.Reason, "the input line holds text") {
		t.Fatalf("err = %v, want a ready failure saying the input line holds text", err)
	}
	if strings.Contains(err.Error(), "a person's draft") {
		t.Fatalf("the reason repeats a person's typing: %v", err)
	}
	if p.pastes != 0 || p.enters != 0 || p.input != "a person's draft" {
		t.Fatalf("pastes=%d enters=%d input=%q, want the input left alone", p.pastes, p.enters, p.input)
	}
}

func TestDeliverGivesUpOnADialogThatStaysUp(t *testing.T) {
	p := &scriptPane{dialog: true, dialogStays: true}
	d := fastDriver()
	d.ReadyTimeout = 50 * time.Millisecond
	done := make(chan error, 1)
	go func() { done <- d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi") }()
	select {
	case err := <-done:
		var f *Failure
		if !errors.As(err, &f) || f.Stage != "ready" || !strings.Contains(f.Reason, "dialog") {
			t.Fatalf("err = %v, want a ready failure naming the dialog", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Deliver still waiting on a dialog 10 s after its 50 ms ready timeout")
	}
}

func TestFinishSubmitsTextAlreadyInTheInputWithoutPasting(t *testing.T) {
	p := &scriptPane{looksLeft: 3, input: "cut\nshort"}
	if err := fastDriver().Finish(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "cut\nshort"); err != nil {
		t.Fatal(err)
	}
	if p.pastes != 0 || p.enters != 1 || len(p.submitted) != 1 || p.submitted[0] != "cut\nshort" {
		t.Fatalf("pastes=%d enters=%d submitted=%q, want one Enter and the text submitted once", p.pastes, p.enters, p.submitted)
	}
}

func TestFinishResendsASwallowedEnterOnce(t *testing.T) {
	p := &scriptPane{input: "hi", swallowEnts: 1}
	if err := fastDriver().Finish(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi"); err != nil {
		t.Fatal(err)
	}
	if p.pastes != 0 || p.enters != 2 || len(p.submitted) != 1 {
		t.Fatalf("pastes=%d enters=%d submitted=%q", p.pastes, p.enters, p.submitted)
	}
}

func TestFinishNeverPastesWhenTheInputIsEmpty(t *testing.T) {
	p := &scriptPane{}
	d := fastDriver()
	start := time.Now()
	err := d.Finish(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	if !errors.Is(err, ErrNotLanded) || !strings.Contains(err.Error(), "the input line was empty") {
		t.Fatalf("err = %v, want ErrNotLanded for an empty input", err)
	}
	// A paste sent just before the restart may still be on its way: the
	// empty input is judged only after the land timeout.
	if waited := time.Since(start); waited < d.LandTimeout {
		t.Fatalf("judged after %v, want at least the land timeout %v", waited, d.LandTimeout)
	}
	if p.pastes != 0 || p.enters != 0 {
		t.Fatalf("pastes=%d enters=%d, want nothing typed", p.pastes, p.enters)
	}
}

func TestFinishLeavesOtherTextAlone(t *testing.T) {
	p := &scriptPane{input: "someone typing"}
	d := fastDriver()
	d.ReadyTimeout = 100 * time.Millisecond
	err := d.Finish(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	if !errors.Is(err, ErrNotLanded) || !strings.Contains(err.Error(), "other text") {
		t.Fatalf("err = %v, want ErrNotLanded naming other text", err)
	}
	if p.pastes != 0 || p.enters != 0 || p.input != "someone typing" {
		t.Fatalf("pastes=%d enters=%d input=%q, want the input left alone", p.pastes, p.enters, p.input)
	}
}

func TestFinishOnADeadPaneIsNotLanded(t *testing.T) {
	p := &scriptPane{dead: true}
	err := fastDriver().Finish(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hi")
	if !errors.Is(err, ErrNotLanded) || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("err = %v, want ErrNotLanded saying the TUI exited", err)
	}
}

// A restart that replaces the TUI between Enter and the submit check leaves
// an empty input on a new process: that must not count as delivered.
func TestDeliverFailsWhenTheTUIIsRelaunchedBeforeTheSubmitIsConfirmed(t *testing.T) {
	p := &scriptPane{pid: 100, relaunchOnEnter: true}
	err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hello")
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "submit" || !strings.Contains(f.Reason, "relaunched") {
		t.Fatalf("Deliver = %v, want a submit failure naming the relaunch", err)
	}
	if len(p.submitted) != 0 {
		t.Fatalf("submitted %q", p.submitted)
	}

	// The same pane without a relaunch delivers.
	p = &scriptPane{pid: 100}
	if err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hello"); err != nil {
		t.Fatal(err)
	}
}

// codex shows an empty, idle input for a moment after Enter, before its
// busy line: a second message pasted then is folded into the first turn.
// Each message must wait for the previous turn to be seen over.
func TestBackToBackMessagesEachGetTheirOwnTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{gapAfterEnter: 5}
		tg := Target{Pane: p, Screen: scriptScreen{}, Turn: &Turn{}}
		d := fastDriver()
		for _, msg := range []string{"one", "two", "three"} {
			if err := d.Deliver(context.Background(), tg, msg); err != nil {
				t.Fatalf("%s: %v", msg, err)
			}
		}
		if p.merged != 0 || !slices.Equal(p.submitted, []string{"one", "two", "three"}) {
			t.Fatalf("submitted %q with %d pastes into a running turn", p.submitted, p.merged)
		}
	})
}

// A turn too short for any look to see it busy: the next message waits
// until the TUI has stayed idle for Settle (virtual time, synctest).
func TestNextMessageWaitsForTheIdleScreenToSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{}
		d := fastDriver()
		d.Settle = 10 * time.Minute
		d.ReadyTimeout = 5 * time.Minute
		turn := &Turn{SubmittedAt: time.Now()} // submitted; never seen busy
		tg := Target{Pane: p, Screen: scriptScreen{}, Turn: turn}
		err := d.Deliver(context.Background(), tg, "two")
		var f *Failure
		if !errors.As(err, &f) || f.Stage != "ready" || !strings.Contains(f.Reason, "previous message's turn") || p.pastes != 0 {
			t.Fatalf("err = %v, pastes %d; want a ready failure waiting for the previous turn", err, p.pastes)
		}
		start := time.Now()
		*turn = Turn{SubmittedAt: start}
		d.ReadyTimeout = time.Hour
		if err := d.Deliver(context.Background(), tg, "two"); err != nil {
			t.Fatalf("after settling: %v", err)
		}
		if waited := time.Since(start); waited < d.Settle {
			t.Fatalf("pasted after %s, before the %s settle", waited, d.Settle)
		}
		if p.merged != 0 || !slices.Equal(p.submitted, []string{"two"}) {
			t.Fatalf("submitted %q, merged %d", p.submitted, p.merged)
		}
	})
}

// codex on a cold start holds a submitted message ("Waiting for startup")
// and submits it later than any submit timeout: not a failure.
func TestHeldSubmitIsWaitedForNotFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{heldOnEnter: 400}
		d := fastDriver() // submit timeout 500 ms; 400 held looks take longer
		d.Poll = 2 * time.Millisecond
		start := time.Now()
		if err := d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "hello"); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) <= d.SubmitTimeout {
			t.Fatalf("held for only %s; the test must outlast the submit timeout", time.Since(start))
		}
		if !slices.Equal(p.submitted, []string{"hello"}) || p.enters != 1 {
			t.Fatalf("submitted %q with %d Enters", p.submitted, p.enters)
		}
	})
}

// With the harness's record to read, an input line that cleared is no
// proof: the message is delivered when the record shows its turn, and
// fails as not known to have landed when it never does.
func TestSubmitNeedsTheHarnessRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, recorded := range []bool{true, false} {
			p := &scriptPane{}
			p.mu.Lock()
			p.busyLooks = 0
			p.mu.Unlock()
			var asked []string
			tg := Target{Pane: noBusy{p}, Screen: scriptScreen{}, TurnsRecorded: func(_ context.Context, text string, _ time.Time) (int, error) {
				asked = append(asked, text)
				if recorded && len(asked) > 3 {
					return 1, nil
				}
				return 0, nil
			}}
			err := fastDriver().Deliver(context.Background(), tg, "hello")
			if recorded && err != nil {
				t.Fatalf("recorded: %v", err)
			}
			var f *Failure
			if !recorded && (!errors.As(err, &f) || f.Stage != "submit" || !strings.Contains(f.Reason, "recorded no turn")) {
				t.Fatalf("never recorded: err = %v", err)
			}
			if len(asked) == 0 || asked[0] != "hello" {
				t.Fatalf("asked %q", asked)
			}
		}
	})
}

// noBusy is a TUI whose turns never show a busy screen.
type noBusy struct{ *scriptPane }

func (n noBusy) SendKeys(ctx context.Context, keys ...string) error {
	err := n.scriptPane.SendKeys(ctx, keys...)
	n.mu.Lock()
	n.busyLooks = 0
	n.mu.Unlock()
	return err
}

// A paste of leo's that failed and stayed in the input line is leo's,
// not someone's typing: the next message says so at once.
func TestLeftoverPasteIsRecognisedAsLeos(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{input: "mangled text"}
		tg := Target{Pane: p, Screen: scriptScreen{}, Leftover: &Leftover{ID: "m1", Text: "the text", Input: "mangled text"}}
		d := fastDriver()
		d.ReadyTimeout = time.Hour
		err := d.Deliver(context.Background(), tg, "next")
		var f *Failure
		if !errors.As(err, &f) || !strings.Contains(f.Reason, "leo's own paste of message m1") || strings.Contains(f.Reason, "someone") {
			t.Fatalf("err = %v", err)
		}
		if p.pastes != 0 {
			t.Fatalf("pasted %d times", p.pastes)
		}
	})
}

// leo clears its own failed paste from the input line with the adapter's
// keys, and the next message goes through (issue 15 item 2: before, every
// message behind it failed until a person cleared the line).
func TestLeftoverPasteIsClearedByLeo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{input: "mangled text"}
		var events []string
		tg := Target{Pane: p, Screen: scriptScreen{}, ClearKeys: []string{"C-u"}, Leftover: &Leftover{ID: "m1", Text: "the text", Input: "mangled text"}}
		d := fastDriver()
		d.Observe = func(e string) { events = append(events, e) }
		if err := d.Deliver(context.Background(), tg, "next"); err != nil {
			t.Fatal(err)
		}
		if p.clears != 1 || !slices.Equal(p.submitted, []string{"next"}) {
			t.Fatalf("clears=%d submitted=%q; want one clear, then next submitted alone", p.clears, p.submitted)
		}
		if len(events) != 1 || !strings.Contains(events[0], "m1") {
			t.Fatalf("events = %q", events)
		}
	})
}

// Keys that do not clear the line are pressed a bounded number of times,
// then the delivery fails saying the keys did not clear it.
func TestLeftoverPasteClearKeysIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{input: "mangled text", clearIgnored: true}
		tg := Target{Pane: p, Screen: scriptScreen{}, ClearKeys: []string{"C-u"}, Leftover: &Leftover{ID: "m1", Text: "the text", Input: "mangled text"}}
		d := fastDriver()
		d.ReadyTimeout = time.Hour
		err := d.Deliver(context.Background(), tg, "next")
		var f *Failure
		if !errors.As(err, &f) || !strings.Contains(f.Reason, "leo's own paste of message m1") || !strings.Contains(f.Reason, "did not clear it") {
			t.Fatalf("err = %v", err)
		}
		if p.clears != 2 || p.pastes != 0 {
			t.Fatalf("clears=%d pastes=%d; want 2 presses and nothing pasted", p.clears, p.pastes)
		}
	})
}

// A person's text is never cleared, whatever keys leo has.
func TestPersonsTypingIsNeverCleared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{input: "someone is typing"}
		tg := Target{Pane: p, Screen: scriptScreen{}, ClearKeys: []string{"C-u"}, Leftover: &Leftover{ID: "m1", Text: "the text", Input: "mangled text"}}
		d := fastDriver()
		err := d.Deliver(context.Background(), tg, "next")
		if err == nil || p.clears != 0 || p.input != "someone is typing" {
			t.Fatalf("err=%v clears=%d input=%q", err, p.clears, p.input)
		}
	})
}

// A failure reason quotes the input clipped at a character boundary,
// never half of a UTF-8 sequence.
func TestFailureReasonNeverCutsUTF8(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for shift := range 4 {
			p := &scriptPane{draw: func(s string) string { return strings.Repeat("x", shift) + strings.Repeat("é👍🏽", 20) }}
			err := fastDriver().Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "never drawn as pasted")
			var f *Failure
			if !errors.As(err, &f) || f.Stage != "landed" {
				t.Fatalf("err = %v", err)
			}
			// %q would show a cut character as \x.. bytes.
			if !utf8.ValidString(f.Reason) || !utf8.ValidString(err.Error()) || strings.Contains(f.Reason, `\x`) {
				t.Fatalf("shift %d: reason is not valid UTF-8: %q", shift, f.Reason)
			}
		}
	})
	for _, s := range []string{"é", "👍🏽", "aé", "a👍"} {
		for n := 0; n <= len(s); n++ {
			if c := clip(strings.Repeat(s, 30), n); !utf8.ValidString(c) {
				t.Errorf("clip(%q×30, %d) = %q", s, n, c)
			}
		}
	}
}

// recordingPane is scriptPane plus a harness record: every submitted turn
// is stamped with the (virtual) time it was taken, as claude's transcript
// and codex's rollout stamp theirs.
type recordingPane struct {
	*scriptPane
	rmu    sync.Mutex
	record []recordedTurn
}

type recordedTurn struct {
	text string
	at   time.Time
}

func (r *recordingPane) SendKeys(ctx context.Context, keys ...string) error {
	r.mu.Lock()
	before := len(r.submitted)
	r.mu.Unlock()
	err := r.scriptPane.SendKeys(ctx, keys...)
	r.mu.Lock()
	after := append([]string(nil), r.submitted[before:]...)
	r.mu.Unlock()
	r.rmu.Lock()
	for _, s := range after {
		r.record = append(r.record, recordedTurn{s, time.Now()})
	}
	r.rmu.Unlock()
	return err
}

// turns counts the recorded turns that are text, at or after since.
func (r *recordingPane) turns(_ context.Context, text string, since time.Time) (int, error) {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	n := 0
	for _, t := range r.record {
		if !t.at.Before(since) && t.text == text {
			n++
		}
	}
	return n, nil
}

// The same message sent twice within the record's look-back ("continue",
// "continue"): the earlier turn is no proof of the new one, whose Enter the
// TUI never took. (Found in review.)
func TestAnEarlierIdenticalTurnIsNoProof(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &recordingPane{scriptPane: &scriptPane{}}
		var turn Turn
		tg := Target{Pane: p, Screen: scriptScreen{}, TurnsRecorded: p.turns, Turn: &turn}
		d := &Driver{}
		if err := d.Deliver(context.Background(), tg, "continue"); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		p.swallowEnts = 100 // the TUI never takes the next Enter
		p.mu.Unlock()
		if err := d.Deliver(context.Background(), tg, "continue"); err == nil {
			t.Fatalf("the second %q reported delivered; submitted %q, input %q", "continue", p.submitted, p.input)
		}
	})
}

// A daemon cut off after Enter leaves a message the TUI already took but
// still draws in its box: Finish asks the record first and presses no
// Enter. (Found in review.)
func TestFinishAsksTheRecordBeforeEnter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &recordingPane{scriptPane: &scriptPane{input: "hello"}}
		p.record = append(p.record, recordedTurn{"hello", time.Now().Add(-2 * time.Second)})
		tg := Target{Pane: noBusy{p.scriptPane}, Screen: scriptScreen{}, TurnsRecorded: p.turns, PastedAt: time.Now().Add(-3 * time.Second)}
		if err := (&Driver{}).Finish(context.Background(), tg, "hello"); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		if p.enters != 0 {
			t.Fatalf("Finish pressed Enter %d times on a message the record shows was taken", p.enters)
		}
	})
}
