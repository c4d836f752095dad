package codex

import (
	"os"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func readScreen(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(harnesstest.ScreensDir("codex") + "/" + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestThreadTitleDoesNotSteerTheReader: codex's status line under the
// composer shows the thread's title, which is the first message sent. A
// first message naming the trust dialog or the held hint must leave an idle
// empty composer ready (not a dialog leo keeps pressing Enter on, not a
// start-up that never ends). The fixture is a real capture with the title
// edited in; ready-title-*-marker_* are real captures of such titles.
func TestThreadTitleDoesNotSteerTheReader(t *testing.T) {
	raw := readScreen(t, "ready-after-turn_120x40_v0.171.0")
	sr := Codex{}.Screen()
	if s := sr.Classify(raw); s.State != harness.ScreenReady {
		t.Fatalf("fixture: %+v", s)
	}
	for _, first := range []string{"Trust this folder? see notes", "Waiting for startup logs", "why is allow Codex to work in this folder shown"} {
		capture := strings.ReplaceAll(raw, "fix the failing test", first)
		if !strings.Contains(capture, "· "+first) {
			t.Fatalf("title %q not edited in", first)
		}
		if s := sr.Classify(capture); s.State != harness.ScreenReady || s.Held || s.Dialog != "" {
			t.Errorf("first message %q, idle empty composer classified %v (dialog %q keys %v, held %v)", first, s.State, s.Dialog, s.DialogKeys, s.Held)
		}
	}
}

// TestMarkerInComposerTextIsText: a pasted message naming the trust dialog,
// the held hint or carrying a footer-like "a · b" line is composer text:
// it lands, and the screen is neither a dialog nor held.
func TestMarkerInComposerTextIsText(t *testing.T) {
	raw := readScreen(t, "ready-pasted-3line_80x24_v0.171.0")
	sr := Codex{}.Screen()
	for _, line := range []string{"Trust this folder?", "Waiting for startup", "Waiting for startup  · esc cancel", "a · b"} {
		for _, replace := range []string{"  line two", "  line three"} {
			capture := strings.Replace(raw, replace, "  "+line, 1)
			msg := strings.Replace("line one\nline two\nline three", strings.TrimSpace(replace), line, 1)
			s := sr.Classify(capture)
			if s.State != harness.ScreenReady || s.Held || !sr.Landed(s, msg) {
				t.Errorf("pasted %q: screen %v dialog %q held %v input %q: never lands", msg, s.State, s.Dialog, s.Held, s.Input)
			}
		}
	}
}

// TestSentMessageQuotingDialogIsNotADialog: with no composer on screen
// (start-up, an overlay), a sent message in the history that quotes the
// trust dialog is not the dialog.
func TestSentMessageQuotingDialogIsNotADialog(t *testing.T) {
	capture := "› Trust this folder? asked the user\n\n• OK\n\nWARNING: something\n"
	if s := (Codex{}).Screen().Classify(capture); s.State != harness.ScreenStarting {
		t.Errorf("got %+v, want starting", s)
	}
}
