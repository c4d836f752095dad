package delivery

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxMessageBytes bounds one message. A TUI's input box is no place for
// megabytes, and a bound keeps a hostile sender from filling the daemon.
const MaxMessageBytes = 64 << 10

// TextError says why a message may not be pasted, and where.
type TextError struct {
	Reason string
	// Line and Column (1-based, in characters) locate the offending
	// character; zero when the reason is about the whole message.
	Line, Column int
}

func (e *TextError) Error() string {
	if e.Line == 0 {
		return "message " + e.Reason
	}
	return fmt.Sprintf("message: %s at line %d, column %d; leo pastes text only (newline and tab are the only control characters allowed)", e.Reason, e.Line, e.Column)
}

// PasteText is the one rule for what any sender (CLI, socket, HTTP, MCP, a
// task's prompt) may put into a TUI. A terminal is an interpreter: ESC can
// end a bracketed paste and type keys, NUL and the other C0 and C1 controls
// and DEL are keys; U+2028 and U+2029 are line breaks no terminal draws. So the text that is pasted holds none of them — only
// printable characters, newline and tab. CRLF and a lone CR become LF (a CR
// in a paste is Enter on some TUIs), and trailing newlines are dropped (a
// newline inside a paste is text, not a submit). Invalid UTF-8 is refused:
// a stray byte such as 0x9b is CSI to an 8-bit terminal parser.
//
// It returns the text to paste, or a *TextError naming what and where.
// Nothing is removed silently: a message that breaks the rule is refused
// whole, so what lands is always what was sent.
func PasteText(message string) (string, error) {
	if len(message) > MaxMessageBytes {
		return "", &TextError{Reason: fmt.Sprintf("is %d bytes; the limit is %d", len(message), MaxMessageBytes)}
	}
	line, col := 1, 0
	for i := 0; i < len(message); {
		r, size := utf8.DecodeRuneInString(message[i:])
		col++
		if r == utf8.RuneError && size <= 1 {
			return "", &TextError{Reason: fmt.Sprintf("invalid UTF-8 byte 0x%02x", message[i]), Line: line, Column: col}
		}
		if name, bad := controlName(r); bad {
			return "", &TextError{Reason: fmt.Sprintf("control character %s (U+%04X)", name, r), Line: line, Column: col}
		}
		if r == '\n' || (r == '\r' && !strings.HasPrefix(message[i+1:], "\n")) {
			line, col = line+1, 0
		}
		i += size
	}
	text := strings.ReplaceAll(message, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.TrimRight(text, "\n")
	if strings.TrimSpace(text) == "" {
		return "", &TextError{Reason: "is empty"}
	}
	return text, nil
}

// controlName names r when a terminal would take it as a key or a control
// (everything in C0, DEL and C1 but tab, newline and carriage return), or
// when it breaks a line on no terminal (U+2028 and U+2029: tmux drops them
// from captures, so such a message could never be seen to land).
func controlName(r rune) (string, bool) {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return "", false
	case r < 0x20:
		return c0Names[r], true
	case r == 0x7f:
		return "DEL", true
	case r == 0x2028:
		return "LINE SEPARATOR", true
	case r == 0x2029:
		return "PARAGRAPH SEPARATOR", true
	case r >= 0x80 && r <= 0x9f:
		if r == 0x9b {
			return "CSI", true
		}
		return "C1", true
	}
	return "", false
}

var c0Names = [0x20]string{
	"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
	"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
}
