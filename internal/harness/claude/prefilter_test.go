package claude

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The same user entry written with a space after each colon (any JSON
// writer may) is read like claude's compact form. Before the fix the
// prefilter wanted the bytes "type":"user" and skipped it.
func TestUserTurnOfSpacedJSON(t *testing.T) {
	for _, line := range []string{
		`{"type": "user", "message": {"role": "user", "content": "spaced MARKSP"}, "sessionId": "s1"}`,
		`{"type":"user","message":{"role":"user","content":[{"type": "text", "text": "spaced part MARKSP"}]},"sessionId":"s1"}`,
		`{"TYPE":"user","message":{"role":"user","content":"key case MARKSP"},"sessionId":"s1"}`,
		`{"type":"\u0075ser","message":{"role":"user","content":"escaped MARKSP"},"sessionId":"s1"}`,
		// A nested "message" before the entry's own.
		`{"type":"user","toolUseResult":{"message":{"role":"user","content":[1]}},"message":{"role":"user","content":"nested MARKSP"},"sessionId":"s1"}`,
	} {
		u, ok := userTurnOfLine([]byte(line), "fb")
		if !ok || !strings.Contains(u.Text, "MARKSP") || u.SessionID != "s1" {
			t.Errorf("userTurnOfLine(%s) = %+v, %v; want its text", line, u, ok)
		}
	}
}

// A prefilter must never reject a line the decoder would accept: entries
// written every way JSON allows (spacing, key case and order, escapes,
// duplicate and nested keys, text parts among tool results), and any bytes.
func TestPrefilterNeverRejectsADecodedLine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var line string
		if rapid.Bool().Draw(t, "raw") {
			line = rapid.String().Draw(t, "line")
		} else {
			line = genEntry(t)
		}
		if _, ok := decodeUserTurn([]byte(line), "fb"); ok && !mayBeUser([]byte(line)) {
			t.Fatalf("the prefilter rejects a line the decoder reads as a user turn:\n%s", line)
		}
	})
}

// genEntry writes a transcript entry as some JSON writer might.
func genEntry(t *rapid.T) string {
	ws := func(label string) string {
		return rapid.SampledFrom([]string{"", " ", "  ", "\t", "\r", " \t"}).Draw(t, label)
	}
	str := func(label, s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r == '"' || r == '\\':
				b.WriteString(`\` + string(r))
			case r < 0x20 || rapid.IntRange(0, 9).Draw(t, label) == 0:
				if r > 0xffff {
					r1, r2 := utf16Pair(r)
					fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	key := func(label, k string) string {
		if rapid.Bool().Draw(t, label+"-case") {
			k = strings.ToUpper(k[:1]) + k[1:]
		}
		return str(label, k)
	}
	obj := func(label string, fields [][2]string) string {
		perm := rapid.Permutation(fields).Draw(t, label+"-order")
		parts := make([]string, len(perm))
		for i, f := range perm {
			parts[i] = ws(label+"-a") + key(label+"-k", f[0]) + ws(label+"-b") + ":" + ws(label+"-c") + f[1] + ws(label+"-d")
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	text := rapid.StringMatching(`[a-zA-Z0-9 ]{0,12}`).Draw(t, "text")
	typ := rapid.SampledFrom([]string{"user", "assistant", "system", "User"}).Draw(t, "type")
	var content string
	switch rapid.IntRange(0, 2).Draw(t, "content") {
	case 0:
		content = str("text", text)
	case 1:
		var parts []string
		for i := rapid.IntRange(0, 3).Draw(t, "parts"); i > 0; i-- {
			pt := rapid.SampledFrom([]string{"text", "tool_result", "image"}).Draw(t, "part-type")
			parts = append(parts, obj("part", [][2]string{{"type", str("pt", pt)}, {"text", str("text", text)}, {"content", str("c", "out")}}))
		}
		content = "[" + strings.Join(parts, ","+ws("sep")) + "]"
	default:
		content = "null"
	}
	msg := obj("msg", [][2]string{{"role", str("role", typ)}, {"content", content}})
	fields := [][2]string{{"type", str("type", typ)}, {"message", msg}, {"sessionId", str("sid", "s1")}, {"userType", str("ut", "external")}}
	if rapid.Bool().Draw(t, "nested") {
		fields = append(fields, [2]string{"toolUseResult", obj("nested", [][2]string{{"message", obj("nm", [][2]string{{"role", `"user"`}, {"content", "[]"}})}})})
	}
	if rapid.Bool().Draw(t, "dup") {
		fields = append(fields, [2]string{"type", str("dup", rapid.SampledFrom([]string{"user", "assistant"}).Draw(t, "dup-type"))})
	}
	return ws("lead") + obj("entry", fields) + ws("trail")
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}
