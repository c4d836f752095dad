package delivery

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// scriptPane is an in-memory TUI: it renders "state|input" and reacts to
// paste and keys the way the real ones do, with knobs for the failure modes
// of reference/user-pain-points.md (swallowed Enter, dropped paste, slow
// start, dialogs, copy mode).
type scriptPane struct {
	mu          sync.Mutex
	looksLeft   int // captures that still show "starting"
	dialog      bool
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
}

func (p *scriptPane) Gates(context.Context) (Gates, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Gates{Dead: p.dead, InMode: p.inMode}, nil
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
	if p.inMode {
		return nil // keys went to copy mode
	}
	if !p.dropPaste {
		p.input += text
	}
	return nil
}

func (p *scriptPane) SendKeys(_ context.Context, keys ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		if k != "Enter" {
			continue
		}
		if p.dialog {
			p.dialog = false
			p.dialogKeys++
			continue
		}
		p.enters++
		if p.swallowEnts > 0 {
			p.swallowEnts--
			p.input += "\n"
			continue
		}
		p.submitted = append(p.submitted, strings.TrimSuffix(p.input, "\n"))
		p.input = ""
		p.busyLooks = 2
	}
	return nil
}

type scriptScreen struct{}

func (scriptScreen) Classify(c string) harness.Screen {
	state, input, _ := strings.Cut(c, "|")
	switch state {
	case "ready":
		return harness.Screen{State: harness.ScreenReady, Input: input}
	case "busy":
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	case "dialog":
		return harness.Screen{State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}}
	}
	return harness.Screen{State: harness.ScreenStarting}
}

func (scriptScreen) Landed(s harness.Screen, pasted string) bool {
	return strings.TrimSpace(pasted) != "" && strings.Contains(s.Input, pasted)
}

func fastDriver() *Driver {
	return &Driver{Poll: time.Millisecond, ReadyTimeout: 2 * time.Second, LandTimeout: 200 * time.Millisecond, SubmitTimeout: 500 * time.Millisecond}
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

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"a\n": "a", "a\r\nb\r\n": "a\nb", "a\n\n": "a\n", "a": "a"} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
