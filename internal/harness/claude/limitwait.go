package claude

import (
	"regexp"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.LimitWaiter = Claude{}

// claude 2.1.332 can wait out a usage limit itself: its "lower-priority
// mode" keeps working when the limit is hit ("Lower priority until 3pm ·
// 40% allowance left · /low-priority to stop", and "Working at lower
// priority · waiting for capacity" while it waits), and when that mode
// ends without capacity it says it holds what is typed until the reset
// ("… · new messages wait for your usage limit to reset"). These are the
// texts of that version's code (docs/harness-behaviour/claude.md,
// "Limits"); 2.1.197 has none of them.
var waitsOutLimitText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`new messages wait for your usage limit to reset|` +
		`Lower priority until .{1,40}/low-priority to stop|` +
		`Working at lower priority · waiting for capacity`)
})

// WaitsOutLimit is harness.LimitWaiter: the screen shows claude waiting
// for the reset (or for capacity) by itself.
func (Claude) WaitsOutLimit(capture string) bool {
	return waitsOutLimitText().MatchString(capture)
}
