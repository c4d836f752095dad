package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// savedQueue is the agent's durable queue as recorded on disk.
func (e *testEnv) savedQueue(name string) []Queued {
	e.t.Helper()
	for _, r := range e.readRecords() {
		if r.Name == name {
			return r.Queue
		}
	}
	e.t.Fatalf("no record of %s on disk", name)
	return nil
}

func queuedIDs(q []Queued) []string {
	out := make([]string, len(q))
	for i, x := range q {
		out[i] = x.ID
	}
	return out
}

// editRecord rewrites the agent's record on disk; no manager may run.
func (e *testEnv) editRecord(name string, f func(r *Record)) {
	e.t.Helper()
	recs := e.readRecords()
	for _, r := range recs {
		if r.Name == name {
			f(r)
		}
	}
	if err := NewStore(e.home.AgentsPath()).Save(func() []*Record { return recs }); err != nil {
		e.t.Fatal(err)
	}
}

// awaitOutcome waits on message id's Done channel (found through Await)
// and returns its outcome.
func awaitOutcome(t testing.TB, m *Manager, name, id string) error {
	t.Helper()
	it, err := m.Await(name, id)
	if err != nil {
		t.Fatalf("Await %s %s: %v", name, id, err)
	}
	select {
	case <-it.Done():
		return it.Err()
	case <-time.After(30 * time.Second):
		t.Fatalf("no outcome of message %s to %s within 30s", id, name)
		return nil
	}
}

// typeDraft puts a person's text in the agent's input line: deliveries
// wait for it (up to the ready timeout), so messages stay queued.
func (e *testEnv) typeDraft(name, h, draft string) {
	e.t.Helper()
	testutil.NewRawTmux(e.tmux).Run(e.t, "send-keys", "-t", e.paneID(name), "-l", draft)
	waitFor(e.t, "the draft in the input line", 10*time.Second, func() bool { return e.screenOf(name, h).Input == draft })
}

func (e *testEnv) clearDraft(name, h string) {
	e.t.Helper()
	testutil.NewRawTmux(e.tmux).Run(e.t, "send-keys", "-t", e.paneID(name), "C-u")
	waitFor(e.t, "the input line empty", 10*time.Second, func() bool {
		s := e.screenOf(name, h)
		return s.State == harness.ScreenReady && s.Input == ""
	})
}

// screenOf classifies agent name's pane with harness h's reader.
func (e *testEnv) screenOf(name, h string) harness.Screen {
	e.t.Helper()
	text, err := e.tmux.Capture(context.Background(), e.paneID(name))
	if err != nil {
		e.t.Fatal(err)
	}
	return screenReader(e.t, h).Classify(text)
}

// waitLaunches waits until harness h was launched n times and returns the
// launches (a fake logs its argv once it runs).
func (e *testEnv) waitLaunches(h string, n int) [][]string {
	e.t.Helper()
	var l [][]string
	waitFor(e.t, fmt.Sprintf("%d launches of %s", n, h), 20*time.Second, func() bool {
		l = e.launches(h)
		return len(l) >= n
	})
	return l
}

// Messages accepted by a daemon that goes away before delivering them are on
// disk when Enqueue returns, and the next daemon delivers each once, in the
// order they were sent, under the ids the sender was given.
func TestQueuedMessagesSurviveRestartInOrderOnce(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withReadyTimeout(time.Minute))
			ctx := context.Background()
			m1 := e.manager()
			if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			e.waitState(m1, h, api.StateRunning)
			e.typeDraft(h, h, "a draft")

			texts := []string{"first " + h, "second\nof two lines", "third"}
			var ids []string
			for _, text := range texts {
				res, err := m1.Send(ctx, h, text)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.ID)
				// On disk before Send returned: no waiting.
				if got := queuedIDs(e.savedQueue(h)); fmt.Sprint(got) != fmt.Sprint(ids) {
					t.Fatalf("saved queue %v right after send, want %v", got, ids)
				}
			}
			before, err := os.ReadFile(e.home.AgentsPath())
			if err != nil {
				t.Fatal(err)
			}
			// Close, like SIGKILL, leaves the file as it was: the messages
			// it cancels in memory stay saved for the next daemon.
			m1.Close()
			after, err := os.ReadFile(e.home.AgentsPath())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("Close changed agents.json:\nbefore %s\nafter %s", before, after)
			}
			if got := e.submitted(); len(got) != 0 {
				t.Fatalf("harness got %q before the restart", got)
			}
			e.clearDraft(h, h)

			m2 := e.manager()
			for i, id := range ids {
				if err := awaitOutcome(t, m2, h, id); err != nil {
					t.Fatalf("message %d (%s) after the restart: %v", i, id, err)
				}
			}
			if got := e.submitted(); fmt.Sprint(got) != fmt.Sprint(texts) {
				t.Fatalf("harness got %q, want each once in order %q", got, texts)
			}
			waitFor(t, "saved queue empty once delivered", 10*time.Second, func() bool {
				return len(e.savedQueue(h)) == 0 && e.inFlight(h) == nil
			})
		})
	}
}

// A daemon gone with one message pasted but not submitted and more queued
// behind it: the next one finishes the pasted one first (never pasting it
// again), then delivers the rest in order. The paste record and the saved
// queue never hold the same message.
func TestRestoreFinishesInFlightThenSavedQueue(t *testing.T) {
	for _, h := range []string{"claude", "codex"} { // see TestRestoreFinishesMessageCutBetweenPasteAndEnter for opencode
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withPaneWidth(100))
			e.landTimeout = time.Minute
			ctx := context.Background()
			m1 := e.manager()
			if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
				t.Fatal(err)
			}
			e.waitState(m1, h, api.StateRunning)
			cut := "cut message " + strings.Repeat("x", 150)
			texts := []string{cut, "behind it", "and last"}
			var ids []string
			for _, text := range texts {
				res, err := m1.Send(ctx, h, text)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.ID)
			}
			waitFor(t, "the first message in flight and pasted, the others saved behind it", 20*time.Second, func() bool {
				f := e.inFlight(h)
				return f != nil && f.ID == ids[0] && strings.HasPrefix(e.screen(h).Input, "cut message") &&
					fmt.Sprint(queuedIDs(e.savedQueue(h))) == fmt.Sprint(ids[1:])
			})
			m1.Close()
			testutil.NewRawTmux(e.tmux).Run(t, "resize-window", "-t", "="+TmuxSession(h), "-x", "200", "-y", "50")
			reader := screenReader(t, h)
			waitFor(t, "the cut paste showing whole", 20*time.Second, func() bool { return reader.Landed(e.screen(h), cut) })

			e.landTimeout = 0
			m2 := e.manager()
			for i, id := range ids {
				if err := awaitOutcome(t, m2, h, id); err != nil {
					t.Fatalf("message %d after the restart: %v", i, err)
				}
			}
			if got := e.submitted(); fmt.Sprint(got) != fmt.Sprint(texts) {
				t.Fatalf("harness got %q, want each once in order %q", got, texts)
			}
		})
	}
}

// Messages waiting for an agent a person stops fail with the reason and
// leave the disk; saved messages of an agent that is stopped when the next
// daemon starts fail too, never wait for a TUI that is not coming back.
func TestStopFailsWaitingMessagesAndTheirSavedCopies(t *testing.T) {
	h := "codex"
	e := newEnv(t, withReadyTimeout(time.Minute))
	ctx := context.Background()
	m1 := e.manager()
	if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m1, h, api.StateRunning)
	e.typeDraft(h, h, "a draft")
	var ids []string
	for _, text := range []string{"one", "two"} {
		res, err := m1.Send(ctx, h, text)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	if _, err := m1.Stop(ctx, h); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		err := awaitOutcome(t, m1, h, id)
		if err == nil || !errors.Is(err, delivery.ErrCancelled) {
			t.Fatalf("message %s to a stopped agent: %v, want cancelled", id, err)
		}
	}
	if q := e.savedQueue(h); len(q) != 0 {
		t.Fatalf("saved queue %v after the stop, want empty", q)
	}
	m1.Close()

	// What a daemon killed between accepting a message and a stop's
	// write would leave (or a hand edit): a stopped agent with saved
	// messages.
	e.editRecord(h, func(r *Record) {
		r.Queue = []Queued{{ID: "saved-1", Text: "for a stopped agent", At: time.Now()}}
	})
	m2 := e.manager()
	err := awaitOutcome(t, m2, h, "saved-1")
	if err == nil || !strings.Contains(err.Error(), "the agent was stopped") {
		t.Fatalf("saved message of a stopped agent: %v, want failed because the agent was stopped", err)
	}
	d := waitOutcome(t, m2, h, "saved-1")
	if d.Status != "failed" {
		t.Fatalf("listing shows %+v, want failed", d)
	}
	if got := mustGet(t, m2, h).State; got != api.StateStopped {
		t.Fatalf("state %s: a saved message must not start an agent a person stopped", got)
	}
	waitFor(t, "the failed message off the disk", 10*time.Second, func() bool { return len(e.savedQueue(h)) == 0 })
	if got := e.submitted(); len(got) != 0 {
		t.Fatalf("harness got %q", got)
	}
}

// Saved messages of an agent the idle sweep parked wake it after a restart,
// as a message would have in the daemon that saved them.
func TestSavedMessagesWakeAParkedAgentAfterRestart(t *testing.T) {
	h := "claude"
	e := newEnv(t)
	ctx := context.Background()
	m1 := e.manager()
	id := spawnWithSession(t, e, m1, h)
	if _, err := m1.Stop(ctx, h); err != nil {
		t.Fatal(err)
	}
	m1.Close()
	e.editRecord(h, func(r *Record) {
		r.WakeOnMessage = true
		r.Queue = []Queued{{ID: "saved-1", Text: "wake up", At: time.Now()}}
	})
	m2 := e.manager()
	if err := awaitOutcome(t, m2, h, "saved-1"); err != nil {
		t.Fatalf("saved message to a parked agent: %v", err)
	}
	l := e.waitLaunches(h, 2)
	if len(l) != 2 || !testutil.HasSeq(l[1], resumeArgs(h, id)) {
		t.Fatalf("launches %q: the wake should resume %s", l, id)
	}
	if got := e.submitted(); len(got) != 1 || got[0] != "wake up" {
		t.Fatalf("harness got %q", got)
	}
}

// A saved queue this leo would never have written (a hand edit) is not
// typed into a terminal: each entry that is not a message leo sends fails
// with the reason; the good ones are delivered.
func TestSavedMessageNotUnderstoodFailsWithReason(t *testing.T) {
	h := "codex"
	e := newEnv(t)
	ctx := context.Background()
	m1 := e.manager()
	if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m1, h, api.StateRunning)
	m1.Close()
	e.editRecord(h, func(r *Record) {
		r.Queue = []Queued{
			{ID: "esc", Text: "clear\x1b[2J the screen"},
			{ID: "", Text: "no id"},
			{ID: "ok", Text: "a fine message"},
			{ID: "ok", Text: "a fine message"},
		}
	})
	m2 := e.manager()
	err := awaitOutcome(t, m2, h, "esc")
	if err == nil || !strings.Contains(err.Error(), "control character ESC") {
		t.Fatalf("saved message with ESC: %v, want failed naming the control character", err)
	}
	if err := awaitOutcome(t, m2, h, "ok"); err != nil {
		t.Fatal(err)
	}
	if got := e.submitted(); len(got) != 1 || got[0] != "a fine message" {
		t.Fatalf("harness got %q, want only the fine message, once", got)
	}
}

// Memory changes only after the disk agrees: a message that cannot be
// written is refused, with the reason, and never delivered.
func TestMessageRefusedWhenItCannotBeSaved(t *testing.T) {
	h := "codex"
	e := newEnv(t)
	var refuse atomic.Bool
	e.tuneOpts = func(o *Options) {
		o.SaveGuard = func() error {
			if refuse.Load() {
				return errors.New("disk full (test)")
			}
			return nil
		}
	}
	ctx := context.Background()
	m := e.manager()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	refuse.Store(true)
	_, err := m.Send(ctx, h, "not saved")
	if err == nil || !strings.Contains(err.Error(), "message not accepted") || !strings.Contains(err.Error(), "disk full (test)") {
		t.Fatalf("send with the disk refusing: %v, want refused saying why", err)
	}
	if a := mustGet(t, m, h); a.Queued != 0 {
		t.Fatalf("queued %d after a refused send", a.Queued)
	}
	refuse.Store(false)
	res, err := m.Send(ctx, h, "saved")
	if err != nil {
		t.Fatal(err)
	}
	if err := awaitOutcome(t, m, h, res.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.submitted(); len(got) != 1 || got[0] != "saved" {
		t.Fatalf("harness got %q, want only the saved message", got)
	}
}
