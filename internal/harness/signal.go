package harness

import "time"

// SignalReader is implemented by adapters whose harness tells leo's hook
// more than a turn's end: a turn starting, a prompt waiting for a person,
// a prompt answered, a limit (claude's hooks, opencode's plugin events).
// The hook is the one TurnEndSignal set up; each payload it posts is read
// here first. Attention comes from these signals first and from the screen
// (Screen.Prompt) second, never from a timer.
type SignalReader interface {
	// ParseSignal reads one payload of leo's hook. A payload the adapter
	// knows but that changes nothing is SignalNone; one that is not the
	// harness's is an error.
	ParseSignal(payload []byte) (Signal, error)
}

// SignalKind is what a hook payload says happened.
type SignalKind int

const (
	// SignalNone: nothing attention cares about.
	SignalNone SignalKind = iota
	// SignalTurnStarted: the harness took input as a turn (Text: that
	// input, when the payload has it).
	SignalTurnStarted
	// SignalWorking: the turn goes on (a tool ran, a prompt was answered).
	SignalWorking
	// SignalNeedsInput: the harness waits for a person (Prompt: what it
	// asks, as far as the payload says; Text: its words).
	SignalNeedsInput
	// SignalTurnEnded: the turn ended (Text: the reply).
	SignalTurnEnded
	// SignalTurnFailed: the turn ended in an error (Text: its words).
	SignalTurnFailed
	// SignalLimited: a usage or rate limit stopped the turn (Text: its
	// words; ResetsAt when the harness says).
	SignalLimited
)

// Signal is one hook payload, read.
type Signal struct {
	Kind      SignalKind
	SessionID string
	Text      string
	Prompt    *Prompt
	ResetsAt  time.Time
	// HarnessWaits, with SignalLimited: the harness itself waits out the
	// limit and goes on by itself (opencode's retry, the newest claude's
	// queue that waits for the reset), so leo types nothing into it.
	HarnessWaits bool
}

// EndsTurn reports whether the signal is a turn's end (persistent firings
// wait on those: the turn-end hub reads the same payload).
func (s Signal) EndsTurn() bool {
	return s.Kind == SignalTurnEnded || s.Kind == SignalTurnFailed || s.Kind == SignalLimited
}

// Prompt is what a harness waiting for a person asks, in its words: from
// the screen (Screen.Prompt) or a hook payload.
type Prompt struct {
	// Kind is "permission", "question" or "dialog" (api.Prompt* values).
	Kind string
	// Text is the question: the tool and the command or file it asks about.
	Text string
	// Choices are the answers offered, as the harness words them.
	Choices []string
}

// ReadSignal is what a hook payload says: the adapter's SignalReader when
// it has one, else its turn end (every TurnEndSignaler's payload is one).
// A SignalReader must answer at once (the reply is in the payload); a
// ParseTurnEnd may take seconds (claude reads its transcript).
func ReadSignal(h Harness, payload []byte) (Signal, error) {
	if r, ok := h.(SignalReader); ok {
		return r.ParseSignal(payload)
	}
	sig, ok := h.(TurnEndSignaler)
	if !ok {
		return Signal{}, nil
	}
	te, err := sig.ParseTurnEnd(payload)
	if err != nil && len(te.Inputs) == 0 {
		return Signal{}, err
	}
	return TurnEndSignal(te), nil
}

// TurnEndSignal is the signal of a turn's end.
func TurnEndSignal(te TurnEnd) Signal {
	s := Signal{Kind: SignalTurnEnded, SessionID: te.SessionID, Text: te.Reply}
	if te.Failed {
		s.Kind, s.Text = SignalTurnFailed, te.Error
	}
	return s
}
