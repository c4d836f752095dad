package turnend

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
)

// codexNotify is a notify payload in the shape codex 0.171.0 sends.
func codexNotify(thread string, inputs []string, reply string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "agent-turn-complete", "thread-id": thread, "turn-id": "t", "cwd": "/w",
		"client": "codex-tui", "input-messages": inputs, "last-assistant-message": reply,
	})
	return b
}

// titleInput is codex's title-generation side turn: it quotes the message.
func titleInput(msg string) string {
	return "Generate a concise, single-line task title…\n\nUser prompt:\n" + msg
}

func done(w *Waiter) bool {
	select {
	case <-w.Done():
		return true
	default:
		return false
	}
}

func TestMarker(t *testing.T) {
	m := Message("Triage the inbox.\n", "inbox", "20260101T070000.000Z")
	if m != "Triage the inbox.\n\n[leo task inbox run 20260101T070000.000Z]" {
		t.Fatalf("message %q", m)
	}
	for text, want := range map[string]string{
		m:                                "inbox/20260101T070000.000Z",
		m + "  \n\n":                     "inbox/20260101T070000.000Z",
		"x\n  " + Marker("a", "b") + " ": "a/b",
		Marker("a", "b") + "\nmore":      "",
		"see " + Marker("a", "b"):        "",
		"[leo task a b run c]":           "",
		"":                               "",
		"\x1b[2J":                        "",
	} {
		task, run, ok := FindMarker(text)
		got := ""
		if ok {
			got = task + "/" + run
		}
		if got != want {
			t.Errorf("FindMarker(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestReportCompletesTheFiringsWaiter(t *testing.T) {
	h := New(nil)
	msg := Message("Do the thing", "t", "R1")
	other := Message("Do the thing", "t", "R0") // an earlier firing of the same prompt
	w, err := h.Await("a1", msg)
	if err != nil {
		t.Fatal(err)
	}
	w0, _ := h.Await("a1", other)

	// codex's title side thread ends first: it quotes the message, marker
	// and all, and must not complete the firing.
	ok, err := h.Report(api.TurnEndReport{Agent: "a1", Harness: "codex", Payload: codexNotify("side", []string{titleInput(msg)}, "Side reply")})
	if err != nil || ok || done(w) {
		t.Fatalf("side thread: matched=%v err=%v done=%v", ok, err, done(w))
	}
	// The user's own turn, another agent's turn with the same message:
	// nothing either.
	for _, r := range []api.TurnEndReport{
		{Agent: "a1", Harness: "codex", Payload: codexNotify("main", []string{"hello"}, "hi")},
		{Agent: "a2", Harness: "codex", Payload: codexNotify("main", []string{msg}, "ACK")},
	} {
		if ok, err := h.Report(r); err != nil || ok || done(w) {
			t.Fatalf("%s: matched=%v err=%v", r.Payload, ok, err)
		}
	}
	// The turn itself, as the TUI re-wrapped it.
	wrapped := strings.ReplaceAll(msg, "\n\n", "\n \n") + " "
	ok, err = h.Report(api.TurnEndReport{Agent: "a1", Harness: "codex", Payload: codexNotify("main", []string{"queued before", wrapped}, "ACK done")})
	if err != nil || !ok || !done(w) {
		t.Fatalf("the turn: matched=%v err=%v done=%v", ok, err, done(w))
	}
	res := w.Result()
	if res.Reply != "ACK done" || res.SessionID != "main" || res.Harness != "codex" || res.Failed || res.At.IsZero() {
		t.Fatalf("result %+v", res)
	}
	if done(w0) || h.Waiting("a1") != 1 {
		t.Fatalf("the other firing's waiter: done=%v waiting=%d", done(w0), h.Waiting("a1"))
	}
	// A second report of the same turn (opencode's idle after its error)
	// finds no waiter.
	if ok, _ := h.Report(api.TurnEndReport{Agent: "a1", Harness: "codex", Payload: codexNotify("main", []string{msg}, "again")}); ok {
		t.Fatal("a turn completed twice")
	}
	w0.Cancel()
	if !done(w0) || h.Waiting("a1") != 0 || w0.Result().Reply != "" {
		t.Fatalf("cancelled waiter: done=%v waiting=%d", done(w0), h.Waiting("a1"))
	}
	w0.Cancel() // twice is fine
}

func TestReportFailedTurn(t *testing.T) {
	h := New(nil)
	msg := Message("Fail please", "t", "R")
	w, _ := h.Await("oc", msg)
	payload, _ := json.Marshal(map[string]any{
		"type":       "session.error",
		"properties": map[string]any{"sessionID": "ses_1", "error": map[string]any{"name": "APIError", "data": map[string]any{"message": "refused"}}},
		"messages":   []any{map[string]any{"info": map[string]any{"role": "user"}, "parts": []any{map[string]any{"type": "text", "text": msg + " "}}}},
	})
	if ok, err := h.Report(api.TurnEndReport{Agent: "oc", Harness: "opencode", Payload: payload}); !ok || err != nil {
		t.Fatalf("matched=%v err=%v", ok, err)
	}
	if r := w.Result(); !r.Failed || r.Error != "APIError: refused" || r.SessionID != "ses_1" {
		t.Fatalf("result %+v", r)
	}
}

func TestReportErrorsAndAwaitRules(t *testing.T) {
	h := New(nil)
	for _, r := range []api.TurnEndReport{
		{Agent: "a", Harness: "nope", Payload: []byte("{}")},
		{Agent: "a", Harness: "codex", Payload: []byte("not json")},
		{Agent: "a", Harness: "codex", Payload: make([]byte, 1<<20)},
	} {
		if _, err := h.Report(r); err == nil {
			t.Errorf("%s: no error", r.Harness)
		}
	}
	if _, err := h.Await("", Message("p", "t", "r")); err == nil {
		t.Error("await without an agent")
	}
	if _, err := h.Await("a", "no marker here"); err == nil {
		t.Error("await of a message without a marker")
	}
}

// Reports and cancels from many goroutines complete each waiter once.
func TestConcurrentReports(t *testing.T) {
	h := New(nil)
	const n = 50
	ws := make([]*Waiter, n)
	for i := range ws {
		ws[i], _ = h.Await("a", Message("p", "t", fmt.Sprint(i)))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	matched := 0
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%5 == 0 && j == 0 {
					ws[i].Cancel()
				}
				ok, _ := h.Report(api.TurnEndReport{Agent: "a", Harness: "codex", Payload: codexNotify("x", []string{Message("p", "t", fmt.Sprint(i))}, "r")})
				if ok {
					mu.Lock()
					matched++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for i, w := range ws {
		if !done(w) {
			t.Fatalf("waiter %d not done", i)
		}
	}
	if matched < n-n/5 || matched > n || h.Waiting("a") != 0 {
		t.Fatalf("matched %d of %d, %d left", matched, n, h.Waiting("a"))
	}
}
