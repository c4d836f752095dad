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
	r := Opencode{}.Screen()
	cases := []struct {
		input, pasted string
		want          bool
	}{
		{"hello world", "hello world", true},
		{"[Pasted ~7 lines]", "a\nb\nc", true},
		{"", "hello", false},
		{"other", "hello", false},
	}
	for _, c := range cases {
		if got := r.Landed(harness.Screen{State: harness.ScreenReady, Input: c.input}, c.pasted); got != c.want {
			t.Errorf("Landed(input %q, pasted %q) = %v, want %v", c.input, c.pasted, got, c.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range harnesstest.FuzzSeeds(f, harnesstest.ScreensDir("opencode")) {
		f.Add(s)
	}
	r := Opencode{}.Screen()
	f.Fuzz(func(t *testing.T, capture string) {
		harnesstest.CheckScreen(t, r, capture)
	})
}
