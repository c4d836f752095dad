package harness

import "time"

// PasteTiming is implemented by adapters whose TUI needs a pause between a
// bracketed paste and the Enter that submits it (codex treats an Enter that
// arrives within ~120 ms of a paste burst as a newline). Delivery waits
// EnterDelay after the pasted text shows in the input; zero means Enter may
// follow the confirmed landing at once. Adapters that don't implement it get
// a small default chosen by the caller.
type PasteTiming interface {
	EnterDelay() time.Duration
}
