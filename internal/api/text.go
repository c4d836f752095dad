package api

import (
	"unicode/utf8"
)

// CheckText is invalid_args when s, the value of field, is not valid UTF-8.
// JSON cannot carry such bytes (encoding/json turns each into U+FFFD), so
// text holding one is refused before it is encoded, never changed: what
// lands is what was sent.
func CheckText(field, s string) error {
	if off, ok := invalidUTF8(s); ok {
		return Errorf(CodeInvalidArgs, "%s: invalid UTF-8 byte 0x%02x at byte %d; leo refuses text it would have to change", field, s[off], off)
	}
	return nil
}

// CheckJSONText is invalid_args when the raw JSON body would not decode
// to exactly the text that was sent: bytes that are not UTF-8, or a \u
// escape of a lone UTF-16 surrogate. encoding/json silently replaces
// either with U+FFFD, so this runs on the bytes, before decoding. what
// names the body in the error ("POST /agents/a/send: request body").
func CheckJSONText(what string, raw []byte) error {
	if off, ok := invalidUTF8(string(raw)); ok {
		return Errorf(CodeInvalidArgs, "%s: invalid UTF-8 byte 0x%02x at byte %d; leo refuses text it would have to change", what, raw[off], off)
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			r, ok := hexEscape(raw, i)
			if !ok {
				i++ // an escaped character (\", \\, \n…), or a bad escape the decoder refuses
				continue
			}
			switch {
			case r >= 0xd800 && r < 0xdc00:
				if lo, ok := hexEscape(raw, i+6); ok && lo >= 0xdc00 && lo < 0xe000 {
					i += 11
					continue
				}
				fallthrough
			case r >= 0xdc00 && r < 0xe000:
				return Errorf(CodeInvalidArgs, "%s: \\u%04x at byte %d is half of a UTF-16 surrogate pair, not a character; leo refuses text it would have to change", what, r, i)
			}
			i += 5
		}
	}
	return nil
}

// hexEscape reads a \uXXXX escape at raw[i:].
func hexEscape(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range raw[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// invalidUTF8 is the offset of the first byte of s that is not UTF-8.
func invalidUTF8(s string) (int, bool) {
	if utf8.ValidString(s) {
		return 0, false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, true
		}
		i += size
	}
	return 0, false
}
