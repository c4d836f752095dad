package codex

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The strings codex's TUI draws, kept as data. They were read off the real
// codex-cli 0.171.0 (fixtures under testdata/screens/codex, named with the
// version; docs/harness-behaviour/codex.md describes every screen).
var (
	// composerPrefix starts the composer line, in column 0 (and, in the
	// history above it, each message the user sent).
	composerPrefix = "›"
	// placeholders are drawn dimmed in an empty composer; a plain capture
	// can't tell dim from typed, so they are matched literally.
	placeholders = []string{
		"Ask Codex to do anything",
		"Explain this codebase",
		"Summarize recent commits",
		"Implement {feature}",
		"Find and fix a bug in @filename",
		"Write tests for @filename",
		"Improve documentation in @filename",
		"Run /review on my current changes",
		"Use /skills to list available skills",
	}
	// busyMarker ends the status line of a turn in flight, drawn in column
	// 0 above the composer: "• Working (3s • esc to interrupt)",
	// "◦ Reconnecting... 2/5 (8s • esc to interrupt)".
	busyMarker = "esc to interrupt"
	// heldMarker replaces the footer hint after Enter while the TUI has not
	// finished starting: it keeps the text and submits it later.
	heldMarker = "Waiting for startup"
	// footerMarkers identify codex's footer under the composer: its hint
	// line ("← for agents · ? for shortcuts", "tab to queue message",
	// "Waiting for startup  · esc cancel", "⚠ 2 warnings · f2 to view")
	// and its status line ("gpt-5 default · ~/src/app · <title>").
	footerMarkers = []string{" · ", "? for shortcuts", "tab to queue message", heldMarker, "esc cancel", "f2 to view"}
	// loadingHeader is the header's second line until the session is
	// configured (it shows the workspace afterwards).
	loadingHeader = "loading"
	headerTitle   = ">_ OpenAI Codex"
	// resumingLine shows under the header while `codex resume` loads.
	resumingLine = "Resuming session…"
	// dialogs block the composer; Keys answer them (trust the workspace).
	dialogs = []harness.Dialog{
		{Name: "trust", Markers: []string{
			"Trust this folder?", // 0.171.0: "› 1. Trust and continue" is preselected
			"Do you trust the contents of this directory?",
			"allow Codex to work in this folder",
		}, Keys: []string{"Enter"}},
	}
	// pastedPlaceholder is how codex shows a paste of more than 1,000
	// characters; compiled on first use, not at every leo command's start-up.
	pastedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[Pasted Content \d+ chars\]`)
	})
)

// Screen classifies captures of codex's TUI.
func (Codex) Screen() harness.ScreenReader { return screen{} }

type screen struct{}

// Classify reads a whole capture; the composer may sit on any row of a pane
// of any height. Codex draws, from the bottom up: its footer (a hint line —
// or "Waiting for startup" — and a status line, both indented), a blank
// padding row, the composer ("› " in column 0, continuation lines indented
// by two), and above it the busy line of a running turn, then the history.
//
//   - a dialog (trust) on screen wins; the approval prompt is a dialog
//     too, with its Prompt and no keys (approval.go);
//   - no composer, or the header still "loading": starting;
//   - "Waiting for startup" below the composer: starting, Held (Enter was
//     taken; codex submits what the composer holds once it has started);
//   - a busy line just above the composer: busy;
//   - otherwise ready.
func (screen) Classify(capture string) harness.Screen {
	lines := captureLines(capture)
	at, input, footer, ok := findComposer(lines)
	// A dialog replaces the composer, so one is looked for only when there
	// is no composer: with one, a marker below it is the user's text or
	// the thread's title (the first message) in the status line.
	if !ok {
		if d, found := harness.FindDialog(dialogs, notSent(lines)); found {
			return d.Screen()
		}
		// The approval prompt asks a person: leo never answers it.
		if p, found := findApproval(lines); found {
			return harness.Screen{State: harness.ScreenDialog, Dialog: "approval", Prompt: p}
		}
	}
	if !ok || loading(lines[:at]) {
		return harness.Screen{State: harness.ScreenStarting}
	}
	if held(footer) {
		return harness.Screen{State: harness.ScreenStarting, Held: true}
	}
	if busyAbove(lines[:at]) {
		return harness.Screen{State: harness.ScreenBusy, Input: input}
	}
	return harness.Screen{State: harness.ScreenReady, Input: input}
}

// Landed reports whether pasted shows in the composer (the same visible
// characters, however wrapped: a word longer than the composer's width is
// broken across rows), or as codex's [Pasted Content N chars] placeholder.
// The paste is compared as codex draws it (Redraw).
func (screen) Landed(s harness.Screen, pasted string) bool {
	return harness.PasteLanded(s.Input, pasted, pastedPlaceholder(), Redraw)
}

// Redraw is how codex's composer draws a paste (0.171.0,
// testdata/screens/codex/ready-pasted-*): skin-tone modifiers dropped
// ("👍🏽" as "👍"), decomposed accents kept as they are, a tab as one
// space, leading spaces dropped.
var Redraw = harness.Redraw{DropModifiers: true}

// captureLines splits a plain capture into lines without trailing blanks
// (codex pads its composer rows with spaces) and drops the blank rows
// below the last text. Every row is kept: there is no window.
func captureLines(capture string) []string {
	lines := strings.Split(strings.ReplaceAll(capture, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\u00a0")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// findComposer returns the index of the composer line, its input (the
// continuation lines, less the two columns of the prompt, joined by "\n";
// "" for a placeholder) and the footer lines under it. The composer is the
// last "›" line in column 0, and below it come only its indented
// continuation lines (and blank rows of the text), a blank padding row,
// and indented footer lines. A "›" line followed by anything in column 0
// (a reply, the busy line) is a sent message in the history; "› 1. Yes" is
// a dialog's selected option.
func findComposer(lines []string) (at int, input string, footer []string, ok bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !strings.HasPrefix(l, composerPrefix) {
			if l == "" || isIndented(l) {
				continue
			}
			return 0, "", nil, false
		}
		if isMenuChoice(l) {
			return 0, "", nil, false
		}
		below := lines[i+1:]
		text, footer := splitFooter(below)
		parts := []string{strings.TrimPrefix(l, composerPrefix)}
		for _, c := range text {
			parts = append(parts, strings.TrimPrefix(c, "  "))
		}
		text0 := strings.TrimSpace(strings.Join(parts, "\n"))
		if slices.Contains(placeholders, text0) {
			text0 = ""
		}
		return i, text0, footer, true
	}
	return 0, "", nil, false
}

// splitFooter splits the rows below the composer line into the text's
// continuation rows and the footer. The footer is the run of footer-like
// rows at the bottom that follows a blank padding row: the text's own rows
// may look like footer rows (a pasted "a · b"), but codex always draws the
// padding row between the text and the footer. A blank row inside the
// text (a pasted paragraph break) stays text.
func splitFooter(below []string) (text, footer []string) {
	end := len(below)
	for end > 0 && below[end-1] == "" {
		end--
	}
	start := end
	for start > 0 && isFooter(below[start-1]) {
		start--
	}
	if start == end || start == 0 || below[start-1] != "" {
		// No footer, or footer-like rows that no padding row separates
		// from the composer line: text.
		return below[:end], nil
	}
	return below[:start], below[start:end]
}

// held: the footer's hint line says codex is waiting for its start-up to
// submit ("  Waiting for startup  · esc cancel"). The status line above it
// may show the same words in the thread's title (the first message), but
// never at its start, where the model's name is.
func held(footer []string) bool {
	for _, l := range footer {
		if strings.HasPrefix(strings.TrimSpace(l), heldMarker) {
			return true
		}
	}
	return false
}

// notSent is lines without the sent messages of the history ("› text" in
// column 0, not a dialog's "› 1. …"), which may quote a dialog's text.
func notSent(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.HasPrefix(l, composerPrefix) && !isMenuChoice(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// isFooter: a line of the footer under the composer (always indented).
func isFooter(l string) bool {
	if !isIndented(l) {
		return false
	}
	for _, m := range footerMarkers {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

// isIndented: a footer, continuation or detail line (never column 0).
func isIndented(l string) bool {
	return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
}

// loading: the header above the composer still says "loading" where the
// workspace will show, or "Resuming session…" shows under it while
// `codex resume` loads the thread.
func loading(above []string) bool {
	for i, l := range above {
		if !strings.Contains(l, headerTitle) {
			continue
		}
		if i+1 < len(above) && strings.TrimSpace(above[i+1]) == loadingHeader {
			return true
		}
		for _, r := range above[i+1 : min(len(above), i+4)] {
			if strings.TrimSpace(r) == resumingLine {
				return true
			}
		}
		return false
	}
	return false
}

// busyAbove: the first column-0 line above the composer (skipping blanks
// and indented detail lines such as "  └ …") is the busy line of a running
// turn, which ends in "esc to interrupt)". A sent message ("› …") there
// is not: it may quote the marker.
func busyAbove(above []string) bool {
	for i := len(above) - 1; i >= 0; i-- {
		l := above[i]
		if l == "" || isIndented(l) {
			continue
		}
		return !strings.HasPrefix(l, composerPrefix) && strings.Contains(l, busyMarker)
	}
	return false
}

// isMenuChoice: "› 1. Yes, continue" is a dialog's selected option. It is
// the regexp ^›\s*\d+\.\s written out (\s is RE2's [\t\n\f\r ]), so no
// leo command compiles it at start-up; screen_match_test.go pins the two
// together.
func isMenuChoice(l string) bool {
	rest, ok := strings.CutPrefix(l, "›")
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, reSpace)
	n := 0
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(rest) && rest[n] == '.' && strings.IndexByte(reSpace, rest[n+1]) >= 0
}

// reSpace is what \s matches in Go's regexps.
const reSpace = "\t\n\f\r "
