package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// streamEnv is a world whose fake codex streams every reply the way codex
// 0.171.0 does: a moment of "Working", then the reply growing on a screen
// that shows no busy line — the idle input line and footer, as when idle —
// until the turn's end. Only the rollout (task_started … task_complete)
// says the turn still runs.
func streamEnv(t *testing.T, turn time.Duration) *testEnv {
	return newEnv(t, withEnv(map[string]string{
		"FAKE_TURN_MS":         fmt.Sprint(turn.Milliseconds()),
		"FAKE_CODEX_STREAM_MS": fmt.Sprint((turn - 300*time.Millisecond).Milliseconds()),
	}))
}

// waitStreaming waits until codex's pane shows the reply to msg streaming
// with no busy line.
func (e *testEnv) waitStreaming(m *Manager, name, msg string) {
	e.t.Helper()
	waitFor(e.t, name+" streaming the reply to "+msg, 20*time.Second, func() bool {
		c := e.capture(m, name)
		return strings.Contains(c, "• echo: "+msg[:1]) && !strings.Contains(c, "Working") && strings.Contains(c, "Ask Codex to do anything")
	})
}

// checkOwnTurns fails unless the fake took exactly want, in order, each as
// a turn of its own (none folded into a running turn).
func (e *testEnv) checkOwnTurns(want ...string) {
	e.t.Helper()
	var got []string
	for _, ev := range e.events() {
		if ev.Message == nil || ev.Event != "" {
			continue
		}
		if ev.Folded {
			e.t.Fatalf("%q was folded into the turn that was running (codex merges it; the reply being streamed is lost)", *ev.Message)
		}
		got = append(got, *ev.Message)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Fatalf("turns %q, want %q", got, want)
	}
}

// A, whose reply streams for seconds on a screen that looks idle, then B
// and C sent at once: three turns, in order, each its own, and A's reply
// is drawn whole.
func TestCodexStreamedReplyKeepsMessagesInTheirOwnTurns(t *testing.T) {
	t.Parallel()
	e := streamEnv(t, 3*time.Second)
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "codex", api.StateRunning)
	a, err := m.Send(ctx, "codex", "A streams slowly")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "codex", a.ID)
	e.waitStreaming(m, "codex", "A streams slowly")
	b, err := m.Send(ctx, "codex", "B at once")
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Send(ctx, "codex", "C at once")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, "codex", b.ID)
	waitDelivered(t, m, "codex", c.ID)
	e.checkOwnTurns("A streams slowly", "B at once", "C at once")
	waitFor(t, "A's whole reply on the pane", 10*time.Second, func() bool {
		return strings.Contains(e.capture(m, "codex"), "• echo: A streams slowly")
	})
}

// A daemon restarted while codex streams a reply: the new daemon has no
// memory of the turn, but the rollout on disk says it runs, so the next
// message waits for its end.
func TestCodexTurnRunningAcrossDaemonRestartIsWaitedFor(t *testing.T) {
	t.Parallel()
	e := streamEnv(t, 4*time.Second)
	m1 := e.newManager()
	if err := m1.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan struct{})
	go func() { m1.Run(ctx1); close(done1) }()
	ctx := context.Background()
	if _, err := m1.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m1, "codex", api.StateRunning)
	a, err := m1.Send(ctx, "codex", "A before the restart")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m1, "codex", a.ID)
	stop1()
	<-done1
	m1.Close()

	m2 := e.manager()
	e.waitStreaming(m2, "codex", "A before the restart")
	b, err := m2.Send(ctx, "codex", "B after the restart")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m2, "codex", b.ID)
	e.checkOwnTurns("A before the restart", "B after the restart")
}

// A persistent task's prompt, queued while the agent is in a turn a person
// started in the TUI (no turn leo knows of) whose reply is streaming: it
// waits for that turn's end and gets its own turn.
func TestPersistentPromptWaitsForAStreamingTurn(t *testing.T) {
	t.Parallel()
	e := streamEnv(t, 3*time.Second)
	e.tasks = map[string]taskSpec{"solo": {harness: "codex"}}
	e.writeConfig()
	cfg := e.cfg.Load()
	m := e.manager()
	port := TaskAgents{M: m}
	ctx := context.Background()
	own, err := cfg.ResolveTask("solo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := port.Ensure(ctx, "solo", own); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "solo", api.StateRunning)
	waitFor(t, "solo's input line", 20*time.Second, func() bool {
		return strings.Contains(e.capture(m, "solo"), "Ask Codex to do anything")
	})
	// A person types a message and presses Enter.
	pane := e.paneID("solo")
	if err := e.tmux.Paste(ctx, pane, "typed by a person"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the typed text in the input", 10*time.Second, func() bool {
		return strings.Contains(e.capture(m, "solo"), "› typed by a person")
	})
	time.Sleep(200 * time.Millisecond) // past codex's paste-burst window, as a person's Enter is
	if err := e.tmux.SendKeys(ctx, pane, "Enter"); err != nil {
		t.Fatal(err)
	}
	e.waitStreaming(m, "solo", "typed by a person")
	prompt := "the prompt\n\n[leo task solo run 20260101T070000.000Z]"
	id, err := port.Enqueue(ctx, "solo", prompt)
	if err != nil {
		t.Fatal(err)
	}
	done, errf, ok := port.Delivery("solo", id)
	if !ok {
		t.Fatalf("Delivery does not know message %s", id)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no outcome within 30s")
	}
	if err := errf(); err != nil {
		t.Fatal(err)
	}
	e.checkOwnTurns("typed by a person", prompt)
}
