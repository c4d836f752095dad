package claude

import "bytes"

// Most of a long transcript's bytes are tool results: user entries whose
// content is tool_result parts, the output in them (and again in
// toolUseResult). They are neither a turn's start nor its end nor a reply,
// yet encoding/json scans each twice to say so. toolResultOnly proves it
// from the bytes, skipping strings at memchr speed, and is conservative:
// anything it cannot prove (a key spelt with an escape or in another case
// that encoding/json would match, a repeated key, a part of type text, a
// content that is no array) goes to the decoder.
// TestToolResultOnlyNeverSkipsADecodedLine holds it to that.

// toolResultOnly reports whether line is a JSON object of type "user"
// whose message's content is an array with no part of type "text". An
// invalid line may be reported either way: the decoder rejects it anyway.
func toolResultOnly(line []byte) bool {
	var typ, msg []byte
	ok := eachField(line, func(key, value []byte) bool {
		switch {
		case string(key) == "type" && typ == nil:
			typ = value
		case string(key) == "message" && msg == nil:
			msg = value
		case foldsTo(key, "type") || foldsTo(key, "message"):
			return false // another spelling, or a second one: the decoder's to judge
		}
		return true
	})
	if !ok || string(typ) != `"user"` || msg == nil {
		return false
	}
	var content []byte
	if !eachField(msg, func(key, value []byte) bool {
		switch {
		case string(key) == "content" && content == nil:
			content = value
		case foldsTo(key, "content"):
			return false
		}
		return true
	}) || len(content) == 0 || content[0] != '[' {
		return false
	}
	return eachElement(content, func(part []byte) bool {
		var ptype []byte
		return eachField(part, func(key, value []byte) bool {
			switch {
			case string(key) == "type" && ptype == nil:
				ptype = value
				// An escape could spell "text": only a plain string that
				// is not it passes.
				return value[0] == '"' && bytes.IndexByte(value, '\\') < 0 && string(value) != `"text"`
			case foldsTo(key, "type"):
				return false
			}
			return true
		})
	})
}

// foldsTo reports whether key, as encoding/json matches keys (escapes
// aside, which eachField refuses), could be field name (ASCII lower case).
func foldsTo(key []byte, name string) bool {
	return bytes.EqualFold(key, []byte(name)) || bytes.IndexByte(key, '\\') >= 0
}

// eachField calls f with each key (its raw bytes between the quotes) and
// value (raw) of the object b holds, in order, until f returns false. It
// reports whether b is an object it read to its end and f never said no.
func eachField(b []byte, f func(key, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		end, ok := skipString(b, i)
		if !ok {
			return false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		vs := skipSpace(b, i+1)
		ve, ok := skipValue(b, vs, 0)
		if !ok || !f(key, b[vs:ve]) {
			return false
		}
		i = skipSpace(b, ve)
		if i < len(b) && b[i] == '}' {
			return true
		}
		if i >= len(b) || b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
	return false
}

// eachElement calls f with each element of the array b holds, until f
// returns false; it reports whether it read the array and f never said no.
func eachElement(b []byte, f func(elem []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for i < len(b) {
		end, ok := skipValue(b, i, 0)
		if !ok || !f(b[i:end]) {
			return false
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ']' {
			return true
		}
		if i >= len(b) || b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the string starting at b[i]: its
// closing quote is the first one after an even run of backslashes.
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for q-1-n > i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// maxSkimDepth bounds the nesting skipValue follows (claude's entries
// nest a few levels; the tool output is a string).
const maxSkimDepth = 32

// skipValue returns the offset after the value starting at b[i].
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxSkimDepth {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		closer := byte('}')
		if b[i] == '[' {
			closer = ']'
		}
		j := skipSpace(b, i+1)
		if j < len(b) && b[j] == closer {
			return j + 1, true
		}
		for j < len(b) {
			if closer == '}' {
				end, ok := skipString(b, j)
				if !ok {
					return 0, false
				}
				j = skipSpace(b, end)
				if j >= len(b) || b[j] != ':' {
					return 0, false
				}
				j = skipSpace(b, j+1)
			}
			end, ok := skipValue(b, j, depth+1)
			if !ok {
				return 0, false
			}
			j = skipSpace(b, end)
			if j < len(b) && b[j] == closer {
				return j + 1, true
			}
			if j >= len(b) || b[j] != ',' {
				return 0, false
			}
			j = skipSpace(b, j+1)
		}
		return 0, false
	}
	// A number, true, false or null: up to the next delimiter.
	j := i
	for j < len(b) && !bytes.ContainsRune([]byte(",]} \t\n\r:"), rune(b[j])) {
		j++
	}
	if j == i {
		return 0, false
	}
	return j, true
}
