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
	r := Claude{}.Screen()
	cases := []struct {
		input, pasted string
		want          bool
	}{
		{"hello world", "hello world", true},
		{"please read the design document and then summarise the three most important\ndecisions", "please read the design document and then summarise the three most important decisions", true},
		{"[Pasted text #2 +12 lines]", "line one\nline two", true},
		{"[Pasted text #1]", "a very long single line", true},
		{"", "hello", false},
		{"hell", "hello", false},
		{"hello", "", false},
	}
	for _, c := range cases {
		if got := r.Landed(harness.Screen{State: harness.ScreenReady, Input: c.input}, c.pasted); got != c.want {
			t.Errorf("Landed(input %q, pasted %q) = %v, want %v", c.input, c.pasted, got, c.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range harnesstest.FuzzSeeds(f, harnesstest.ScreensDir("claude")) {
		f.Add(s)
	}
	f.Add(strings.Repeat("─\n❯\n", 50))
	r := Claude{}.Screen()
	f.Fuzz(func(t *testing.T, capture string) {
		harnesstest.CheckScreen(t, r, capture)
	})
}
