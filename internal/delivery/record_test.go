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
	return harness.TurnActivity{Found: true, Running: p.running, Ended: p.ended}, nil
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
