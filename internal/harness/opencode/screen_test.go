package opencode

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestScreenFixtures(t *testing.T) {
	harnesstest.ScreenFixtures(t, Opencode{}.Screen(), harnesstest.ScreensDir("opencode"), map[string]harness.Screen{
		"starting":                   {State: harness.ScreenStarting},
		"starting-banner":            {State: harness.ScreenStarting},
		"ready-empty":                {State: harness.ScreenReady},
		"ready-typed":                {State: harness.ScreenReady, Input: "fix the failing test"},
		"ready-after-turn":           {State: harness.ScreenReady},
		"ready-after-turn-multiline": {State: harness.ScreenReady, Input: "line one\nline two\nline three"},
		"busy-typed-multiline":       {State: harness.ScreenBusy, Input: "fix the failing test\nline one\nline two\nline three"},
		"ready-pasted":               {State: harness.ScreenReady, Input: "[Pasted ~5 lines]"},
		"busy":                       {State: harness.ScreenBusy},
		"busy-typed":                 {State: harness.ScreenBusy, Input: "and another thing"},
	})
}

func TestLanded(t *testing.T) {
	harnesstest.Landed(t, Opencode{}.Screen(),
		[][2]string{ // {input shown, text pasted} that landed
			{"hello world", "hello world"},
			{"[Pasted ~7 lines]", "a\nb\nc"},
		},
		[][2]string{ // and that did not
			{"", "hello"},
			{"other", "hello"},
		})
}

func FuzzClassify(f *testing.F) {
	harnesstest.FuzzScreen(f, Opencode{}.Screen(), harnesstest.ScreensDir("opencode"))
}
