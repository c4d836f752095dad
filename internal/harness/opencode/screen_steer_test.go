package opencode

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
	raw, err := os.ReadFile(filepath.Join(harnesstest.ScreensDir("opencode"), name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestMarkersInMessageAreInput: a two-line message holding the footer's
// busy words and glyphs, the mode line's separator or the box's edge is
// drawn inside the box, after its border: it lands, and the screen stays
// ready. The capture is a real one with the message edited in.
func TestMarkersInMessageAreInput(t *testing.T) {
	raw := readScreen(t, "ready-pasted2-home_80x24_v1.18.33")
	sr := Opencode{}.Screen()
	for _, second := range []string{"⬝⬝■■ esc interrupt", "[retrying in 3s attempt #2]", "Build · other", "╹▀▀▀▀▀▀▀▀▀▀"} {
		capture := strings.Replace(raw, "┃  lines", "┃  "+second, 1)
		msg := "two\n" + second
		s := sr.Classify(capture)
		if s.State != harness.ScreenReady || s.Input != msg || !sr.Landed(s, msg) {
			t.Errorf("message %q: screen %v input %q", msg, s.State, s.Input)
		}
	}
}

// TestMessageLikePlaceholderIsInput: only the home screen's hint
// `Ask anything… "<suggestion>"` is an empty box; a message that starts
// with the same words is input and lands.
func TestMessageLikePlaceholderIsInput(t *testing.T) {
	raw := readScreen(t, "ready-pasted-home_80x24_v1.18.33")
	sr := Opencode{}.Screen()
	for _, msg := range []string{"Ask anything… you like", "Ask anything…"} {
		capture := strings.Replace(raw, "please say LEO-abc1 back", msg, 1)
		s := sr.Classify(capture)
		if s.State != harness.ScreenReady || !sr.Landed(s, msg) {
			t.Errorf("message %q: screen %v input %q: never lands", msg, s.State, s.Input)
		}
	}
}

// TestSidebarBesideFooterIsNotFooter: on wide panes the sidebar (whose
// title opencode names after the first message) goes on to the right of
// the box and of its footer, on the same rows; its text is not the footer.
// The capture is a real one with the sidebar's text on the footer row
// edited.
func TestSidebarBesideFooterIsNotFooter(t *testing.T) {
	raw := readScreen(t, "ready-after-turn_200x50_v1.18.33")
	if !strings.Contains(raw, "• OpenCode 1.18.33") {
		t.Fatal("fixture without the sidebar's version on the footer row")
	}
	sr := Opencode{}.Screen()
	for _, title := range []string{"■ esc interrupt", "⬝ retrying in 5s"} {
		capture := strings.Replace(raw, "• OpenCode 1.18.33", title, 1)
		if s := sr.Classify(capture); s.State != harness.ScreenReady {
			t.Errorf("sidebar text %q beside the footer: screen %v", title, s.State)
		}
	}
}
