package harness

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestCaptureTail(t *testing.T) {
	capture := "one\r\ntwo  \t\nthree\u00a0\n\n  \n\n"
	if got, want := CaptureTail(capture, 40), []string{"one", "two", "three"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("CaptureTail = %q, want %q", got, want)
	}
	if got, want := CaptureTail(capture, 2), []string{"two", "three"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("CaptureTail(…, 2) = %q, want %q", got, want)
	}
	if got := CaptureTail("\n \n", 40); len(got) != 0 {
		t.Fatalf("CaptureTail of blanks = %q", got)
	}
}

func TestFindDialog(t *testing.T) {
	dialogs := []Dialog{
		{Name: "trust", Markers: []string{"Do you trust", "trust this folder"}, Keys: []string{"Enter"}},
		{Name: "resume", Markers: []string{"Resume session?"}, Keys: []string{"Escape"}},
	}
	d, ok := FindDialog(dialogs, []string{"banner", "  Resume session? (y/n)", "Yes, I trust this folder"})
	if !ok || d.Name != "trust" {
		t.Fatalf("FindDialog = %+v, %v: want the first dialog listed that shows", d, ok)
	}
	if _, ok := FindDialog(dialogs, []string{"❯ hello", "trust me"}); ok {
		t.Fatal("FindDialog matched without a marker")
	}
	s := d.Screen()
	want := Screen{State: ScreenDialog, Dialog: "trust", DialogKeys: []string{"Enter"}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Screen() = %+v, want %+v", s, want)
	}
	s.DialogKeys[0] = "mutated"
	if dialogs[0].Keys[0] != "Enter" {
		t.Fatal("Screen() shares the dialog's keys")
	}
}

func TestShowsMarker(t *testing.T) {
	markers := []string{"esc to interrupt", "esc interrupt"}
	quoted := func(l string) bool { return strings.HasPrefix(l, ">") }
	if !ShowsMarker([]string{"reply", "✻ Thinking… (esc to interrupt)"}, markers, quoted) {
		t.Error("missed the busy line")
	}
	if ShowsMarker([]string{"> what does esc to interrupt do?"}, markers, quoted) {
		t.Error("looked at a skipped line")
	}
	if !ShowsMarker([]string{"  ⬝⬝⬝ esc interrupt"}, markers, nil) {
		t.Error("a nil skip must look at every line")
	}
	if ShowsMarker(nil, markers, nil) {
		t.Error("no lines, yet a marker")
	}
}

func TestPasteLanded(t *testing.T) {
	placeholder := regexp.MustCompile(`\[Pasted ~?\d+ lines?\]`)
	cases := []struct {
		input, pasted string
		want          bool
	}{
		{"hello world", "hello world", true},
		{"say: hello\nworld, twice", "hello   world", true},
		{"[Pasted ~7 lines]", "a\nb\nc", true},
		{"hell", "hello", false},
		{"", "hello", false},
		{"hello", " \n", false},
		// A word too long for a row is broken across rows.
		{"see https://example.com/aaaa\naaaa then", "see https://example.com/aaaaaaaa then", true},
		// Characters that draw nothing: tmux 3.3a drops U+2028 and U+2029
		// from a capture; format characters may be dropped too.
		{"uni LEO-claude-901 ef please", "uni LEO-claude-901 e\u2028f please", true},
		{"a\nb", "a\u2029b", true},
		{"zero width", "zero\u200b width\ufeff", true},
		{"ctl", "c\x01tl", true},
		{"hello", "\u2028\u200b", false},
		{"e f", "e\u2028g", false},
		// Nothing but invisible characters: only the same, shown as they are.
		{"\x00", "\x00", true},
		{"", "\x00", false},
	}
	for _, c := range cases {
		if got := PasteLanded(c.input, c.pasted, placeholder, Redraw{}); got != c.want {
			t.Errorf("PasteLanded(%q, %q) = %v, want %v", c.input, c.pasted, got, c.want)
		}
	}
}
