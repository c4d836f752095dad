package pi

import (
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const v = "_120x40_v0.73.1"

// fixtureWant is what each capture of testdata/screens/pi shows.
var fixtureWant = map[string]harness.Screen{
	"ready-fresh" + v:            {State: harness.ScreenReady},
	"ready-typed" + v:            {State: harness.ScreenReady, Input: "hello LEO-p1"},
	"busy" + v:                   {State: harness.ScreenBusy},
	"busy-typed" + v:             {State: harness.ScreenBusy, Input: "queued LEO-p3"},
	"busy-steering" + v:          {State: harness.ScreenBusy},
	"busy-retrying" + v:          {State: harness.ScreenBusy},
	"ready-after-turn" + v:       {State: harness.ScreenReady},
	"ready-after-steering" + v:   {State: harness.ScreenReady},
	"ready-after-interrupt" + v:  {State: harness.ScreenReady},
	"ready-after-clear" + v:      {State: harness.ScreenReady},
	"ready-after-compact" + v:    {State: harness.ScreenReady},
	"ready-after-tool" + v:       {State: harness.ScreenReady},
	"ready-pasted-multiline" + v: {State: harness.ScreenReady, Input: "line one LEO-m1\nline two\nline three"},
	"ready-pasted-4000" + v:      {State: harness.ScreenReady, Input: "[paste #1 4004 chars]"},
	"ready-typed-compact" + v:    {State: harness.ScreenReady, Input: "/compact"},
	// Narrow and wide panes.
	"ready-fresh_80x24_v0.73.1":       {State: harness.ScreenReady},
	"ready-typed_80x24_v0.73.1":       {State: harness.ScreenReady, Input: "hello LEO-w80"},
	"ready-after-turn_80x24_v0.73.1":  {State: harness.ScreenReady},
	"busy_80x24_v0.73.1":              {State: harness.ScreenBusy},
	"ready-fresh_200x50_v0.73.1":      {State: harness.ScreenReady},
	"ready-typed_200x50_v0.73.1":      {State: harness.ScreenReady, Input: "hello LEO-w200"},
	"ready-after-turn_200x50_v0.73.1": {State: harness.ScreenReady},
	"busy_200x50_v0.73.1":             {State: harness.ScreenBusy},
	// The redrawn pastes (harnesstest.RedrawnPastes, captured by
	// e2e/realcli/cmd/capturescreens): as pasted, a tab as four spaces.
	// The emoji with a skin-tone modifier overflows its row: the bottom
	// rule is glued to the input's line in the joined capture.
	"ready-pasted-skintone" + v:       {State: harness.ScreenReady, Input: "thumbs 👍🏽 MARKU2"},
	"ready-pasted-decomposed" + v:     {State: harness.ScreenReady, Input: "cafe\u0301 MARKU3"},
	"ready-pasted-tab" + v:            {State: harness.ScreenReady, Input: "tab    here MARKU4"},
	"ready-pasted-leading-spaces" + v: {State: harness.ScreenReady, Input: "lead MARKU5"},
	"ready-pasted-mixed" + v:          {State: harness.ScreenReady, Input: "a    b 👋🏿 nai\u0308ve MARKU6"},
}

func TestScreenFixtures(t *testing.T) {
	harnesstest.ScreenFixtures(t, Pi{}.Screen(), harnesstest.ScreensDir("pi"), fixtureWant)
}

func TestLandedPasteMarker(t *testing.T) {
	r := Pi{}.Screen()
	big := "long LEO-big1 " + strings.Repeat("x", 3990)
	if !r.Landed(harness.Screen{State: harness.ScreenReady, Input: "[paste #1 4004 chars]"}, big) {
		t.Error("the marker of a 4,004-character paste does not count as landed")
	}
	if r.Landed(harness.Screen{State: harness.ScreenReady, Input: "[paste #1 4005 chars]"}, big) {
		t.Error("the marker of another paste counts as landed")
	}
	lines := strings.Repeat("a line\n", 11) + "LEO-x"
	if !r.Landed(harness.Screen{State: harness.ScreenReady, Input: "[paste #2 +12 lines]"}, lines) {
		t.Error("the marker of a 12-line paste does not count as landed")
	}
	if r.Landed(harness.Screen{State: harness.ScreenReady, Input: "[paste #1 12 chars]"}, "short text") {
		t.Error("a short paste is never shown as a marker")
	}
	// A character outside the BMP is two UTF-16 units in pi's count.
	emoji := strings.Repeat("😀", 600)
	if !r.Landed(harness.Screen{State: harness.ScreenReady, Input: "[paste #3 1200 chars]"}, emoji) {
		t.Error("pi counts UTF-16 units")
	}
}

func TestClassifyScrolledEditor(t *testing.T) {
	capture := "text\n\n─── ↑ 3 more ───────────\nthe last line LEO-s\n─── ↓ 1 more ─────────────\n/ws\n↑1 ↓1 model\n"
	s := Pi{}.Screen().Classify(capture)
	if s.State != harness.ScreenReady || s.Input != "the last line LEO-s" {
		t.Fatalf("Classify = %+v", s)
	}
}

// The model of the editor's drawing is the one the captures show.
func TestDrawModelMatchesCaptures(t *testing.T) {
	for _, fx := range harnesstest.RedrawnFixtures(t, harnesstest.ScreensDir("pi")) {
		got := Pi{}.Screen().Classify(fx.Capture).Input
		if want := piDraws(fx.Pasted); got != want {
			t.Errorf("%s: input %q, the model draws %q", fx.File, got, want)
		}
	}
}

func FuzzLanded(f *testing.F) {
	harnesstest.FuzzLanded(f, Pi{}.Screen(), piDraws, "e\u0301\u0301 👍🏿👍🏻 \u200b x", "\t\t lead", "🏽 alone", "[paste #1 1200 chars]")
}

// piDraws is a model of what pi's editor shows of a paste, read off its
// captures (0.73.1): as pasted, a tab as four spaces, leading spaces
// trimmed by the reader.
func piDraws(s string) string {
	return strings.TrimLeft(strings.ReplaceAll(s, "\t", "    "), " ")
}
