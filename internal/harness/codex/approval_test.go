package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func approvalCapture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(harnesstest.ScreensDir("codex"), "approval-exec_120x40_v0.171.0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The prompt's words elsewhere are no prompt: a reply or a message quoting
// them above the composer, the prompt cut short (no footer, no choices, the
// footer not last), choices that offer no "Yes" first or skip a number.
func TestApprovalNotFromOtherText(t *testing.T) {
	r := Codex{}.Screen()
	real := approvalCapture(t)
	prompt := real[strings.Index(real, "  Would you like"):]
	cases := map[string]string{
		// A reply quoting the whole prompt, then the composer.
		"quoted in a reply": "• " + strings.TrimSpace(prompt) + "\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n",
		// Sent as a message (› in column 0, then the composer).
		"sent":           "› " + strings.ReplaceAll(strings.TrimSpace(prompt), "\n", "\n  ") + "\n\n› \n\n  ? for shortcuts\n",
		"no footer":      strings.Replace(prompt, "Press enter to confirm or esc to cancel", "", 1),
		"footer moved":   prompt + "\n• something after it\n",
		"no choices":     "  Would you like to run the following command?\n\n  $ rm -rf x\n\n  Press enter to confirm or esc to cancel\n",
		"no yes first":   strings.Replace(prompt, "1. Yes, proceed (y)", "1. Sure (y)", 1),
		"skips a number": strings.Replace(prompt, "  2. Yes", "  4. Yes", 1),
	}
	for name, c := range cases {
		if s := r.Classify(c); s.Prompt != nil || s.State == harness.ScreenDialog {
			t.Errorf("%s: %+v %+v", name, s, s.Prompt)
		}
	}
	// The selection moved to another choice is the same prompt.
	moved := strings.Replace(strings.Replace(real, "› 1. Yes, proceed", "  1. Yes, proceed", 1), "  2. Yes, and", "› 2. Yes, and", 1)
	a, b := r.Classify(real), r.Classify(moved)
	if a.Prompt == nil || b.Prompt == nil || a.Prompt.Text != b.Prompt.Text || strings.Join(a.Prompt.Choices, "|") != strings.Join(b.Prompt.Choices, "|") {
		t.Fatalf("moved selection: %+v vs %+v", b.Prompt, a.Prompt)
	}
}

// A command full of terminal escapes and a huge one: read as text, the
// text bounded.
func TestApprovalHostileCommand(t *testing.T) {
	r := Codex{}.Screen()
	var body strings.Builder
	body.WriteString("  $ echo \x1b]52;c;AAAA\x07 \x00\n")
	for range 40 {
		body.WriteString("  " + strings.Repeat("z", 70) + "\n")
	}
	capture := "• Running echo\n\n  Would you like to run the following command?\n\n" + body.String() +
		"\n› 1. Yes, proceed (y)\n  2. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n"
	s := r.Classify(capture)
	if s.State != harness.ScreenDialog || s.Prompt == nil || len(s.DialogKeys) != 0 {
		t.Fatalf("%+v", s)
	}
	if lines := strings.Split(s.Prompt.Text, "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "echo \x1b]52") ||
		lines[1] != "Would you like to run the following command?" || len(lines[0]) > (maxPromptLines+1)*80 || !strings.HasSuffix(lines[0], "…") {
		t.Fatalf("text %q", s.Prompt.Text)
	}
	harnesstest.CheckScreen(t, r, capture)
}
