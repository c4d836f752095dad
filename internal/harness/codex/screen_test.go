package codex

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestScreenFixtures(t *testing.T) {
	harnesstest.ScreenFixtures(t, Codex{}.Screen(), harnesstest.ScreensDir("codex"), map[string]harness.Screen{
		"starting":                   {State: harness.ScreenStarting},
		"starting-banner":            {State: harness.ScreenStarting},
		"starting-no-composer":       {State: harness.ScreenStarting},
		"ready-empty":                {State: harness.ScreenReady},
		"ready-typed":                {State: harness.ScreenReady, Input: "fix the failing test"},
		"ready-after-turn-multiline": {State: harness.ScreenReady, Input: "line one\nline two\nline three"},
		"busy-typed-multiline":       {State: harness.ScreenBusy, Input: "line one\nline two\nline three"},
		"ready-after-turn":           {State: harness.ScreenReady},
		"ready-multiline":            {State: harness.ScreenReady, Input: "first line of a longer message\nsecond line of it"},
		"ready-pasted":               {State: harness.ScreenReady, Input: "[Pasted Content 2412 chars]"},
		"busy":                       {State: harness.ScreenBusy},
		"busy-typed":                 {State: harness.ScreenBusy, Input: "queued follow-up"},
		"trust-dialog":               {State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}},
	})
}

func TestPlaceholdersAreEmptyInput(t *testing.T) {
	r := Codex{}.Screen()
	for _, p := range placeholders {
		s := r.Classify("› " + p + "\n\n  ⏎ send   ⌃J newline\n")
		if s.State != harness.ScreenReady || s.Input != "" {
			t.Errorf("placeholder %q read as %+v", p, s)
		}
	}
}

func TestLanded(t *testing.T) {
	harnesstest.Landed(t, Codex{}.Screen(),
		[][2]string{ // {input shown, text pasted} that landed
			{"hello world", "hello world"},
			{"first line\nsecond", "first line\nsecond"},
			{"[Pasted Content 1200 chars]", "long text"},
		},
		[][2]string{ // and that did not
			{"", "hello"},
			{"other", "hello"},
		})
}

func FuzzClassify(f *testing.F) {
	harnesstest.FuzzScreen(f, Codex{}.Screen(), harnesstest.ScreensDir("codex"))
}
