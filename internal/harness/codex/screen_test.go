package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// longPasted is how codex 0.171.0 shows the 4,000-character paste of the
// capture script (more than 1,000 characters collapse to a placeholder).
const longPasted = "[Pasted Content 4000 chars]"

// landedOnly stands for an input too long to spell out: the fixture's
// input must be landedText[state] as Landed sees it.
const landedOnly = "(landed)"

// landedText is what was pasted for such a fixture: 779 characters (up to
// 1,000 show as text; more, as a placeholder) whose long URL the composer
// breaks mid-word.
var landedText = map[string]string{
	"ready-pasted-wrapped": func() string {
		var w []string
		for i := range 120 {
			w = append(w, fmt.Sprintf("w%03d", i))
		}
		return "see https://example.com/" + strings.Repeat("a", 150) + " then " + strings.Join(w, " ")
	}(),
}

// fixtureWant is what each real capture under testdata/screens/codex must
// classify as, keyed by the state part of its name
// (<state>_<cols>x<rows>_v<codex version>.txt): every size of a state
// reads the same.
var fixtureWant = map[string]harness.Screen{
	"starting-blank":           {State: harness.ScreenStarting},
	"starting-warning":         {State: harness.ScreenStarting},
	"starting-loading":         {State: harness.ScreenStarting},
	"ready-empty-prestartup":   {State: harness.ScreenReady},
	"ready-empty":              {State: harness.ScreenReady},
	"ready-typed":              {State: harness.ScreenReady, Input: "fix the failing test"},
	"held":                     {State: harness.ScreenStarting, Held: true},
	"held-status":              {State: harness.ScreenStarting, Held: true},
	"ready-submitted":          {State: harness.ScreenReady},
	"ready-submitted-3line":    {State: harness.ScreenReady},
	"busy":                     {State: harness.ScreenBusy},
	"busy-typed":               {State: harness.ScreenBusy, Input: "queued follow-up"},
	"ready-pasted-3line":       {State: harness.ScreenReady, Input: "line one\nline two\nline three"},
	"busy-3line":               {State: harness.ScreenBusy},
	"ready-after-turn":         {State: harness.ScreenReady},
	"ready-pasted-long":        {State: harness.ScreenReady, Input: longPasted},
	"busy-long":                {State: harness.ScreenBusy},
	"ready-after-long-turn":    {State: harness.ScreenReady},
	"ready-typed-before-error": {State: harness.ScreenReady, Input: "please fail now"},
	"busy-reconnecting":        {State: harness.ScreenBusy},
	"ready-error":              {State: harness.ScreenReady},
	"trust-dialog":             {State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}},
	"ready-pasted-paragraphs":  {State: harness.ScreenReady, Input: "para one\n\npara two\n   indented three"},
	"ready-empty-intro":        {State: harness.ScreenReady},
	"busy-steer-pending":       {State: harness.ScreenBusy},
	"ready-after-trust":        {State: harness.ScreenReady},
	"starting-resuming":        {State: harness.ScreenStarting},
	"starting-signin":          {State: harness.ScreenStarting}, // no provider configured: not leo's to answer
	"ready-resumed":            {State: harness.ScreenReady},
	// Mid-turn, the reply streaming: no busy line, so the screen reads as
	// idle (the rollout says the turn runs; TurnActivity).
	"streaming":            {State: harness.ScreenReady},
	"streaming-typed":      {State: harness.ScreenReady, Input: "typed while streaming"},
	"ready-pasted-wrapped": {State: harness.ScreenReady, Input: landedOnly},
	// The thread's title in the status line (the first message) and the
	// composer's text may hold the dialog's or the held hint's words.
	"ready-title-held-marker":    {State: harness.ScreenReady},
	"ready-title-dialog-marker":  {State: harness.ScreenReady},
	"ready-pasted-held-marker":   {State: harness.ScreenReady, Input: "line one MARKW2\nWaiting for startup  · esc cancel"},
	"ready-pasted-dialog-marker": {State: harness.ScreenReady, Input: "line one MARKT2\nTrust this folder?\na · b"},
	// How the composer draws what it was pasted (harnesstest.RedrawnPastes):
	// a skin-tone modifier dropped, a decomposed accent kept, a tab as one
	// space, leading spaces dropped.
	"ready-pasted-skintone":       {State: harness.ScreenReady, Input: "thumbs 👍 MARKU2"},
	"ready-pasted-decomposed":     {State: harness.ScreenReady, Input: "cafe\u0301 MARKU3"},
	"ready-pasted-tab":            {State: harness.ScreenReady, Input: "tab here MARKU4"},
	"ready-pasted-leading-spaces": {State: harness.ScreenReady, Input: "lead MARKU5"},
	"ready-pasted-mixed":          {State: harness.ScreenReady, Input: "a b 👋 nai\u0308ve MARKU6"},
	// A turn answered HTTP 429 ("■ exceeded retry limit, last status: 429
	// Too Many Requests" after codex's retries): the composer shows its
	// placeholder, no input.
	"ready-after-429":        {State: harness.ScreenReady},
	"ready-after-429-pasted": {State: harness.ScreenReady, Input: "after the limit LEO-r430"},
	"ready-after-429-turn":   {State: harness.ScreenReady},
	// The approval prompt (capturescreens -scenario approval: -a
	// on-request, a command asking to run outside the sandbox): a person's
	// to answer, so no keys; the command first, then codex's words. Once
	// answered (yes, or Escape) the composer is back.
	"approval-exec": {State: harness.ScreenDialog, Dialog: "approval", Prompt: &harness.Prompt{
		Kind: "permission",
		Text: "touch approved-x\nWould you like to run the following command?\nReason: Do you want to create the file approved-x?",
		Choices: []string{"Yes, proceed (y)", "Yes, and don't ask again for commands that start with `touch approved-x` (p)",
			"No, and tell Codex what to do differently (esc)"},
	}},
	"approval-exec-long": {State: harness.ScreenDialog, Dialog: "approval", Prompt: &harness.Prompt{
		Kind: "permission",
		Text: longCommand + "\nWould you like to run the following command?\nReason: Do you want to create the file denied-y?",
		Choices: []string{"Yes, proceed (y)", "Yes, and don't ask again for commands that start with `" + longCommand + "` (p)",
			"No, and tell Codex what to do differently (esc)"},
	}},
	"approval-answered": {State: harness.ScreenReady},
	"approval-denied":   {State: harness.ScreenReady},
}

// longCommand is the approval capture's second command, which wraps on a
// narrow pane.
const longCommand = `touch denied-y && printf '%s\n' 'a fairly long argument that makes the command wrap on a narrow pane, and then some more words' > /dev/null`

// fixtures lists the real captures: state name → files.
func fixtures(t testing.TB) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("codex"), "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	out := map[string][]string{}
	for _, f := range files {
		state, _, _ := strings.Cut(filepath.Base(f), "_")
		out[state] = append(out[state], f)
	}
	return out
}

func TestScreenFixtures(t *testing.T) {
	r := Codex{}.Screen()
	all := fixtures(t)
	for state := range fixtureWant {
		if len(all[state]) == 0 {
			t.Errorf("state %q has no fixture", state)
		}
	}
	for state, files := range all {
		want, ok := fixtureWant[state]
		if !ok {
			t.Errorf("fixtures %v have no expectation", files)
			continue
		}
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(filepath.Base(f), "_v") {
					t.Errorf("fixture name %s does not name the codex version", f)
				}
				got := r.Classify(string(data))
				if len(got.DialogKeys) == 0 {
					got.DialogKeys = nil
				}
				if want.Input == landedOnly {
					if !r.Landed(got, landedText[state]) {
						t.Fatalf("Landed(%+v) = false for the text pasted", got)
					}
					got.Input = landedOnly
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Classify\n got %+v\nwant %+v", got, want)
				}
				harnesstest.CheckScreen(t, r, string(data))
			})
		}
	}
}

func TestPlaceholdersAreEmptyInput(t *testing.T) {
	r := Codex{}.Screen()
	for _, p := range placeholders {
		s := r.Classify("› " + p + "\n\n  ? for shortcuts\n")
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
