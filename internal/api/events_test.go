package api

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// exampleEvents is one event of every type, as the daemon publishes it:
// the shapes docs/api.md documents, pinned by testdata/events.golden.
func exampleEvents() []Event {
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	since := at.Add(-time.Minute)
	resets := at.Add(3 * time.Hour)
	seq := uint64(1764676800000000)
	next := func(e Event) Event { seq++; e.Seq, e.At = seq, at; return e }
	return []Event{
		next(Event{Type: EventDaemonStarting, Reason: "leo 1.5.0, pid 4242"}),
		next(Event{Type: EventConfigReloaded, State: "ok", Changed: []string{"templates.coder", "tasks.nightly"}, Reason: "leo.yaml reloaded: templates.coder changed, tasks.nightly added"}),
		next(Event{Type: EventConfigReloaded, State: "error", Reason: "reload refused, the running config is kept: leo.yaml is invalid:\nleo.yaml:3:5: templates.coder.harness: unknown harness \"clod\""}),
		next(Event{Type: EventProblem, Reason: "tmux server does not answer"}),
		next(Event{Type: EventAgentState, Agent: "coder", State: "running"}),
		next(Event{Type: EventAgentExited, Agent: "coder", Failures: 3, Reason: "exited with status 1 after 2s; restarting in 4s"}),
		next(Event{Type: EventAgentResumed, Agent: "coder", Reason: "the limit's reset came"}),
		next(Event{Type: EventMessageQueued, Agent: "coder", MessageID: "m-1", FirstLine: "fix the build"}),
		next(Event{Type: EventMessageDelivered, Agent: "coder", MessageID: "m-1", FirstLine: "fix the build"}),
		next(Event{Type: EventMessageFailed, Agent: "coder", MessageID: "m-2", FirstLine: "and then", Reason: "ready: the TUI exited (not back after 1m0s)"}),
		next(Event{Type: EventTurnStarted, Agent: "coder", MessageID: "m-1", FirstLine: "fix the build"}),
		next(Event{Type: EventAgentAttention, Agent: "coder", Attention: &Attention{State: AttentionWorking, Since: since, Detail: "fix the build", MessageID: "m-1"}}),
		next(Event{Type: EventAgentAttention, Agent: "coder", Attention: &Attention{State: AttentionNeedsInput, Since: since, Detail: "Bash command touch x Do you want to proceed?", MessageID: "m-1",
			Prompt: &Prompt{ID: PromptID(PromptPermission, "Bash command\n  touch x\nDo you want to proceed?", []string{"Yes", "No"}), Kind: PromptPermission, Text: "Bash command\n  touch x\nDo you want to proceed?", Choices: []string{"Yes", "No"}}}}),
		next(Event{Type: EventAgentAttention, Agent: "coder", Attention: &Attention{State: AttentionLimited, Since: since, Detail: "usage limit reached", ResetsAt: &resets}}),
		next(Event{Type: EventTurnEnded, Agent: "coder", MessageID: "m-1", State: "ok", FirstLine: "The build is green."}),
		next(Event{Type: EventTurnEnded, Agent: "coder", State: "error", Reason: "API Error: 500"}),
		next(Event{Type: EventTaskRunStarted, Task: "nightly", Run: "20261202T120000.000Z", Reason: "schedule"}),
		next(Event{Type: EventTaskRunEnded, Task: "nightly", Run: "20261202T120000.000Z", State: "succeeded"}),
		{Seq: 1764676800000000, At: at, Type: EventStreamBehind, Missed: 12, Reason: "events older than the daemon keeps (or from before it restarted) are gone"},
		next(Event{Type: EventStreamDropped, Reason: "this reader fell too far behind the daemon's events and was dropped; reconnect with Last-Event-ID to catch up"}),
		next(Event{Type: EventDaemonStopping, Reason: "leo 1.5.0, pid 4242"}),
		next(Event{Type: EventPromptAnswered, Agent: "coder", PromptID: "p-3fb9fd33ccef", Answer: AnswerApprove, By: SenderWeb, FirstLine: "Yes"}),
	}
}

func TestEventShapesAreTheGolden(t *testing.T) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, e := range exampleEvents() {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
		seen[e.Type] = true
	}
	for _, typ := range EventTypes {
		if !seen[typ] {
			t.Errorf("event type %s has no example", typ)
		}
	}
	path := filepath.Join("testdata", "events.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("event JSON changed (a contract: docs/api.md); got\n%s\nwant\n%s", b.String(), want)
	}
}

// Every event type is in docs/api.md.
func TestDocsListEveryEventType(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range EventTypes {
		if !strings.Contains(string(doc), "`"+typ+"`") {
			t.Errorf("docs/api.md does not list event type %s", typ)
		}
	}
}

func TestPromptIDNamesThePrompt(t *testing.T) {
	a := PromptID(PromptPermission, "touch a", []string{"Yes", "No"})
	if a != PromptID(PromptPermission, "touch a", []string{"Yes", "No"}) {
		t.Fatal("the same prompt got two ids")
	}
	for _, other := range []string{
		PromptID(PromptPermission, "touch b", []string{"Yes", "No"}),
		PromptID(PromptQuestion, "touch a", []string{"Yes", "No"}),
		PromptID(PromptPermission, "touch a", []string{"Yes", "No", "Always"}),
		PromptID(PromptPermission, "touch a", []string{"YesNo"}),
	} {
		if other == a {
			t.Fatalf("another prompt got the same id %s", a)
		}
	}
}
