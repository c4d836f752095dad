package claude

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

var trust = harness.Screen{State: harness.ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}}

const (
	wrapped = "please read the design document and then summarise the three most important decisions in a short list, then tell me which one you would revisit first and why"
	threeLn = "line one MARK3L\nline two\nline three"
)

// screenWant is what each real capture must classify as, by the state part
// of its name (<state>_<size>_<version>.txt); the same state at every pane
// size gives the same screen. Inputs are compared with runs of white space
// as one space, since the box wraps at the pane's width.
var screenWant = map[string]harness.Screen{
	"starting-blank": {State: harness.ScreenStarting},
	"ready-empty":    {State: harness.ScreenReady},
	// Keys typed about a second after the box first shows may show only
	// seconds later (200x50), or not at all (80x24).
	"ready-typed-not-shown": {State: harness.ScreenReady},
	"ready-typed":           {State: harness.ScreenReady, Input: "fix the failing test"},
	"ready-typed-wrapped":   {State: harness.ScreenReady, Input: wrapped},
	"ready-pasted-1line":    {State: harness.ScreenReady, Input: "say hello MARK1"},
	"ready-pasted-3line":    {State: harness.ScreenReady, Input: threeLn},
	"ready-pasted-4k":       {State: harness.ScreenReady, Input: "[Pasted text #1]"},
	// For a second or more after Enter the text stays in the box and no
	// spinner shows: only the transcript knows the turn started.
	"submitted-not-busy":     {State: harness.ScreenReady, Input: "say hello MARK1"},
	"busy":                   {State: harness.ScreenBusy},
	"busy-typed":             {State: harness.ScreenBusy, Input: "and one more thing"},
	"busy-retrying-500":      {State: harness.ScreenBusy},
	"busy-retrying-down":     {State: harness.ScreenBusy},
	"ready-after-turn":       {State: harness.ScreenReady},
	"ready-after-turn-typed": {State: harness.ScreenReady, Input: "and one more thing"},
	"ready-after-3line-turn": {State: harness.ScreenReady},
	"ready-after-4k-turn":    {State: harness.ScreenReady},
	"ready-after-error-400":  {State: harness.ScreenReady},
	"ready-after-error-down": {State: harness.ScreenReady},
	"ready-after-tool-turn":  {State: harness.ScreenReady},
	// After --resume: the earlier conversation above an empty box.
	"ready-resumed":        {State: harness.ScreenReady},
	"ready-typed-shrunk":   {State: harness.ScreenReady, Input: "after the shrink"},
	"trust-dialog":         trust,
	"trust-dialog-symlink": trust,
	// The chosen option gets a ✔ while claude acts on the answer: not a
	// dialog to answer again.
	"trust-dialog-answering":       {State: harness.ScreenStarting, Dialog: "trust"},
	"trust-dialog-answered":        {State: harness.ScreenReady},
	"ready-empty-after-trust":      {State: harness.ScreenReady},
	"ready-pasted-after-trust":     {State: harness.ScreenReady, Input: "hello after trust MARKS1"},
	"ready-pasted-during-trust":    {State: harness.ScreenReady, Input: "pasted during dialog MARKS2"},
	"ready-after-turn-after-trust": {State: harness.ScreenReady},
	// Message text that looks like the box or a dialog stays input: a line
	// of rules and a dialog's words (once sent, in the transcript), a rule
	// line the box wraps, and U+2028/U+2029, which tmux drops.
	"ready-pasted-rule-dialog": {State: harness.ScreenReady, Input: "rule MARKR1\n──────────\nDo you trust the files in this folder?"},
	"ready-after-rule-turn":    {State: harness.ScreenReady},
	"ready-pasted-long-rule":   {State: harness.ScreenReady, Input: "line one MARKR3\n" + strings.Repeat("─", 76) + "\n" + strings.Repeat("─", 24) + "\nline three"},
	"ready-pasted-linesep":     {State: harness.ScreenReady, Input: "uni MARKU1 ef and gh please"},
	// How the box draws what it was pasted (harnesstest.RedrawnPastes):
	// a skin-tone modifier dropped, a decomposed accent composed, a tab as
	// four spaces, leading spaces dropped.
	"ready-pasted-skintone":       {State: harness.ScreenReady, Input: "thumbs 👍 MARKU2"},
	"ready-pasted-decomposed":     {State: harness.ScreenReady, Input: "caf\u00e9 MARKU3"},
	"ready-pasted-tab":            {State: harness.ScreenReady, Input: "tab    here MARKU4"},
	"ready-pasted-leading-spaces": {State: harness.ScreenReady, Input: "lead MARKU5"},
	"ready-pasted-mixed":          {State: harness.ScreenReady, Input: "a    b 👋 na\u00efve MARKU6"},
	// A turn answered HTTP 429 (after claude's ten retries): 2.1.332 puts
	// the hint "Resend your message to try again" in the box, which is no
	// input; 2.1.197 leaves the box empty. A paste over the hint shows
	// alone, and the next turn goes through.
	"ready-after-429":        {State: harness.ScreenReady},
	"ready-after-429-pasted": {State: harness.ScreenReady, Input: "after the limit LEO-r430"},
	"ready-after-429-turn":   {State: harness.ScreenReady},
	// claude (permission_mode default) asks before it runs `touch x`: a
	// person's prompt, never answered by leo (no keys; the prompt itself
	// is checked by TestPermissionPromptFixtures). Answered "1" the turn
	// goes on and ends; answered Escape claude drops the call and waits.
	"permission-bash":               {State: harness.ScreenDialog, Dialog: "permission"},
	"ready-after-permission":        {State: harness.ScreenReady},
	"ready-after-permission-denied": {State: harness.ScreenReady},
	// The question tool's prompt (a person's, no keys: TestQuestionFixtures
	// checks its words), its own-answer row chosen and typed into, and
	// the turn after each answer.
	"question":                    {State: harness.ScreenDialog, Dialog: "question"},
	"question-own-row":            {State: harness.ScreenDialog, Dialog: "question"},
	"question-typing":             {State: harness.ScreenDialog, Dialog: "question"},
	"ready-after-question":        {State: harness.ScreenReady},
	"ready-after-question-option": {State: harness.ScreenReady},
}

// screenWantFile overrides screenWant for one capture.
var screenWantFile = map[string]harness.Screen{
	// Esc Esc cleared only part of the 3-line paste before the long one.
	"ready-pasted-4k_80x24_v2.1.197": {State: harness.ScreenReady, Input: "line one MARK3L\nline two\nline three[Pasted text #1]"},
	// The text typed a second after start, not shown then, showed up here.
	"ready-typed-wrapped_200x50_v2.1.197": {State: harness.ScreenReady, Input: "fix the failing test" + wrapped},
}

func TestScreenFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("claude"), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	seen := map[string]bool{}
	r := Claude{}.Screen()
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		state, _, _ := strings.Cut(name, "_")
		seen[state] = true
		t.Run(name, func(t *testing.T) {
			want, ok := screenWantFile[name]
			if !ok {
				if want, ok = screenWant[state]; !ok {
					t.Fatalf("fixture %s: state %q has no expectation", f, state)
				}
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Classify(string(data))
			if got.State != want.State || got.Dialog != want.Dialog || !slices.Equal(got.DialogKeys, want.DialogKeys) ||
				strings.Join(strings.Fields(got.Input), " ") != strings.Join(strings.Fields(want.Input), " ") {
				t.Fatalf("Classify(%s)\n got %+v\nwant %+v", f, got, want)
			}
			if got.Held {
				t.Fatalf("Classify(%s) is held: claude never holds a submit", f)
			}
			if (got.Prompt != nil) != (want.State == harness.ScreenDialog && want.DialogKeys == nil) {
				t.Fatalf("Classify(%s) prompt %+v, want one only on a person's prompt", f, got.Prompt)
			}
			harnesstest.CheckScreen(t, r, string(data))
		})
	}
	for state := range screenWant {
		if !seen[state] {
			t.Errorf("expectation %q has no fixture", state)
		}
	}
}

// TestPermissionPromptFixtures: the prompt read off each capture of the
// permission prompt is claude's question naming the tool and the command,
// and the choices as worded (2.1.332 offers one more, and names the
// workspace by its full path).
func TestPermissionPromptFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("claude"), "permission-bash_*.txt"))
	if err != nil || len(files) < 2 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := Claude{}.Screen().Classify(string(data))
		p := s.Prompt
		if p == nil || s.DialogKeys != nil {
			t.Fatalf("%s: %+v, want a prompt and no keys", f, s)
		}
		if strings.Contains(f, "v2.1.197") {
			want := harness.Prompt{Kind: "permission", Text: "Bash command: touch x\nCreate the file x\nDo you want to proceed?",
				Choices: []string{"Yes", "Yes, and always allow access to ws/ from this project", "No"}}
			if !reflect.DeepEqual(*p, want) {
				t.Fatalf("%s:\n got %#v\nwant %#v", f, *p, want)
			}
			continue
		}
		if p.Kind != "permission" || p.Text != "Bash command: touch x\nDo you want to proceed?" || len(p.Choices) != 4 ||
			p.Choices[0] != "Yes" || p.Choices[3] != "No" ||
			!strings.HasPrefix(p.Choices[1], "Yes, and always allow access to /tmp/") || !strings.HasSuffix(p.Choices[1], "/ws from this project") ||
			p.Choices[2] != "Yes, and switch to auto mode · auto mode handles these prompts for you" {
			t.Fatalf("%s: %#v", f, *p)
		}
	}
}

// The question as both versions draw it: the header and question, the
// options' labels without their descriptions, the own-answer row and
// "Chat about this"; a typed answer shows in place of the own-answer row.
func TestQuestionFixtures(t *testing.T) {
	for _, v := range []string{"2.1.197", "2.1.332"} {
		for scenario, own := range map[string]string{"question": "Type something.", "question-own-row": "Type something.", "question-typing": "green please"} {
			f := filepath.Join(harnesstest.ScreensDir("claude"), scenario+"_120x40_v"+v+".txt")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := Claude{}.Screen().Classify(string(data))
			want := harness.Prompt{Kind: "question", Text: "Colour: Which colour should the button be?",
				Choices: []string{"Red", "Blue", own, "Chat about this"}}
			if s.Prompt == nil || !reflect.DeepEqual(*s.Prompt, want) || s.DialogKeys != nil {
				t.Errorf("%s: %+v prompt %+v, want %+v", f, s, s.Prompt, want)
			}
		}
	}
}

// A question is read only while it is the last thing drawn: one quoted
// in a reply, or left above the input box, is none.
func TestQuestionNotFromTranscript(t *testing.T) {
	rule := strings.Repeat("─", 60)
	box := rule + "\n❯ \n" + rule + "\n  ? for shortcuts\n"
	q := " ☐ Colour\n\nWhich colour?\n\n❯ 1. Red\n  2. Blue\n  3. Type something.\n" + rule + "\n  4. Chat about this\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n"
	if s := (Claude{}).Screen().Classify(q); s.Prompt == nil || s.Prompt.Text != "Colour: Which colour?" {
		t.Fatalf("the question itself: %+v", s)
	}
	for name, capture := range map[string]string{
		"above the box": q + "\n" + box,
		"no footer":     strings.TrimSuffix(q, "Enter to select · ↑/↓ to navigate · Esc to cancel\n"),
		"no options":    " ☐ Colour\n\nWhich colour?\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n",
	} {
		if s := (Claude{}).Screen().Classify(capture); s.Prompt != nil {
			t.Errorf("%s: read a prompt %+v", name, s.Prompt)
		}
	}
}

// TestPermissionPromptNotFromTranscript: a reply or a message quoting the
// prompt's words is no prompt; the prompt's words without its choices
// neither.
func TestPermissionPromptNotFromTranscript(t *testing.T) {
	rule := strings.Repeat("─", 60)
	box := rule + "\n❯ \n" + rule + "\n  ? for shortcuts\n"
	for name, capture := range map[string]string{
		"reply":      "● Do you want to proceed?\n  1. Yes\n  2. No\n\n" + box,
		"message":    "❯ Do you want to proceed?\n 1. Yes\n 2. No\n\n" + box,
		"no choices": rule + "\n Bash command\n\n   touch x\n\n Do you want to proceed?\n\n Esc to cancel\n",
		"not a yes":  rule + "\n Bash command\n Do you want to proceed?\n ❯ 1. Maybe\n   2. No\n",
	} {
		if s := (Claude{}).Screen().Classify(capture); s.Prompt != nil || s.State == harness.ScreenDialog {
			t.Errorf("%s: %+v", name, s)
		}
	}
	// A long command is quoted up to maxPromptLines lines.
	var cmd strings.Builder
	for i := range 40 {
		fmt.Fprintf(&cmd, "   echo line %d\n", i)
	}
	capture := rule + "\n Bash command\n\n" + cmd.String() + "\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n"
	s := Claude{}.Screen().Classify(capture)
	if s.Prompt == nil || strings.Count(s.Prompt.Text, "\n") != maxPromptLines+1 || !strings.Contains(s.Prompt.Text, "…") {
		t.Fatalf("long command: %+v", s.Prompt)
	}
}

// TestInputBoxAnywhere: the box is found however far above the bottom of
// a tall pane it sits, and when it is indented.
func TestInputBoxAnywhere(t *testing.T) {
	rule := strings.Repeat("─", 60)
	box := rule + "\n❯ find me\n" + rule + "\n  ? for shortcuts\n"
	for _, below := range []int{0, 39, 41, 200} {
		capture := "╭─ Claude ─╮\n╰──────────╯\n" + box + strings.Repeat("\n", below) + strings.Repeat("  some footer text\n", below/2)
		if got := (Claude{}).Screen().Classify(capture); got.State != harness.ScreenReady || got.Input != "find me" {
			t.Errorf("box with %d lines below: %+v", below, got)
		}
	}
	indented := "   " + rule + "\n   ❯ centred\n   " + rule + "\n"
	if got := (Claude{}).Screen().Classify(indented); got.State != harness.ScreenReady || got.Input != "centred" {
		t.Errorf("indented box: %+v", got)
	}
}

// TestSpinnerOnlyInColumnZero: transcript text that looks like the spinner
// (a reply quoting it) does not make the screen busy.
func TestSpinnerOnlyInColumnZero(t *testing.T) {
	rule := strings.Repeat("─", 40)
	for capture, want := range map[string]harness.ScreenState{
		"● the spinner says\n  ✶ Whirring…\n" + rule + "\n❯ \n" + rule + "\n":     harness.ScreenReady,
		"❯ ✶ Whirring… is what I saw\n✻ Worked for 3s\n" + rule + "\n❯ \n" + rule: harness.ScreenReady,
		"❯ hi\n✶ Whirring…\n" + rule + "\n❯ \n" + rule + "\n":                     harness.ScreenBusy,
		"❯ hi\n* Thinking… (3s)\n" + rule + "\n❯ \n" + rule + "\n":                harness.ScreenBusy,
	} {
		if got := (Claude{}).Screen().Classify(capture); got.State != want {
			t.Errorf("Classify(%q) = %v, want %v", capture, got.State, want)
		}
	}
}

func TestLanded(t *testing.T) {
	harnesstest.Landed(t, Claude{}.Screen(),
		[][2]string{ // {input shown, text pasted} that landed
			{"hello world", "hello world"},
			{"please read the design document and then summarise the three most important\ndecisions", "please read the design document and then summarise the three most important decisions"},
			{threeLn, threeLn},
			{"[Pasted text #1]", strings.Repeat("a very long single line ", 170)},
			{"[Pasted text #2 +12 lines]", "line one\nline two"},
		},
		[][2]string{ // and that did not
			{"", "hello"},
			{"hell", "hello"},
			{"hello", ""},
			{"line one MARK3L\nline two", threeLn},
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
