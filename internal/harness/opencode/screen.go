package opencode

import (
	"regexp"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// What opencode 1.18's TUI draws, as data; the captures it was read from are
// testdata/screens/opencode/*_v1.18.33.txt and docs/harness-behaviour/opencode.md
// describes them.
//
// The input box is a left border of ┃ lines closed by a bottom edge ╹▀▀▀…:
//
//	<indent>┃
//	<indent>┃  <input, one or more lines>      (or the placeholder)
//	<indent>┃
//	<indent>┃  Build · <model> <provider>      (the mode line)
//	<indent>╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
//	<footer: spinner and "esc interrupt" while a turn runs>
//
// On the home screen (no conversation yet) the box is centred under the logo:
// dozens of columns in and about mid-height. Once a conversation shows, it
// sits two columns in at the bottom of the pane; on wide panes a sidebar is
// drawn to its right, on the same rows. The edge's width is the box's width.
var (
	boxBorder = '┃'
	// edgeCorner and edgeFill draw the box's bottom edge.
	edgeCorner = '╹'
	edgeFill   = '▀'
	// modeSeparator parts agent and model on the mode line.
	modeSeparator = " · "
	// placeholderPrefix begins the empty box's hint on the home screen,
	// `Ask anything… "<a suggestion>"`; after a turn the empty box is blank.
	placeholderPrefix = "Ask anything…"
	// busyMarkers show in the footer under the box while a turn runs: the
	// interrupt hint (the second form after one Esc), the retry status of a
	// failing model call (which can push the hint off a narrow footer), and
	// the glyphs of the spinner at the footer's start.
	busyMarkers = []string{"esc interrupt", "esc again to interrupt", "[retrying", "retrying in", "■", "⬝"}
	// pastedPlaceholder is how opencode shows a paste of three or more lines
	// or a long one ("[Pasted ~3 lines]", "[Pasted ~1 lines]" for 4,000
	// characters on one line); compiled on first use, not at every leo
	// command's start-up.
	pastedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[Pasted ~?\d+ lines?\]`)
	})
)

// footerLines is how many lines under the box's edge hold its footer (the
// busy line wraps to two on narrow panes).
const footerLines = 2

// Screen classifies captures of opencode's TUI.
func (Opencode) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify finds the input box anywhere in the capture (the last bottom edge
// with a mode line above it), reads the input from its lines (cut at the
// box's width, so a sidebar beside it is not read) and calls the screen busy
// when the footer shows the spinner or interrupt hint, or when the sent
// message's echo is the last thing above the box with no reply started under
// it (the second or so between Enter and the spinner). A permission prompt
// or a question in the box's place is a dialog for a person
// (screen_prompt.go). opencode
// shows no start-up dialog leo must answer, and draws nothing but blank
// rows until its box is up.
func (screen) Classify(capture string) harness.Screen {
	lines := splitLines(capture)
	b, ok := findBox(lines)
	// A prompt for a person takes the box's place; leo never answers it.
	if p, row, found := findPrompt(lines); found && (!ok || row > b.edge) {
		return harness.Screen{State: harness.ScreenDialog, Dialog: p.Kind, Prompt: p}
	}
	if !ok {
		return harness.Screen{State: harness.ScreenStarting}
	}
	input := b.input(lines)
	// The footer is read only under the box: on wide panes the sidebar
	// (the session's title, named after the first message) goes on to
	// the right, on the same rows.
	var footer []string
	for _, l := range lines[b.edge+1 : min(len(lines), b.edge+1+footerLines)] {
		footer = append(footer, string(l[:min(len(l), b.col+b.width)]))
	}
	if harness.ShowsMarker(footer, busyMarkers, nil) || b.pendingEcho(lines) {
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// Landed reports whether pasted shows in the box (the same visible
// characters, however the box wrapped or broke a word), or as opencode's
// [Pasted ~N lines] placeholder.
// The paste is compared as opencode draws it (Redraw).
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pastedPlaceholder(), Redraw)
}

// Redraw is how opencode's box draws a paste (1.18.33,
// testdata/screens/opencode/ready-pasted-*): as pasted — skin-tone
// modifiers and decomposed accents kept — but a tab as two spaces and
// leading spaces dropped, which the landed check ignores anyway.
var Redraw = harness.Redraw{}

// splitLines splits a plain capture into lines of runes, trailing blanks
// removed (opencode paints every cell, so captures carry full-width rows).
func splitLines(capture string) [][]rune {
	raw := strings.Split(strings.ReplaceAll(capture, "\r\n", "\n"), "\n")
	out := make([][]rune, len(raw))
	for i, l := range raw {
		out[i] = []rune(strings.TrimRight(l, " \t\u00a0"))
	}
	return out
}

// box is where the input box is: its border column, its width (the edge's),
// the row of its first ┃ line, of its mode line and of its edge.
type box struct {
	col, width      int
	top, mode, edge int
}

// findBox returns the lowest box: a bottom edge (only spaces before ╹, then
// ▀ to its end) whose line above is a mode line in the same column.
func findBox(lines [][]rune) (box, bool) {
	for i := len(lines) - 1; i > 0; i-- {
		col, width, ok := edgeAt(lines[i])
		if !ok || !isModeLine(lines[i-1], col, width) {
			continue
		}
		b := box{col: col, width: width, mode: i - 1, edge: i, top: i - 1}
		for b.top > 0 && borderAt(lines[b.top-1], col) {
			b.top--
		}
		return b, true
	}
	return box{}, false
}

// edgeAt reports whether l is a box's bottom edge, and its column and width.
func edgeAt(l []rune) (col, width int, ok bool) {
	col = leadingSpaces(l)
	if col >= len(l) || l[col] != edgeCorner {
		return 0, 0, false
	}
	fill := 0
	for _, r := range l[col+1:] {
		if r != edgeFill {
			return 0, 0, false
		}
		fill++
	}
	if fill == 0 {
		return 0, 0, false
	}
	return col, fill + 1, true
}

// borderAt reports whether l has the box border at col with only spaces
// before it.
func borderAt(l []rune, col int) bool {
	return col < len(l) && l[col] == boxBorder && leadingSpaces(l) == col
}

// isModeLine: the border at col and, within the box's width, the mode
// separator.
func isModeLine(l []rune, col, width int) bool {
	if !borderAt(l, col) {
		return false
	}
	return strings.Contains(cell(l, col, width), modeSeparator)
}

// cell is the text of a box line inside the box: after the border, up to
// the box's width (a sidebar may follow on the same row), spaces trimmed.
func cell(l []rune, col, width int) string {
	end := min(len(l), col+width)
	if col+1 >= end {
		return ""
	}
	return strings.TrimSpace(string(l[col+1 : end]))
}

func leadingSpaces(l []rune) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// input is the box's text: its lines above the mode line, blank ones left
// out, joined by newlines; the home screen's placeholder is no input.
func (b box) input(lines [][]rune) string {
	var parts []string
	for _, l := range lines[b.top:b.mode] {
		if t := cell(l, b.col, b.width); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 1 && isPlaceholder(parts[0]) {
		return ""
	}
	return strings.Join(parts, "\n")
}

// isPlaceholder: the home screen's hint, `Ask anything… "<a suggestion>"`;
// a message that merely starts with the same words is input.
func isPlaceholder(t string) bool {
	rest, ok := strings.CutPrefix(t, placeholderPrefix+` "`)
	return ok && strings.HasSuffix(rest, `"`)
}

// pendingEcho reports whether the last thing drawn above the box is the
// echo of a sent message (a ┃ block in the box's column) rather than the
// reply's footer line (▣ <agent> · <model>…): Enter was taken and the reply
// has not started. Only the transcript can show this: the home screen has
// the logo above its box.
func (b box) pendingEcho(lines [][]rune) bool {
	for i := b.top - 1; i >= 0; i-- {
		l := lines[i]
		if strings.TrimSpace(string(l[:min(len(l), b.col+b.width)])) == "" {
			continue
		}
		return borderAt(lines[i], b.col)
	}
	return false
}
