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

// streamingPane is codex streaming its replies: every turn shows an idle,
// empty input line from its Enter to its end (no busy screen at all), and
// only the harness's record (task_started … task_complete) knows the turn
// runs. A paste while it runs is folded into the running turn.
type streamingPane struct {
	*scriptPane
	turn time.Duration

	rmu     sync.Mutex
	running bool
	ended   int
	folded  int
	// unrecorded: the record says EndsUnrecorded (claude); a turn started
	// with a negative duration never gets its end.
	unrecorded bool
}

func newStreamingPane(turn time.Duration) *streamingPane {
	return &streamingPane{scriptPane: &scriptPane{}, turn: turn}
}

func (p *streamingPane) Paste(ctx context.Context, text string) error {
	p.rmu.Lock()
	if p.running {
		p.folded++
	}
	p.rmu.Unlock()
	return p.scriptPane.Paste(ctx, text)
}

func (p *streamingPane) SendKeys(ctx context.Context, keys ...string) error {
	before := len(p.submittedNow())
	err := p.scriptPane.SendKeys(ctx, keys...)
	p.mu.Lock()
	p.busyLooks, p.gap = 0, 0
	p.mu.Unlock()
	if len(p.submittedNow()) > before {
		p.start(p.turn)
	}
	return err
}

func (p *streamingPane) submittedNow() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.submitted)
}

// start records a turn start, and its end after d.
func (p *streamingPane) start(d time.Duration) {
	p.rmu.Lock()
	p.running = true
	p.rmu.Unlock()
	if d < 0 {
		return
	}
	time.AfterFunc(d, func() {
		p.rmu.Lock()
		p.running = false
		p.ended++
		p.rmu.Unlock()
	})
}

func (p *streamingPane) activity(context.Context) (harness.TurnActivity, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	return harness.TurnActivity{Found: true, Running: p.running, Ended: p.ended, EndsUnrecorded: p.unrecorded}, nil
}

// Three messages to a TUI whose turns look idle all along: each waits for
// the record of the previous turn's end, none is folded into a running
// turn, and no settle is needed where the record answers.
func TestRecordedTurnsAreWaitedForOnAnIdleLookingScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStreamingPane(12 * time.Second)
		d := fastDriver()
		d.ReadyTimeout = time.Minute
		d.Settle = time.Hour // never reached: the record decides
		tg := Target{Pane: p, Screen: scriptScreen{}, Turn: &Turn{}, Activity: p.activity}
		start := time.Now()
		for _, msg := range []string{"A", "B", "C"} {
			if err := d.Deliver(context.Background(), tg, msg); err != nil {
				t.Fatalf("%s: %v", msg, err)
			}
		}
		if p.folded != 0 || !slices.Equal(p.submittedNow(), []string{"A", "B", "C"}) {
			t.Fatalf("submitted %q, %d pasted into a running turn", p.submittedNow(), p.folded)
		}
		if took := time.Since(start); took < 24*time.Second || took > 25*time.Second {
			t.Fatalf("C submitted %s after A; want right after A's and B's 12 s turns", took)
		}
	})
}

// With no memory of a turn (a daemon restarted mid-turn, a person's turn,
// a task's), a turn the record says runs is waited for, and a ready
// timeout says so.
func TestARecordedRunningTurnBlocksThePasteWithoutMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newStreamingPane(0)
		p.start(30 * time.Second)
		d := fastDriver()
		d.ReadyTimeout = 10 * time.Second
		tg := Target{Pane: p, Screen: scriptScreen{}, Turn: &Turn{}, Activity: p.activity}
		err := d.Deliver(context.Background(), tg, "B")
		var f *Failure
		if !errors.As(err, &f) || f.Stage != "ready" || !strings.Contains(f.Reason, "record shows a turn still running") || p.pastes != 0 {
			t.Fatalf("err = %v, pastes %d; want a ready failure naming the running turn", err, p.pastes)
		}
		d.ReadyTimeout = time.Minute
		if err := d.Deliver(context.Background(), tg, "B"); err != nil {
			t.Fatal(err)
		}
		if p.folded != 0 || !slices.Equal(p.submittedNow(), []string{"B"}) {
			t.Fatalf("submitted %q, folded %d", p.submittedNow(), p.folded)
		}
	})
}

// A record that cannot be read, or has nothing yet (Found false), leaves
// the screen as the only witness: the settle rule applies.
func TestNoRecordLeavesTheScreenRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scriptPane{}
		d := fastDriver()
		d.Settle = 3 * time.Second
		d.ReadyTimeout = time.Minute
		turn := &Turn{SubmittedAt: time.Now(), Recorded: true}
		none := func(context.Context) (harness.TurnActivity, error) { return harness.TurnActivity{}, nil }
		start := time.Now()
		if err := d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}, Turn: turn, Activity: none}, "two"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < d.Settle {
			t.Fatalf("pasted after %s, before the %s settle", waited, d.Settle)
		}
	})
}

// Turns shorter than any look, never drawn busy, their ends recorded (a
// fast reply of claude or opencode): each message goes in as soon as the
// record has the previous turn's end — no settle — and each gets its own
// turn.
func TestARecordedEndNeedsNoSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, unrecorded := range []bool{false, true} {
			p := newStreamingPane(time.Millisecond)
			p.unrecorded = unrecorded
			d := fastDriver()
			d.ReadyTimeout = time.Minute
			d.Settle = time.Hour
			tg := Target{Pane: p, Screen: scriptScreen{}, Turn: &Turn{}, Activity: p.activity}
			start := time.Now()
			for _, msg := range []string{"A", "B", "C", "D"} {
				if err := d.Deliver(context.Background(), tg, msg); err != nil {
					t.Fatalf("%s: %v", msg, err)
				}
			}
			if p.folded != 0 || !slices.Equal(p.submittedNow(), []string{"A", "B", "C", "D"}) {
				t.Fatalf("submitted %q, %d pasted into a running turn", p.submittedNow(), p.folded)
			}
			if took := time.Since(start); took > time.Second {
				t.Fatalf("ends unrecorded %v: D submitted %s after A; want no settle wait", unrecorded, took)
			}
		}
	})
}

// claude writes no end for a turn interrupted before the model answered:
// its record says that turn runs until the next one starts. Where the
// record says so (EndsUnrecorded), an idle, empty input line that lasts the
// settle time ends it — the harness draws every running turn busy — and
// the next message goes in once, after the settle; a busy screen restarts
// the count. Where the record writes every end, its word stands and the
// wait ends at the ready timeout.
func TestAnUnrecordedEndIsTakenFromALastingIdleScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, withMemory := range []bool{false, true} {
			p := newStreamingPane(-1)
			p.unrecorded = true
			d := fastDriver()
			d.ReadyTimeout = time.Minute
			d.Settle = 5 * time.Second
			turn := &Turn{}
			if withMemory {
				// leo's own turn, interrupted: submitted, recorded
				// started, never ended.
				*turn = Turn{SubmittedAt: time.Now(), Recorded: true}
			}
			p.start(-1)
			p.mu.Lock()
			p.busyLooks = 30 // drawn busy for a while first
			p.mu.Unlock()
			tg := Target{Pane: p, Screen: scriptScreen{}, Turn: turn, Activity: p.activity}
			start := time.Now()
			busyUntil := time.Time{}
			tg.Pane = watchBusy{p, &busyUntil}
			if err := d.Deliver(context.Background(), tg, "next"); err != nil {
				t.Fatalf("memory %v: %v", withMemory, err)
			}
			if busyUntil.IsZero() {
				t.Fatal("test bug: the screen was never seen busy")
			}
			if waited := time.Since(busyUntil); waited < d.Settle {
				t.Fatalf("memory %v: pasted %s after the busy screen went, before the %s settle", withMemory, waited, d.Settle)
			}
			if waited := time.Since(start); waited > time.Minute/2 {
				t.Fatalf("memory %v: pasted after %s", withMemory, waited)
			}
			if p.pastes != 1 || !slices.Equal(p.submittedNow(), []string{"next"}) {
				t.Fatalf("memory %v: %d pastes, submitted %q", withMemory, p.pastes, p.submittedNow())
			}
		}
		// A record that writes every end is believed.
		p := newStreamingPane(-1)
		p.start(-1)
		d := fastDriver()
		d.ReadyTimeout = 10 * time.Second
		d.Settle = time.Second
		err := d.Deliver(context.Background(), Target{Pane: p, Screen: scriptScreen{}, Turn: &Turn{}, Activity: p.activity}, "next")
		var f *Failure
		if !errors.As(err, &f) || f.Stage != "ready" || p.pastes != 0 {
			t.Fatalf("err = %v, pastes %d; want a ready failure, nothing pasted", err, p.pastes)
		}
	})
}

// watchBusy notes when the screen last drew busy.
type watchBusy struct {
	*streamingPane
	last *time.Time
}

func (w watchBusy) Capture(ctx context.Context) (string, error) {
	c, err := w.streamingPane.Capture(ctx)
	if strings.HasPrefix(c, "busy") {
		*w.last = time.Now()
	}
	return c, err
}
