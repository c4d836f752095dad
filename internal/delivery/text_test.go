package delivery

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPasteTextNormalizesLineEnds(t *testing.T) {
	for in, want := range map[string]string{
		"a\n": "a", "a\r\nb\r\n": "a\nb", "a\n\n": "a", "a\n\nb": "a\n\nb", "a": "a",
		"a\rb": "a\nb", "tab\there": "tab\there", "é ü 日本": "é ü 日本",
	} {
		got, err := PasteText(in)
		if err != nil || got != want {
			t.Errorf("PasteText(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestPasteTextRefusesWhatATerminalInterprets(t *testing.T) {
	cases := []struct {
		in        string
		what      string
		line, col int
	}{
		// The injection from the review: the end-of-paste sequence then CR.
		{"first\x1b[201~\rINJECTED-SUBMIT\r", "ESC (U+001B)", 1, 6},
		{"hello \x1b[31mRED\x1b[0m end", "ESC (U+001B)", 1, 7},
		{"nul\x00byte", "NUL (U+0000)", 1, 4},
		{"line one\nbell\a", "BEL (U+0007)", 2, 5},
		{"back\bspace", "BS (U+0008)", 1, 5},
		{"del\x7f", "DEL (U+007F)", 1, 4},
		{"c1 \u009b201~", "CSI (U+009B)", 1, 4},
		{"c1 \u0085", "C1 (U+0085)", 1, 4},
		{"a\r\nb\x03", "ETX (U+0003)", 2, 2},
		{"bad \x9b byte", "invalid UTF-8 byte 0x9b", 1, 5},
		{"e\u2028f", "LINE SEPARATOR (U+2028)", 1, 2},
		{"e\u2029f", "PARAGRAPH SEPARATOR (U+2029)", 1, 2},
	}
	for _, c := range cases {
		got, err := PasteText(c.in)
		var te *TextError
		if !errors.As(err, &te) {
			t.Errorf("PasteText(%q) = %q, %v; want a TextError", c.in, got, err)
			continue
		}
		if !strings.Contains(te.Reason, c.what) || te.Line != c.line || te.Column != c.col {
			t.Errorf("PasteText(%q): %v; want %q at %d:%d", c.in, err, c.what, c.line, c.col)
		}
	}
}

func TestPasteTextRefusesEmptyAndHuge(t *testing.T) {
	for _, in := range []string{"", "\n", " \r\n\t", strings.Repeat("x", MaxMessageBytes+1)} {
		if _, err := PasteText(in); err == nil {
			t.Errorf("PasteText(%.20q…) accepted", in)
		}
	}
	if _, err := PasteText(strings.Repeat("x", MaxMessageBytes)); err != nil {
		t.Errorf("a message of exactly the limit: %v", err)
	}
}

// FuzzPasteText: whatever a sender writes, what is pasted is valid UTF-8
// holding no key but text (no control besides newline and tab), never ends
// in a newline, and is the input itself up to line-end normalisation.
func FuzzPasteText(f *testing.F) {
	for _, s := range []string{"hi", "first\x1b[201~\rINJECTED\r", "a\r\nb", "\x00", "\u009b", "tab\t", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := PasteText(in)
		if err != nil {
			return
		}
		if !utf8.ValidString(out) || strings.HasSuffix(out, "\n") || strings.TrimSpace(out) == "" {
			t.Fatalf("PasteText(%q) = %q", in, out)
		}
		for _, r := range out {
			if _, bad := controlName(r); bad || r == '\r' {
				t.Fatalf("PasteText(%q) = %q holds %U", in, out, r)
			}
		}
		norm := strings.ReplaceAll(strings.ReplaceAll(in, "\r\n", "\n"), "\r", "\n")
		if out != strings.TrimRight(norm, "\n") {
			t.Fatalf("PasteText(%q) = %q, changed more than line ends", in, out)
		}
		if again, err := PasteText(out); err != nil || again != out {
			t.Fatalf("PasteText is not idempotent: %q → %q → %q, %v", in, out, again, err)
		}
	})
}
