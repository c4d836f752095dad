package harness

import "time"

// EventStreamer is implemented by adapters whose headless run (Headless)
// prints a JSON event stream on stdout, one event per line. The task
// runner feeds every line of a run's stdout to a fresh EventStream and
// reads the outcome from it; what the events mean is the adapter's
// knowledge alone.
type EventStreamer interface {
	NewEventStream() EventStream
}

// EventStream reads one headless run's stdout. It is used by one goroutine.
type EventStream interface {
	// Line takes one line of stdout without its newline. It may be any
	// bytes: a non-JSON line, an unknown event type or unknown fields are
	// ignored, and a line of any length is accepted (the caller may cut a
	// huge line; a cut line is simply not JSON).
	Line(line []byte)
	// Result is what the stream said, once stdout reached EOF.
	Result() RunResult
}

// RunResult is the outcome of a headless run as its event stream states
// it. The runner combines it with the exit status:
//
//   - Limited: a usage or rate limit stopped the run (outcome limited,
//     reason usage_limit), whatever else the stream said;
//   - Error != "": the run failed (reason harness_error), whatever the
//     exit code;
//   - else a non-zero exit: failed (exit_status);
//   - else !Succeeded: failed (harness_error, "the stream ended without a
//     result");
//   - else succeeded.
type RunResult struct {
	// SessionID is the conversation the run used (claude session id,
	// codex thread id, opencode session id), "" if the stream named none.
	SessionID string
	// Succeeded: the stream stated that the turn completed.
	Succeeded bool
	// Error is the failure the stream stated, in the harness's words.
	Error string
	// Limited: the run ended on a usage or rate limit the harness did not
	// ride out itself (Error says it in the harness's words). ResetsAt is
	// when the limit resets as the harness stated it, zero when it did
	// not say.
	Limited  bool
	ResetsAt time.Time
	// Warnings are errors the harness reported and recovered from (codex's
	// "Reconnecting... 1/5"); they do not fail a run.
	Warnings []string
	// Reply is the final assistant text.
	Reply string
	// Usage and CostUSD are what the harness reported, nil when nothing.
	Usage   *Usage
	CostUSD *float64
}

// Usage is what a harness reports about tokens. CacheReadTokens are
// included in InputTokens or not as the harness counts them.
type Usage struct {
	InputTokens      int64 `json:"input_tokens,omitempty"`
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}
