package tmux

import (
	"strings"
	"unicode/utf8"
)

// quoteArg renders one argument in tmux's command language so that a
// command line sent over control mode parses back to exactly these bytes.
//
// Arguments made only of "safe" characters go unquoted. Everything else is
// double-quoted, and inside the quotes we escape what tmux's parser would
// otherwise interpret: backslash, double quote, $ (variable expansion), ~
// (home expansion at the start of a token), every control byte (a raw CR or
// LF would end the line) and every byte that is not valid UTF-8 (the parser
// rejects them raw). Control and invalid bytes become octal escapes \ooo,
// which tmux turns back into the raw byte. Valid non-ASCII UTF-8 passes as
// is. tmux's own escapes are documented in tmux(1) "PARSING SYNTAX".
func quoteArg(s string) string {
	if s != "" && isSafeUnquoted(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\' || c == '"' || c == '$' || c == '~':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20 || c == 0x7f:
				writeOctal(&b, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			writeOctal(&b, c)
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

func writeOctal(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + c>>6)
	b.WriteByte('0' + (c>>3)&7)
	b.WriteByte('0' + c&7)
}

// isSafeUnquoted reports whether s can be sent as a bare token: no
// whitespace, quotes, ;, braces, #, $, ~ or backslash, nothing non-ASCII.
func isSafeUnquoted(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_=.:/@,+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// commandLine joins args into one control-mode command line.
func commandLine(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteArg(a))
	}
	return b.String()
}
