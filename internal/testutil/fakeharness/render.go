package main

import (
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// draw repaints the whole screen: home, every line followed by
// erase-to-end-of-line, then erase below. Unlike a full clear this does
// not push copies of the screen into tmux's history (scroll-on-clear), so
// capture-pane shows exactly the current state and scrollback stays clean.
func (t *tui) draw() {
	width, height, err := term.GetSize(int(t.out.Fd()))
	if err != nil || width <= 0 || height <= 0 {
		width, height = 80, 24
	}
	var lines []string
	var curLine, curCol int
	if t.role == roleOpencode && !t.trust {
		lines, curLine, curCol = t.opencodeScreen(width, height)
	} else {
		var top, bottom []string
		top, bottom, curLine, curCol = t.layout(width)
		if t.role == roleCodex && !t.trust && len(top)+len(bottom) < height {
			// codex keeps its composer on the pane's last rows.
			top = append(top, make([]string, height-len(top)-len(bottom))...)
		}
		lines = append(top, bottom...)
		curLine += len(top)
		if extra := len(lines) - height; extra > 0 && t.role == roleClaude {
			// The real claude scrolls: the oldest lines, banner first,
			// leave the top of the pane.
			lines = lines[extra:]
			curLine -= extra
		} else {
			lines, curLine = t.fit(lines, top, curLine, height)
		}
	}
	t.paint(lines, curLine, curCol, width)
}

// fit drops the oldest transcript lines (just below the banner) of a
// screen taller than the pane.
func (t *tui) fit(lines, top []string, curLine, height int) ([]string, int) {
	if extra := len(lines) - height; extra > 0 {
		// Too tall: drop the oldest transcript lines (just below the banner).
		banner := t.bannerHeight()
		if extra > len(top)-banner {
			extra = len(top) - banner
		}
		lines = append(lines[:banner:banner], lines[banner+extra:]...)
		curLine -= extra
		if len(lines) > height {
			cut := len(lines) - height
			lines = lines[cut:]
			curLine -= cut
		}
	}
	return lines, curLine
}

// paint writes lines from the top of the pane and puts the cursor.
func (t *tui) paint(lines []string, curLine, curCol, width int) {
	var b strings.Builder
	b.WriteString("\x1b[H")
	for i, l := range lines {
		if t.role == roleOpencode {
			// opencode repaints whole rows: a row tmux marked wrapped
			// when the window shrank is cleared, so capture-pane -J
			// never joins it to the next (claude's and codex's fakes
			// keep the behaviour their readers are tested against).
			b.WriteString("\x1b[2K")
		}
		b.WriteString(truncate(l, width))
		b.WriteString("\x1b[K")
		if i < len(lines)-1 {
			b.WriteString("\r\n")
		}
	}
	b.WriteString("\x1b[J")
	if curLine < 0 {
		curLine = 0
	}
	fmt.Fprintf(&b, "\x1b[%d;%dH", curLine+1, min(curCol, width-1)+1)
	os.Stdout.WriteString(b.String())
}

func truncate(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width])
}

func (t *tui) bannerHeight() int {
	if t.trust || t.role == roleCodex { // codex's banner scrolls away with the history
		return 0
	}
	return len(t.banner())
}

// layout returns the screen's upper part (banner and transcript, which may
// be trimmed) and its lower part (busy line, input box, footer), and where
// the cursor goes within the lower part.
func (t *tui) layout(width int) (top, bottom []string, curLine, curCol int) {
	if t.trust && t.role == roleClaude {
		return nil, t.claudeTrustLines(width), 0, 0
	}
	if t.trust {
		return nil, t.trustLines(width), 0, 0
	}
	top = append(t.banner(), t.history...)
	inputLines := strings.Split(t.inputDisplay(), "\n")
	switch t.role {
	case roleClaude:
		top = append(claudeBanner(width, t.model), t.history...)
		bottom, curLine, curCol = t.claudeBottom(width, inputLines)
	case roleCodex:
		return t.codexLayout(width)
	case rolePi:
		return t.piLayout(width)
	case roleOpencode:
		curLine = len(bottom) + len(inputLines) - 1
		if len(t.input) == 0 {
			bottom = append(bottom, "┃  Ask anything…")
			curCol = 3
		} else {
			bottom, curCol = withPrompt(bottom, inputLines, "┃  ", "┃  ")
		}
		bottom = append(bottom, "┃  Build · "+t.model, "")
		if t.busy {
			bottom = append(bottom, "  ⬝⬝⬝ esc interrupt")
		}
		bottom = append(bottom, "  ctrl+p commands")
	}
	return top, bottom, curLine, curCol
}

// withPrompt appends the input lines to bottom, the first after first and
// the others after rest, and returns the cursor's column: just after the
// last line's text (first and rest are as wide).
func withPrompt(bottom, lines []string, first, rest string) ([]string, int) {
	for i, l := range lines {
		if i == 0 {
			bottom = append(bottom, first+l)
		} else {
			bottom = append(bottom, rest+l)
		}
	}
	return bottom, utf8.RuneCountInString(first) + utf8.RuneCountInString(lines[len(lines)-1])
}

func (t *tui) banner() []string {
	switch t.role {
	case roleClaude:
		return []string{"✻ Welcome to Claude Code (fake)", "", "  cwd: " + cwd(), ""}
	case roleCodex:
		return t.codexBanner()
	default:
		return []string{"  opencode (fake)", ""}
	}
}

// indent renders a possibly multi-line message: first line after prefix,
// the rest indented to match.
func indent(prefix, cont, msg string) []string {
	ls := strings.Split(msg, "\n")
	out := make([]string, len(ls))
	for i, l := range ls {
		if i == 0 {
			out[i] = prefix + l
		} else {
			out[i] = cont + l
		}
	}
	return out
}

func (t *tui) userLines(msg string) []string {
	switch t.role {
	case rolePi:
		return append(append([]string{""}, indent(" ", " ", msg)...), "")
	case roleClaude:
		return claudeUserLines(msg)
	case roleCodex:
		return codexUserLines(msg)
	default:
		var block []string
		if n := len(t.history); n > 0 && t.history[n-1] != "" {
			block = append(block, "")
		}
		block = append(block, "  ┃")
		return append(append(block, indent("  ┃  ", "  ┃  ", msg)...), "  ┃", "")
	}
}

func (t *tui) replyLines(reply string) []string {
	switch t.role {
	case rolePi:
		return append(indent(" ", " ", reply), "")
	case roleClaude:
		return claudeReplyLines(reply, time.Since(t.busySince))
	case roleCodex:
		return t.codexReplyLines(reply)
	default:
		secs := time.Since(t.busySince).Seconds()
		return append(indent("     ", "     ", reply), "", fmt.Sprintf("     ▣  Build · %s · %.1fs", t.model, secs), "")
	}
}

func (t *tui) interruptedLine() string {
	switch t.role {
	case rolePi:
		return " Operation aborted"
	case roleClaude:
		return "  ⎿  Interrupted by user"
	case roleCodex:
		return "■ Conversation interrupted"
	default:
		return "     ▣  Build · " + t.model
	}
}

func (t *tui) trustLines(width int) []string {
	mark := func(i int, s string) string {
		if t.trustSel == i {
			if t.role == roleCodex {
				return "› " + s
			}
			return "❯ " + s
		}
		return "  " + s
	}
	if t.role == roleCodex {
		return codexTrustLines(mark, width)
	}
	return []string{
		"Do you trust the files in this folder?",
		"",
		cwd(),
		"",
		"Claude Code may read, write, or execute files contained in this directory.",
		"",
		mark(0, "1. Yes, proceed"),
		mark(1, "2. No, exit"),
		"",
		"Enter to confirm · Esc to exit",
	}
}
