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
	r := Codex{}.Screen()
	cases := []struct {
		input, pasted string
		want          bool
	}{
		{"hello world", "hello world", true},
		{"first line\nsecond", "first line\nsecond", true},
		{"[Pasted Content 1200 chars]", "long text", true},
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
	for _, s := range harnesstest.FuzzSeeds(f, harnesstest.ScreensDir("codex")) {
		f.Add(s)
	}
	r := Codex{}.Screen()
	f.Fuzz(func(t *testing.T, capture string) {
		harnesstest.CheckScreen(t, r, capture)
	})
}
