package claude

import (
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

var trust = harness.Screen{State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}}

func TestScreenFixtures(t *testing.T) {
	harnesstest.ScreenFixtures(t, Claude{}.Screen(), harnesstest.ScreensDir("claude"), map[string]harness.Screen{
		"starting":                {State: harness.ScreenStarting},
		"starting-banner":         {State: harness.ScreenStarting},
		"ready-empty":             {State: harness.ScreenReady},
		"ready-typed":             {State: harness.ScreenReady, Input: "fix the failing test"},
		"ready-after-turn-pasted": {State: harness.ScreenReady, Input: "[Pasted text #2 +2 lines]"},
		"busy-pasted":             {State: harness.ScreenBusy, Input: "[Pasted text #2 +2 lines]"},
		"ready-after-turn":        {State: harness.ScreenReady},
		"ready-wrapped":           {State: harness.ScreenReady, Input: "please read the design document and then summarise the three most important\ndecisions in a short list"},
		"ready-pasted":            {State: harness.ScreenReady, Input: "[Pasted text #1 +4 lines]"},
		"busy":                    {State: harness.ScreenBusy},
		"busy-typed":              {State: harness.ScreenBusy, Input: "and one more thing"},
		"trust-dialog":            trust,
		"trust-dialog-answered":   {State: harness.ScreenReady},
	})
}

func TestLanded(t *testing.T) {
	harnesstest.Landed(t, Claude{}.Screen(),
		[][2]string{ // {input shown, text pasted} that landed
			{"hello world", "hello world"},
			{"please read the design document and then summarise the three most important\ndecisions", "please read the design document and then summarise the three most important decisions"},
			{"[Pasted text #2 +12 lines]", "line one\nline two"},
			{"[Pasted text #1]", "a very long single line"},
		},
		[][2]string{ // and that did not
			{"", "hello"},
			{"hell", "hello"},
			{"hello", ""},
		})
}

func FuzzClassify(f *testing.F) {
	harnesstest.FuzzScreen(f, Claude{}.Screen(), harnesstest.ScreensDir("claude"), strings.Repeat("─\n❯\n", 50))
}
