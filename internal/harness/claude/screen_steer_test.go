package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func readScreen(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(harnesstest.ScreensDir("claude"), name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestRuleLineInMessageStaysInTheBox: a pasted message line made of box
// rules ("───", tables, tool output) is drawn inside the input box,
// indented after the prompt; it is not the box's bottom rule. The message
// lands whole, and text after the rule line (a dialog's words) is input,
// not a dialog under the box. The captures are real ones with the message
// edited in; every pane size is tried, and a rule line as wide as the box's
// text area too.
func TestRuleLineInMessageStaysInTheBox(t *testing.T) {
	sr := Claude{}.Screen()
	for _, size := range []string{"80x24", "100x120", "120x40", "200x50"} {
		cols := map[string]int{"80x24": 80, "100x120": 100, "120x40": 120, "200x50": 200}[size]
		raw := readScreen(t, "ready-pasted-3line_"+size+"_v2.1.197")
		for _, rule := range []string{strings.Repeat("─", 10), strings.Repeat("─", cols-2)} {
			capture := strings.Replace(raw, "  line two", "  "+rule, 1)
			msg := "line one MARK3L\n" + rule + "\nline three"
			s := sr.Classify(capture)
			if s.State != harness.ScreenReady || !sr.Landed(s, msg) {
				t.Errorf("%s, rule of %d: screen %v input %q: the message never lands", size, len([]rune(rule)), s.State, s.Input)
			}
			capture = strings.Replace(capture, "  line three", "  Do you trust the files in this folder?", 1)
			s = sr.Classify(capture)
			if s.State != harness.ScreenReady || !strings.HasSuffix(s.Input, "Do you trust the files in this folder?") {
				t.Errorf("%s, rule of %d: message text in the box read as %v (dialog %q keys %v), input %q", size, len([]rune(rule)), s.State, s.Dialog, s.DialogKeys, s.Input)
			}
		}
	}
}

// TestBoxInMessageStaysInTheBox: a message that draws a whole box of its
// own (a rule, a "❯ " line, a rule) inside the input box does not replace
// the real box: the least indented box wins.
func TestBoxInMessageStaysInTheBox(t *testing.T) {
	raw := readScreen(t, "ready-pasted-3line_120x40_v2.1.197")
	rule := strings.Repeat("─", 10)
	capture := strings.Replace(raw, "  line two", "  "+rule+"\n  ❯ inner\n  "+rule, 1)
	capture = strings.Replace(capture, "  line three", "  Yes, I trust this folder", 1)
	msg := "line one MARK3L\n" + rule + "\n❯ inner\n" + rule + "\nYes, I trust this folder"
	sr := Claude{}.Screen()
	s := sr.Classify(capture)
	if s.State != harness.ScreenReady || !sr.Landed(s, msg) {
		t.Errorf("screen %v (dialog %q) input %q: the message never lands", s.State, s.Dialog, s.Input)
	}
}

// TestBoxRulesMatch: the bottom rule has the top rule's indentation and
// width; a shorter or indented rule line is text.
func TestBoxRulesMatch(t *testing.T) {
	rule := strings.Repeat("─", 40)
	for capture, want := range map[string]string{
		rule + "\n❯ a\n  ─────\n  b\n" + rule + "\n":  "a\n─────\nb",
		rule + "\n❯ a\n" + rule[:30] + "\nb\n" + rule: "a\n" + rule[:30] + "\nb",
		rule + "\n❯ a\n" + rule + "\n":                "a",
	} {
		s := Claude{}.Screen().Classify(capture)
		if s.State != harness.ScreenReady || s.Input != want {
			t.Errorf("Classify(%q) = %+v, want input %q", capture, s, want)
		}
	}
	// No bottom rule of the top's width: no box.
	if s := (Claude{}).Screen().Classify(rule + "\n❯ a\n" + rule[:30] + "\n"); s.State != harness.ScreenStarting {
		t.Errorf("box without a matching bottom rule: %+v", s)
	}
}

// TestLineSeparatorLands: tmux 3.3a drops U+2028 and U+2029 from a
// capture, so a message holding them shows without them; it lands all the
// same. ready-pasted-linesep is the real capture of that paste.
func TestLineSeparatorLands(t *testing.T) {
	sr := Claude{}.Screen()
	s := sr.Classify(readScreen(t, "ready-pasted-linesep_80x24_v2.1.197"))
	if msg := "uni MARKU1 e\u2028f and g\u2029h please"; s.State != harness.ScreenReady || !sr.Landed(s, msg) {
		t.Errorf("pasted %q, screen %v input %q: never lands", msg, s.State, s.Input)
	}
}

// TestTranscriptQuotingDialogIsNotADialog: when something other than the
// input box is at the bottom (a modal, a redraw), the transcript above can
// quote a dialog's words, in a sent message or a reply; that is not the
// dialog (leo would press Enter into whatever is there). The capture is a
// real one (a sent message holding the trust dialog's question) with the
// input box cut off, and with the words moved to the message's first line
// and to the reply.
func TestTranscriptQuotingDialogIsNotADialog(t *testing.T) {
	raw := readScreen(t, "ready-after-rule-turn_80x24_v2.1.197")
	i := strings.Index(raw, "\n✻ Cogitated")
	if i < 0 {
		t.Fatal("fixture changed")
	}
	transcript := raw[:i]
	q := "Do you trust the files in this folder?"
	for _, capture := range []string{
		transcript,
		strings.Replace(transcript, "❯ rule MARKR1", "❯ "+q, 1),
		strings.Replace(transcript, "● ACK", "● "+q, 1),
	} {
		if s := (Claude{}).Screen().Classify(capture); s.State != harness.ScreenStarting {
			t.Errorf("transcript quoting the dialog, no box: %+v, want starting", s)
		}
	}
}
