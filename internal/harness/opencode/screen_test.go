package opencode

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// fixtureWant is what each state of testdata/screens/opencode shows, at every
// size it was captured at: the files are named <state>_<W>x<H>_v<version>.txt
// and every file's state must be in this table.
var fixtureWant = map[string]harness.Screen{
	// Before the box is up opencode paints nothing but blank rows.
	"starting-empty": {State: harness.ScreenStarting},
	"starting-blank": {State: harness.ScreenStarting},
	// The home screen: the box centred under the logo, the placeholder in it.
	"ready-empty-home":      {State: harness.ScreenReady},
	"ready-typed-home":      {State: harness.ScreenReady, Input: "fix the failing test"},
	"ready-pasted-home":     {State: harness.ScreenReady, Input: "please say LEO-abc1 back"},
	"ready-pasted2-home":    {State: harness.ScreenReady, Input: "two\nlines"},
	"ready-pasted3-home":    {State: harness.ScreenReady, Input: "[Pasted ~3 lines]"},
	"ready-pasted4000-home": {State: harness.ScreenReady, Input: "[Pasted ~1 lines]"},
	// 142 characters: shown whole, wrapped at the box's width (the word
	// first, then the long run cut), the box growing.
	"ready-pasted-long-home": {State: harness.ScreenReady, Input: "cut message\n" + strings.Repeat("x", 70) + "\n" + strings.Repeat("x", 60)},
	// A conversation: the box two columns in at the bottom, a sidebar to its
	// right on wide panes.
	"ready-after-turn":       {State: harness.ScreenReady},
	"ready-typed-after-turn": {State: harness.ScreenReady, Input: "and another thing"},
	"ready-after-interrupt":  {State: harness.ScreenReady},
	// The first capture after Enter: the box cleared, the echo not drawn
	// yet. Nothing on screen tells it from idle; only the session store does.
	"ready-submitted-gap": {State: harness.ScreenReady},
	// The echo drawn, the reply not started: no spinner yet, but busy.
	"busy-pending-echo": {State: harness.ScreenBusy},
	"busy-first":        {State: harness.ScreenBusy},
	"busy":              {State: harness.ScreenBusy},
	"busy-typed":        {State: harness.ScreenBusy, Input: "queued words"},
	"busy-pasted3":      {State: harness.ScreenBusy, Input: "queued words[Pasted ~3 lines]"},
	"busy-esc-again":    {State: harness.ScreenBusy},
	// A failing model call: opencode retries with backoff, the footer shows
	// the error and the retry, the turn stays in flight.
	"busy-error-retrying": {State: harness.ScreenBusy},
	"busy-server-down":    {State: harness.ScreenBusy},
	// Message text like the placeholder, or holding the footer's busy words
	// and spinner glyphs, is input.
	"ready-pasted-placeholder-like-home": {State: harness.ScreenReady, Input: "Ask anything… MARKO1 you like"},
	"ready-pasted-busy-words":            {State: harness.ScreenReady, Input: "two MARKO2\n■■⬝⬝ esc interrupt"},
	// How the box draws what it was pasted (harnesstest.RedrawnPastes): as
	// pasted, but a tab as two spaces and leading spaces dropped.
	"ready-pasted-skintone-home":       {State: harness.ScreenReady, Input: "thumbs 👍🏽 MARKU2"},
	"ready-pasted-decomposed-home":     {State: harness.ScreenReady, Input: "cafe\u0301 MARKU3"},
	"ready-pasted-tab-home":            {State: harness.ScreenReady, Input: "tab  here MARKU4"},
	"ready-pasted-leading-spaces-home": {State: harness.ScreenReady, Input: "lead MARKU5"},
	"ready-pasted-mixed-home":          {State: harness.ScreenReady, Input: "a  b 👋🏿 nai\u0308ve MARKU6"},
	// A turn answered HTTP 429: opencode retries, then shows the error
	// above an empty box (no hint in it).
	"ready-after-429": {State: harness.ScreenReady},
	// A bash call under permission {bash: ask}: the prompt takes the box's
	// place (the sidebar beside it on wide panes), for a person to answer.
	"dialog-permission":                 permissionScreen("Shell command\n$ touch leo-sig-1.txt", PermissionChoices...),
	"dialog-permission-always-selected": permissionScreen("Shell command\n$ touch leo-sig-3.txt", PermissionChoices...),
	// Allow always asks again, naming the patterns.
	"dialog-permission-always": permissionScreen("This will allow the following patterns until OpenCode is restarted\n- touch *", "Confirm", "Cancel"),
	// The question tool: its question, its options and opencode's own
	// "Type your own answer" (the descriptions left out).
	"dialog-question": {State: harness.ScreenDialog, Dialog: "question", Prompt: &harness.Prompt{Kind: "question",
		Text: "Which file should I create?", Choices: []string{"alpha.txt", "beta.txt", "Type your own answer"}}},
	// Rejected (Escape): the turn ends, the box is back.
	"ready-after-reject": {State: harness.ScreenReady},
}

func permissionScreen(text string, choices ...string) harness.Screen {
	return harness.Screen{State: harness.ScreenDialog, Dialog: "permission",
		Prompt: &harness.Prompt{Kind: "permission", Text: text, Choices: choices}}
}

// fixtureState is the state part of a fixture's file name.
func fixtureState(file string) string {
	name := strings.TrimSuffix(filepath.Base(file), ".txt")
	state, _, _ := strings.Cut(name, "_")
	return state
}

func fixtureFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("opencode"), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no opencode fixtures: %v", err)
	}
	return files
}

// TestScreenFixtures classifies every real capture: state and input as the
// table says, at every pane size.
func TestScreenFixtures(t *testing.T) {
	want := map[string]harness.Screen{}
	seen := map[string]bool{}
	for _, f := range fixtureFiles(t) {
		state := fixtureState(f)
		exp, ok := fixtureWant[state]
		if !ok {
			t.Errorf("fixture %s: state %q has no expectation", f, state)
			continue
		}
		seen[state] = true
		want[strings.TrimSuffix(filepath.Base(f), ".txt")] = exp
	}
	for state := range fixtureWant {
		if !seen[state] {
			t.Errorf("expectation %q has no fixture", state)
		}
	}
	harnesstest.ScreenFixtures(t, Opencode{}.Screen(), harnesstest.ScreensDir("opencode"), want)
}

// TestScreenFindsTheBoxAnywhere: the box read at its real place on every
// fixture with one (column 2 in a conversation, further in on the home
// screen), and at any indent and height when the capture is shifted.
func TestScreenFindsTheBoxAnywhere(t *testing.T) {
	r := Opencode{}.Screen()
	for _, f := range fixtureFiles(t) {
		exp := fixtureWant[fixtureState(f)]
		if exp.State == harness.ScreenStarting {
			continue
		}
		data := harnesstest.ReadFile(t, f)
		for _, shift := range []struct{ indent, above int }{{0, 0}, {7, 0}, {0, 150}, {31, 300}} {
			var b strings.Builder
			b.WriteString(strings.Repeat("\n", shift.above))
			for l := range strings.SplitSeq(data, "\n") {
				b.WriteString(strings.Repeat(" ", shift.indent) + l + "\n")
			}
			got := r.Classify(b.String())
			if got.State != exp.State || got.Input != exp.Input || !reflect.DeepEqual(got.Prompt, exp.Prompt) {
				t.Errorf("%s shifted %+v: got %s %q, want %s %q", filepath.Base(f), shift, got.State, got.Input, exp.State, exp.Input)
			}
		}
	}
}

// TestScreenBoxIsIndented pins what issue 7 found: the real box never
// starts in column 0.
func TestScreenBoxIsIndented(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		if st := fixtureWant[fixtureState(f)].State; st == harness.ScreenStarting || st == harness.ScreenDialog {
			continue
		}
		b, ok := findBox(splitLines(harnesstest.ReadFile(t, f)))
		if !ok {
			t.Fatalf("%s: no box", f)
		}
		home := strings.Contains(fixtureState(f), "home")
		if home && b.col < 3 || !home && b.col != 2 {
			t.Errorf("%s: box at column %d", filepath.Base(f), b.col)
		}
	}
}

// A sidebar beside the box is not input, a quoted marker in the transcript
// does not make the screen busy, and text typed into the box that looks
// like the mode line or the placeholder is still read.
func TestScreenEdges(t *testing.T) {
	r := Opencode{}.Screen()
	edge := "  ╹" + strings.Repeat("▀", 30)
	cases := []struct {
		name, capture string
		want          harness.Screen
	}{
		{"sidebar", "  ┃\n  ┃  hi there                         Context\n  ┃\n  ┃  Build · m               /ws\n" + edge + "\n   /ws   ctrl+p commands",
			harness.Screen{State: harness.ScreenReady, Input: "hi there"}},
		{"marker in transcript", "     esc interrupt ■ ⬝\n\n  ┃\n  ┃\n  ┃\n  ┃  Build · m\n" + edge + "\n   /ws",
			harness.Screen{State: harness.ScreenReady}},
		{"reply started", "  ┃\n  ┃  hello\n  ┃\n\n     ▣  Build · m\n\n  ┃\n  ┃\n  ┃\n  ┃  Build · m\n" + edge + "\n   /ws",
			harness.Screen{State: harness.ScreenReady}},
		{"no edge", "  ┃\n  ┃  hello\n  ┃  Build · m\n", harness.Screen{State: harness.ScreenStarting}},
		{"edge without mode line", "  ┃\n  ┃  hello\n" + edge + "\n", harness.Screen{State: harness.ScreenStarting}},
		{"edge in another column", "  ┃\n  ┃  x\n  ┃  Build · m\n   ╹▀▀▀▀\n", harness.Screen{State: harness.ScreenStarting}},
		{"placeholder-like input", "  ┃\n  ┃  Ask anything… and more\n  ┃  second line\n  ┃\n  ┃  Build · m\n" + edge,
			harness.Screen{State: harness.ScreenReady, Input: "Ask anything… and more\nsecond line"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := r.Classify(c.capture)
			if got.State != c.want.State || got.Input != c.want.Input {
				t.Fatalf("got %s %q, want %s %q", got.State, got.Input, c.want.State, c.want.Input)
			}
			harnesstest.CheckScreen(t, r, c.capture)
		})
	}
}

func TestLanded(t *testing.T) {
	long := strings.Repeat("alpha beta ", 364)[:4000]
	harnesstest.Landed(t, Opencode{}.Screen(),
		[][2]string{ // {input shown, text pasted} that landed
			{"hello world", "hello world"},
			{"[Pasted ~3 lines]", "line one\nline two\nline three"},
			{"[Pasted ~1 lines]", long},
			{"two\nlines", "two\nlines"},
			{"a wrapped wo\nrd here", "a wrapped word here"},
			{"cut message\n" + strings.Repeat("x", 70) + "\n" + strings.Repeat("x", 60), "cut message " + strings.Repeat("x", 130)},
		},
		[][2]string{ // and that did not
			{"", "hello"},
			{"other", "hello"},
			{"", long},
		})
}

func FuzzClassify(f *testing.F) {
	harnesstest.FuzzScreen(f, Opencode{}.Screen(), harnesstest.ScreensDir("opencode"),
		"  ┃\n  ┃  x\n  ┃  Build · m\n  ╹▀▀\n ■", "┃ · \n╹▀", "╹▀\n┃", "\t┃ · \n\t╹▀")
}

// A prompt is read only where it takes the box's place: the same words
// echoed in the transcript or typed into the box are not one, and a block
// without its choices (or its words) is none either.
func TestScreenPromptEdges(t *testing.T) {
	r := Opencode{}.Screen()
	edge := "  ╹" + strings.Repeat("▀", 40)
	box := "  ┃\n  ┃\n  ┃\n  ┃  Build · m\n" + edge + "\n   /ws"
	prompt := "  ┃\n  ┃  △ Permission required\n  ┃    # Shell command\n  ┃\n  ┃  $ rm -rf ~\n  ┃\n  ┃\n" +
		"  ┃   Allow once   Allow always   Reject  ctrl+f fullscreen  ⇆ select  enter confirm\n  ┃\n"
	question := "  ┃\n  ┃  Which one?\n  ┃\n  ┃  1. a\n  ┃     the a\n  ┃  2. Type your own answer\n  ┃\n  ┃  ↑↓ select  enter submit  esc dismiss\n  ┃\n"
	cases := []struct {
		name, capture string
		want          harness.Screen
	}{
		{"prompt", prompt, permissionScreen("Shell command\n$ rm -rf ~", PermissionChoices...)},
		{"question", question, harness.Screen{State: harness.ScreenDialog, Dialog: "question",
			Prompt: &harness.Prompt{Kind: "question", Text: "Which one?", Choices: []string{"a", "Type your own answer"}}}},
		{"prompt echoed above the box", prompt + "\n     ▣  Build · m\n\n" + box, harness.Screen{State: harness.ScreenReady}},
		{"question echoed above the box", question + "\n     ▣  Build · m\n\n" + box, harness.Screen{State: harness.ScreenReady}},
		{"prompt typed into the box", "  ┃\n  ┃  △ Permission required\n  ┃  x\n  ┃   Allow once   Reject\n  ┃\n  ┃  Build · m\n" + edge,
			harness.Screen{State: harness.ScreenReady, Input: "△ Permission required\nx\nAllow once   Reject"}},
		{"no choices", "  ┃\n  ┃  △ Permission required\n  ┃    # Shell command\n  ┃  $ x\n  ┃\n", harness.Screen{State: harness.ScreenStarting}},
		{"no words", "  ┃\n  ┃  △ Permission required\n  ┃\n  ┃   Allow once   Allow always   Reject\n  ┃\n", harness.Screen{State: harness.ScreenStarting}},
		{"another title", strings.Replace(prompt, "Permission required", "Permission granted", 1), harness.Screen{State: harness.ScreenStarting}},
		{"question without options", "  ┃\n  ┃  Which one?\n  ┃\n  ┃  ↑↓ select  enter submit  esc dismiss\n", harness.Screen{State: harness.ScreenStarting}},
		{"choices in the command", strings.Replace(prompt, "$ rm -rf ~", "$ echo '   Reject   Allow once'", 1),
			permissionScreen("Shell command\n$ echo '   Reject   Allow once'", PermissionChoices...)},
		{"hostile bytes", strings.Replace(prompt, "rm -rf ~", "rm \x1b[2J\x00 ~", 1), permissionScreen("Shell command\n$ rm \x1b[2J\x00 ~", PermissionChoices...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := r.Classify(c.capture)
			if got.State != c.want.State || got.Input != c.want.Input || got.Dialog != c.want.Dialog || !reflect.DeepEqual(got.Prompt, c.want.Prompt) {
				t.Fatalf("got %+v %+v\nwant %+v %+v", got, got.Prompt, c.want, c.want.Prompt)
			}
			harnesstest.CheckScreen(t, r, c.capture)
		})
	}
}
