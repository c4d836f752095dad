package claude

import "testing"

// The texts claude 2.1.332's code shows when it waits out a limit itself
// (its lower-priority mode, and the notice that new messages wait for the
// reset) are read as claude waiting; its plain limit texts are not.
func TestWaitsOutLimitReadsClaudesOwnWait(t *testing.T) {
	waits := []string{
		"❯ \n  Lower-priority mode is no longer available · it has ended; new messages wait for your usage limit to reset\n",
		"  No room for lower-priority work for a while · lower-priority mode stopped; new messages wait for your usage limit to reset · /low-priority again after 5m\n",
		"  Lower priority until 3pm · 40% allowance left · /low-priority to stop\n",
		"  Working at lower priority · waiting for capacity\n",
	}
	for _, s := range waits {
		if !(Claude{}).WaitsOutLimit(s) {
			t.Errorf("not read as claude waiting: %q", s)
		}
	}
	not := []string{
		"  ⎿  You've hit your session limit · resets 3pm (Europe/Berlin)\n",
		"  ⎿  API Error: Request rejected (429) · rate limited\n",
		"  Lower-priority mode ended · you have reached your weekly usage limit\n",
	}
	for _, s := range not {
		if (Claude{}).WaitsOutLimit(s) {
			t.Errorf("read as claude waiting: %q", s)
		}
	}
}
