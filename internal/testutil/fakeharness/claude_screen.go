package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// What the fake claude draws, copied from captures of the real claude
// 2.1.197 (testdata/screens/claude, docs/harness-behaviour/claude.md):
//
//	╭─── Claude Code (fake) ─────────────────────╮   banner, at most 104 wide
//	│ … 9 rows of two columns …                  │
//	╰────────────────────────────────────────────╯
//	                                                 two blank rows
//	❯ a sent message                                 transcript: message,
//	                                                 blank,
//	● echo: a sent message                           reply,
//	                                                 blank,
//	✻ Worked for 1s                                  how long it took,
//	                                                 blank
//	✶ Thinking…                                      (while busy, then a blank row)
//	──────────────────────────────────── full width
//	❯ input                                          wrapped lines indented 2
//	──────────────────────────────────── full width
//	  ? for shortcuts · ← for agents                 ("esc to interrupt" while busy,
//	                                                  blank while the input has text)
//
// Everything is drawn from the top of the pane down, with blank rows below;
// a transcript taller than the pane scrolls the banner off the top.

// claudeBannerMax is the widest the real banner box gets.
const claudeBannerMax = 104

// claudeLeftCol is the width of the banner's left column.
const claudeLeftCol = 47

// claudeSpinner are the glyphs the real spinner cycles through.
var claudeSpinner = []string{"·", "✢", "✳", "✶", "✻", "✽"}

// claudeCwd is the directory as the real claude sees it: its real path.
// It trusts, names transcripts and shows the workspace by it.
func claudeCwd() string {
	d := cwd()
	if real, err := filepath.EvalSymlinks(d); err == nil {
		return real
	}
	return d
}

func claudeBanner(width int, model string) []string {
	bw := min(width, claudeBannerMax)
	if bw < claudeLeftCol+4 {
		bw = claudeLeftCol + 4
	}
	title := "╭─── Claude Code (fake) "
	top := title + strings.Repeat("─", max(0, bw-utf8.RuneCountInString(title)-1)) + "╮"
	left := []string{"", "Welcome to Claude Code", "", "▐▛███▜▌", "▝▜█████▛▘", "▘▘ ▝▝", "", model + " · API Usage Billing", claudeCwd()}
	rw := bw - claudeLeftCol - 3
	right := []string{"Tips for getting started", "Ask Claude to create a new app or clone a repository", strings.Repeat("─", max(0, rw-2)), "What's new", "Check the Claude Code changelog for updates"}
	out := []string{top}
	for i, l := range left {
		r := ""
		if i < len(right) {
			r = right[i]
		}
		out = append(out, "│"+center(l, claudeLeftCol)+"│"+pad(" "+r, rw)+"│")
	}
	return append(out, "╰"+strings.Repeat("─", bw-2)+"╯", "", "")
}

// center pads s with spaces on both sides to w runes (cut when longer).
func center(s string, w int) string {
	s = truncate(s, w)
	n := utf8.RuneCountInString(s)
	left := (w - n) / 2
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", w-n-left)
}

// pad pads s on the right to w runes (cut when longer).
func pad(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = truncate(s, w)
	return s + strings.Repeat(" ", w-utf8.RuneCountInString(s))
}

// claudeBottom is the spinner (while busy), the input box and the footer,
// and where the cursor goes in them.
func (t *tui) claudeBottom(width int, inputLines []string) (bottom []string, curLine, curCol int) {
	if t.perm != nil {
		bottom = t.claudePermissionLines(width)
		return bottom, len(bottom) - 6 + t.perm.sel, 1
	}
	rule := strings.Repeat("─", width)
	if t.busy {
		frame := int(time.Since(t.busySince)/time.Second) % len(claudeSpinner)
		bottom = append(bottom, claudeSpinner[frame]+" Thinking…", "")
	}
	bottom = append(bottom, rule)
	curLine = len(bottom) + len(inputLines) - 1
	// The real one draws "❯" + NO-BREAK SPACE; the fake draws a plain
	// space, which tests of other packages look for (the reader reads both).
	bottom, curCol = withPrompt(bottom, inputLines, "❯ ", "  ")
	footer := "  ? for shortcuts · ← for agents"
	switch {
	case len(t.input) > 0:
		footer = ""
	case t.busy:
		footer = "  esc to interrupt · ← for agents"
	}
	return append(bottom, rule, footer), curLine, curCol
}

func claudeUserLines(msg string) []string {
	return append(indent("❯ ", "  ", msg), "")
}

func claudeReplyLines(reply string, took time.Duration) []string {
	return append(indent("● ", "  ", reply), "", fmt.Sprintf("✻ Worked for %ds", int(took.Round(time.Second)/time.Second)), "")
}

// claudeTrustLines is the real trust dialog; once answered the chosen
// option carries ✔ while claude acts on it.
func (t *tui) claudeTrustLines(width int) []string {
	yes := "1. Yes, I trust this folder"
	if t.trustAnswering {
		yes += " ✔"
	}
	mark := func(i int, s string) string {
		if t.trustSel == i {
			return " ❯ " + s
		}
		return "   " + s
	}
	return []string{
		"",
		strings.Repeat("─", width),
		" Accessing workspace:",
		"",
		" " + claudeCwd(),
		"",
		" Quick safety check: Is this a project you created or one you trust? (Like your",
		" own code, a well-known open source project, or work from your team). If not,",
		" take a moment to review what's in this folder first.",
		"",
		" Claude Code'll be able to read, edit, and execute files here.",
		"",
		" Security guide",
		"",
		mark(0, yes),
		mark(1, "2. No, exit"),
		"",
		" Enter to confirm · Esc to cancel",
	}
}

// claudePastePlaceholder: the real claude shows a paste of more than 800
// characters, or of four lines or more, as a placeholder; shorter ones in
// full.
func claudePastePlaceholder(s string, n int) (string, bool) {
	lines := strings.Count(s, "\n")
	if len(s) <= 800 && lines < 3 {
		return "", false
	}
	if lines > 0 {
		return fmt.Sprintf("[Pasted text #%d +%d lines]", n, lines), true
	}
	return fmt.Sprintf("[Pasted text #%d]", n), true
}

// claudeTrustAnswerDelay is how long the answered dialog stays (the real
// one: about 3 s); keys sent meanwhile are kept and applied after it.
func claudeTrustAnswerDelay() time.Duration { return envMS("FAKE_TRUST_ANSWER_MS", 1000) }

// claudeLagSubmit imitates the real claude's lag after Enter: the message
// goes into the transcript at once, while the box keeps showing it and no
// spinner shows for FAKE_SUBMIT_LAG_MS (the real one: 1-4 s; the fake's
// default is 0, no lag). It reports whether it took the Enter; keys
// pressed during the lag are dropped with the box's text when it ends.
func (t *tui) claudeLagSubmit(msg string) bool {
	lag := envMS("FAKE_SUBMIT_LAG_MS", 0)
	if t.role != roleClaude || lag == 0 || t.busy {
		return false
	}
	if t.lagging {
		return true
	}
	m := strings.TrimSpace(msg)
	if _, _, isCmd := fakeCommand(m); m == "" || isCmd {
		return false
	}
	t.lagging = true
	t.store.submit(msg)
	time.AfterFunc(lag, func() { t.submitLagCh <- msg })
	return true
}
