package harness

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The helpers below are how every adapter's ScreenReader reads a capture.
// What a TUI draws (prompts, markers, dialogs, placeholders) stays data in
// each adapter; where its input line is stays the adapter's own code.

// CaptureTail returns the last n lines of a plain capture, each without
// trailing blanks, and without the blank lines below the last text: the
// input line, the busy line and any modal all live at the bottom of a pane.
func CaptureTail(capture string, n int) []string {
	lines := strings.Split(strings.ReplaceAll(capture, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\u00a0")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// Dialog is a modal that blocks a TUI's input line: any one of Markers on
// screen identifies it, and Keys (tmux send-keys arguments) answer it the
// way leo wants.
type Dialog struct {
	Name    string
	Markers []string
	Keys    []string
}

// FindDialog returns the first of dialogs with a marker on one of lines.
func FindDialog(dialogs []Dialog, lines []string) (Dialog, bool) {
	for _, d := range dialogs {
		for _, l := range lines {
			if containsAny(l, d.Markers) {
				return d, true
			}
		}
	}
	return Dialog{}, false
}

// Screen is the classification of a capture showing d.
func (d Dialog) Screen() Screen {
	return Screen{State: ScreenDialog, Dialog: d.Name, DialogKeys: slices.Clone(d.Keys)}
}

// ShowsMarker reports whether one of lines contains one of markers. Lines
// for which skip is true (transcript text that may quote a marker) are
// not looked at; skip may be nil.
func ShowsMarker(lines, markers []string, skip func(line string) bool) bool {
	for _, l := range lines {
		if skip != nil && skip(l) {
			continue
		}
		if containsAny(l, markers) {
			return true
		}
	}
	return false
}

// Redraw is how a TUI draws a paste in its input line, as its captures
// show (docs/harness-behaviour/<h>.md): the landed check compares the
// input with the paste redrawn the same way, since what lands is drawn,
// not echoed. White space never counts (a tab drawn as spaces, leading
// spaces dropped, a line wrapped), so it needs no field here.
type Redraw struct {
	// Compose: decomposed characters are drawn composed (NFC), e.g.
	// "cafe\u0301" shows as "café".
	Compose bool
	// DropModifiers: emoji skin-tone modifiers (U+1F3FB–U+1F3FF) are not
	// drawn: "👍🏽" shows as "👍".
	DropModifiers bool
}

// Apply returns s as the TUI draws it.
func (r Redraw) Apply(s string) string {
	if r.DropModifiers {
		s = strings.Map(func(c rune) rune {
			if IsSkinTone(c) {
				return -1
			}
			return c
		}, s)
	}
	if r.Compose {
		s = norm.NFC.String(s)
	}
	return s
}

// IsSkinTone reports whether c is one of the five emoji skin-tone
// modifiers (Fitzpatrick types 1-2 to 6).
func IsSkinTone(c rune) bool { return c >= 0x1F3FB && c <= 0x1F3FF }

// PasteLanded reports whether pasted shows in input, or the harness's
// placeholder for a long paste does. Both sides are first redrawn the way
// the TUI draws text (r; the input already is, and redrawing is
// idempotent). Then they are compared with every character that draws
// nothing removed: white space (input lines wrap, and a word too long for
// a row is broken across rows), and the non-graphic ones — format
// characters (U+200B, U+FEFF, bidi marks), controls, the line and
// paragraph separators U+2028/U+2029 — which a terminal may drop from the
// screen (tmux 3.3a captures "e\u2028f" as "ef").
func PasteLanded(input, pasted string, placeholder *regexp.Regexp, r Redraw) bool {
	input, pasted = r.Apply(input), r.Apply(pasted)
	want, got := visible(pasted), visible(input)
	if want == "" {
		// Nothing visible: only the same invisible characters, shown as
		// they are, count.
		want, got = collapse(pasted), collapse(input)
		if want == "" {
			return false
		}
	}
	return strings.Contains(got, want) || placeholder.MatchString(input)
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// visible is s without white space and non-graphic characters.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || !unicode.IsGraphic(r) {
			return -1
		}
		return r
	}, s)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
