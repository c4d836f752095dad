package claude

import (
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

var trust = harness.Screen{State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}}

func TestScreenFixtures(t *testing.T) {
	harnesstest.ScreenFixtures(t, Claude{}.Screen(), harnesstest.ScreensDir("claude"), map[string]harness.Screen{
		"starting":        {State: harness.ScreenStarting},
		"starting-banner": {State: harness.ScreenStarting},
		"ready-empty":     {State: harness.ScreenReady},
		"ready-typed":     {State: harness.ScreenReady, Input: "fix the failing test"},
		// After the window shrinks, capture-pane -J glues the box's rules
		// to the prompt line (tmux 3.3a keeps the rows marked as wrapped).
		"ready-empty-shrunk":      {State: harness.ScreenReady},
		"ready-typed-shrunk":      {State: harness.ScreenReady, Input: "after the shrink"},
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

func TestSplitGlued(t *testing.T) {
	rule := strings.Repeat("─", 20)
	cases := []struct {
		in   string
		want []string
	}{
		{rule + "❯ hi   " + rule, []string{rule, "❯ hi   ", rule}},
		{rule + "❯ " + rule, []string{rule, "❯ ", rule}},
		{rule + "  ? for shortcuts", []string{rule, "  ? for shortcuts"}},
		// Lines that are what they look like stay whole.
		{rule, []string{rule}},
		{"──── leo ──", []string{"──── leo ──"}},
		{rule + " agent " + rule, []string{rule + " agent " + rule}},
		{"❯ draw ──── a line", []string{"❯ draw ──── a line"}},
		{"● echo: ────────────", []string{"● echo: ────────────"}},
	}
	for _, c := range cases {
		if got := splitGlued(c.in); !slices.Equal(got, c.want) {
			t.Errorf("splitGlued(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
