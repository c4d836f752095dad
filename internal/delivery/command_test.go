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

	"github.com/blackpaw-studio/leo/internal/harness"
)

// recordOf is a harness record for a command: it shows the command done
// (or refused) once the pane submitted it and after more looks.
type recordOf struct {
	mu      sync.Mutex
	p       *scriptPane
	after   int // reads after the submit before the record shows
	refused string
	never   bool
	sinces  []time.Time
}

func (r *recordOf) read(_ context.Context, since time.Time) (bool, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sinces = append(r.sinces, since)
	r.p.mu.Lock()
	submitted := len(r.p.submitted) > 0
	r.p.mu.Unlock()
	if !submitted || r.never {
		return false, "", nil
	}
	if r.after > 0 {
		r.after--
		return false, "", nil
	}
	if r.refused != "" {
		return false, r.refused, nil
	}
	return true, "", nil
}

func TestCommandTypesTheCommandAndWaitsForTheRecord(t *testing.T) {
	p := &scriptPane{busyLooks: 3} // a turn in flight first
	rec := &recordOf{p: p, after: 5}
	turn := &Turn{}
	start := time.Now()
	err := fastDriver().Command(context.Background(), Target{Pane: p, Screen: scriptScreen{}, Turn: turn}, "/compact", rec.read)
	if err != nil {
		t.Fatal(err)
	}
	if p.pastes != 1 || p.enters != 1 || !slices.Equal(p.submitted, []string{"/compact"}) {
		t.Fatalf("pastes=%d enters=%d submitted=%q, want /compact typed once after the turn", p.pastes, p.enters, p.submitted)
	}
	if p.merged != 0 {
		t.Fatal("the command was pasted while a turn ran")
	}
	if turn.SubmittedAt.IsZero() || turn.SubmittedAt.Before(start) {
		t.Fatal("the command's turn is not remembered: the next message would not wait for it")
	}
	// The record is asked about from just before Enter on.
	for _, s := range rec.sinces {
		if s.Before(start.Add(-2*time.Second)) || s.After(time.Now()) {
			t.Fatalf("record read since %v (the command ran from %v)", s, start)
		}
	}
}

func TestCommandRefusedSaysTheHarnessWords(t *testing.T) {
	p := &scriptPane{}
	rec := &recordOf{p: p, refused: "Not enough messages to compact."}
	err := fastDriver().Command(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "/compact", rec.read)
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "command" || !strings.Contains(f.Reason, "Not enough messages to compact.") {
		t.Fatalf("err = %v, want a command failure quoting the harness", err)
	}
}

func TestCommandWithoutRecordFailsOnceTheTUIIsIdle(t *testing.T) {
	p := &scriptPane{}
	rec := &recordOf{p: p, never: true}
	d := fastDriver()
	d.CommandIdle = 20 * time.Millisecond
	d.CommandTimeout = time.Hour
	start := time.Now()
	err := d.Command(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "/compact", rec.read)
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "command" || !strings.Contains(f.Reason, "recorded nothing") {
		t.Fatalf("err = %v, want a command failure: idle, nothing recorded", err)
	}
	if time.Since(start) > time.Minute {
		t.Fatal("waited for the command timeout, not for the idle TUI")
	}
}

func TestCommandResendsSwallowedEnterOnce(t *testing.T) {
	p := &scriptPane{swallowEnts: 1}
	rec := &recordOf{p: p}
	d := fastDriver()
	if err := d.Command(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "/compact", rec.read); err != nil {
		t.Fatal(err)
	}
	if p.enters != 2 || !slices.Equal(p.submitted, []string{"/compact"}) {
		t.Fatalf("enters=%d submitted=%q, want a second Enter and one submission", p.enters, p.submitted)
	}
}

func TestCommandNeverTypesOverSomeonesInput(t *testing.T) {
	p := &scriptPane{input: "half a sentence"}
	rec := &recordOf{p: p}
	d := fastDriver()
	d.ReadyTimeout = 30 * time.Millisecond
	err := d.Command(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "/compact", rec.read)
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "ready" || p.pastes != 0 || p.enters != 0 {
		t.Fatalf("err=%v pastes=%d enters=%d, want a ready failure with nothing typed", err, p.pastes, p.enters)
	}
}

func TestCommandRefusesNonText(t *testing.T) {
	p := &scriptPane{}
	err := fastDriver().Command(context.Background(), Target{Pane: p, Screen: scriptScreen{}}, "/compact\x1b[2J", (&recordOf{p: p}).read)
	if err == nil || p.pastes != 0 {
		t.Fatalf("err=%v pastes=%d, want a refusal with nothing pasted", err, p.pastes)
	}
}

// A command the record says is done leaves no turn to wait for, also where
// the harness's turn record gets no end for it (claude's /compact is no
// turn): the next message goes in at once, not after the grace a lagging
// record gets.
func TestACommandRecordedDoneNeedsNoTurnEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{}
		rec := &recordOf{p: p, after: 3}
		turns := func(context.Context) (harness.TurnActivity, error) {
			return harness.TurnActivity{Found: true, Ended: 4, EndsUnrecorded: true}, nil
		}
		d := fastDriver()
		d.ReadyTimeout = time.Minute
		tg := Target{Pane: p, Screen: scriptScreen{}, Turn: &Turn{}, Activity: turns}
		if err := d.Command(context.Background(), tg, "/compact", rec.read); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := d.Deliver(context.Background(), tg, "next"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited > time.Second {
			t.Fatalf("the message after the command waited %s", waited)
		}
		if !slices.Equal(p.submitted, []string{"/compact", "next"}) {
			t.Fatalf("submitted %q", p.submitted)
		}
	})
}
