package agent

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// The harnesses a test picks by what their adapters do.

// discoversIDs: the harness picks its conversation id and leo finds it
// after the first turn (no pinned --session-id).
func discoversIDs(h harness.Harness) bool { return !h.Sessions().PinsID() }

// pinsIDs: leo chooses the id before the first launch.
func pinsIDs(h harness.Harness) bool { return h.Sessions().PinsID() }

// preparesWorkspace: the adapter sets the workspace up before the first
// start (claude and codex trust it, so no trust dialog shows).
func preparesWorkspace(h harness.Harness) bool {
	_, ok := h.(harness.Preparer)
	return ok
}

// firstHarness is the first harness (by name) whose adapter does, failing
// t when none does.
func firstHarness(t testing.TB, does func(harness.Harness) bool) string {
	t.Helper()
	hs := testutil.HarnessesWhere(does)
	if len(hs) == 0 {
		t.Fatalf("no registered harness does it (registered: %v)", harness.Names())
	}
	return hs[0]
}
