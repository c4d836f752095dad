// Package turnend correlates the turn-end signals of agents' TUIs with the
// persistent-task firings waiting for them. A firing's message is its
// prompt, a blank line and a marker line naming the task and run
// (Message); the harness's hook posts each turn's end (api.TurnEndReport)
// to the daemon, whose Hub has the adapter read it and completes the
// waiter of that agent whose message is the turn's input.
//
// The whole message is matched, not just the marker: codex generates a
// thread title in a side turn whose one input quotes the user's message,
// marker and all, and that turn ends (and notifies) too. A report that
// matches no waiter — such side turns, the user's own turns, a firing
// nobody waits for any more — is ignored.
package turnend

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Marker is the line that names a firing: `[leo task <task> run <run-id>]`.
func Marker(task, runID string) string {
	return "[leo task " + task + " run " + runID + "]"
}

// Message is what a firing delivers: the prompt, a blank line, the marker.
func Message(prompt, task, runID string) string {
	return strings.TrimRight(prompt, "\n") + "\n\n" + Marker(task, runID)
}

// markerRE is compiled on first use: a package initialiser of the CLI
// must not allocate (TestStartupInitBudget).
var markerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\[leo task (\S+) run (\S+)\]$`)
})

// FindMarker returns the task and run of the marker on text's last
// non-blank line (a line of its own, surrounding spaces aside).
func FindMarker(text string) (task, runID string, ok bool) {
	text = strings.TrimRight(text, " \t\r\n")
	line := text[strings.LastIndexByte(text, '\n')+1:]
	m := markerRE().FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Result is how the awaited turn ended.
type Result struct {
	harness.TurnEnd
	Harness string
	At      time.Time // when the report came
}

// Waiter waits for the end of one firing's turn.
type Waiter struct {
	hub     *Hub
	agent   string
	message string
	norm    string // message with white space collapsed
	done    chan struct{}
	res     Result
}

// Done is closed when the turn ended (or the waiter was cancelled).
func (w *Waiter) Done() <-chan struct{} { return w.done }

// Result is the turn's end; valid once Done is closed (zero if cancelled).
func (w *Waiter) Result() Result { return w.res }

// Cancel stops waiting (the firing timed out or was dropped).
func (w *Waiter) Cancel() { w.hub.remove(w, nil) }

// Hub holds the waiters of every agent. Safe for concurrent use.
type Hub struct {
	// Observe, when set before the hub is used, sees every report first
	// (tests capture the harnesses' payloads with it).
	Observe func(api.TurnEndReport)

	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	waiters map[string][]*Waiter // by agent
}

// New returns an empty hub; log may be nil.
func New(log *slog.Logger) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{log: log, now: time.Now, waiters: map[string][]*Waiter{}}
}

// Await registers a waiter for the turn whose input is message (built by
// Message) in agent's TUI. Call it before the message is enqueued, so a
// turn that ends at once is not missed.
func (h *Hub) Await(agent, message string) (*Waiter, error) {
	if agent == "" {
		return nil, errors.New("turnend: await: no agent")
	}
	if _, _, ok := FindMarker(message); !ok {
		return nil, fmt.Errorf("turnend: await: the message to %s does not end with a marker line", agent)
	}
	w := &Waiter{hub: h, agent: agent, message: message, norm: normalize(message), done: make(chan struct{})}
	h.mu.Lock()
	h.waiters[agent] = append(h.waiters[agent], w)
	h.mu.Unlock()
	return w, nil
}

// Waiting is how many waiters agent has (for tests and listings).
func (h *Hub) Waiting(agent string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters[agent])
}

// Submit checks a report's harness and hands the report to Report in the
// background: reading the payload can take seconds (claude writes its
// transcript only after the hook ran), and the harness must not wait for
// it. An error of Report is logged.
func (h *Hub) Submit(r api.TurnEndReport) error {
	if _, err := signaler(r.Harness); err != nil {
		return err
	}
	go func() {
		if _, err := h.Report(r); err != nil {
			h.log.Warn("turn-end report not read", "agent", r.Agent, "harness", r.Harness, "err", err)
		}
	}()
	return nil
}

func signaler(name string) (harness.TurnEndSignaler, error) {
	ad, ok := harness.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("turn-end report: harness %q is not registered", name)
	}
	sig, ok := ad.(harness.TurnEndSignaler)
	if !ok {
		return nil, fmt.Errorf("turn-end report: harness %q has no turn-end signal", name)
	}
	return sig, nil
}

// Report takes one turn-end report: the adapter of its harness reads the
// payload, and the waiter of its agent whose message is one of the turn's
// inputs is completed. It reports whether one was; a report that matches
// none is not an error. A harness without a turn-end signal, or a payload
// its adapter cannot read, is.
func (h *Hub) Report(r api.TurnEndReport) (bool, error) {
	if h.Observe != nil {
		h.Observe(r)
	}
	sig, err := signaler(r.Harness)
	if err != nil {
		return false, err
	}
	te, err := sig.ParseTurnEnd(r.Payload)
	if err != nil {
		// What could be read (the inputs) still counts: a transcript that
		// could not be read fails the match, not the report.
		if len(te.Inputs) == 0 {
			return false, fmt.Errorf("turn-end report of agent %q: %w", r.Agent, err)
		}
	}
	var w *Waiter
	h.mu.Lock()
	for _, cand := range h.waiters[r.Agent] {
		if cand.matches(te.Inputs) {
			w = cand
			break
		}
	}
	h.mu.Unlock()
	if w == nil {
		marked := ""
		for _, in := range te.Inputs {
			if task, run, ok := FindMarker(in); ok {
				marked = task + "/" + run
			}
		}
		h.log.Debug("turn end matched no firing", "agent", r.Agent, "harness", r.Harness,
			"session", te.SessionID, "inputs", len(te.Inputs), "marker", marked)
		return false, nil
	}
	res := Result{TurnEnd: te, Harness: r.Harness, At: h.now()}
	if !h.remove(w, &res) {
		return false, nil // cancelled or completed meanwhile
	}
	h.log.Info("turn end of a firing", "agent", r.Agent, "harness", r.Harness, "session", te.SessionID, "failed", te.Failed)
	return true, nil
}

func (w *Waiter) matches(inputs []string) bool {
	for _, in := range inputs {
		if normalize(in) == w.norm {
			return true
		}
	}
	return false
}

// remove takes w out of the hub and closes its Done, with res when not
// nil. It reports whether w was still waiting.
func (h *Hub) remove(w *Waiter, res *Result) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws := h.waiters[w.agent]
	for i, cand := range ws {
		if cand != w {
			continue
		}
		ws = append(ws[:i:i], ws[i+1:]...)
		if len(ws) == 0 {
			delete(h.waiters, w.agent)
		} else {
			h.waiters[w.agent] = ws
		}
		if res != nil {
			w.res = *res
		}
		close(w.done)
		return true
	}
	return false
}

// normalize collapses white space: a TUI may trim, re-wrap or pad what it
// stores of a message (opencode keeps a trailing space).
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
