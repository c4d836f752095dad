package client

import (
	"context"
	"testing"
	"time"
)

// A waited run is bounded by the caller's deadline, however far away (a
// task's timeout may be hours), not by the fixed bounds of other calls.
func TestRunBoundFollowsTheCallersDeadline(t *testing.T) {
	if got := runBound(context.Background(), false); got != LaunchTimeout {
		t.Errorf("start without wait: %v, want LaunchTimeout", got)
	}
	if got := runBound(context.Background(), true); got != RunWaitTimeout {
		t.Errorf("wait without a deadline: %v, want RunWaitTimeout", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	if got := runBound(ctx, true); got <= 2*time.Hour || got > 3*time.Hour {
		t.Errorf("wait with a 3h deadline: %v, want about 3h", got)
	}
	if got := runBound(ctx, false); got != LaunchTimeout {
		t.Errorf("start with a 3h deadline: %v, want LaunchTimeout", got)
	}
}
