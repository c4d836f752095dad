package opencode

import (
	"encoding/json"
	"strings"
)

// decodePart reads the fields of partData from a part row's data. A tool
// part carries the tool's whole output (megabytes for a big file read),
// and encoding/json would scan it byte by byte at a fraction of memory
// speed; this walks the object and skips the values leo does not read
// (strings by their quotes and escapes), decoding only the rest. What it
// cannot walk it hands to encoding/json whole.
func decodePart(data string, d *partData) error {
	if walkObject(data, func(key, raw string) bool {
		switch key {
		case "type":
			return json.Unmarshal([]byte(raw), &d.Type) == nil
		case "text":
			return json.Unmarshal([]byte(raw), &d.Text) == nil
		case "synthetic":
			return json.Unmarshal([]byte(raw), &d.Synthetic) == nil
		case "tool":
			return json.Unmarshal([]byte(raw), &d.Tool) == nil
		case "state":
			return walkObject(raw, func(key, raw string) bool {
				switch key {
				case "input":
					d.State.Input = json.RawMessage(raw)
				case "status":
					return json.Unmarshal([]byte(raw), &d.State.Status) == nil
				case "error":
					// A string for a tool's error (anything else is no
					// words of a tool's end).
					_ = json.Unmarshal([]byte(raw), &d.State.Error)
				}
				return true
			})
		}
		return true
	}) {
		return nil
	}
	*d = partData{}
	return json.Unmarshal([]byte(data), d)
}

// walkObject calls fn with each key of the JSON object s and its value's
// text, unparsed, the key in lower case as encoding/json matches it; false
// when s is no object it can walk (a key with escapes: opencode writes
// none) or fn said so.
func walkObject(s string, fn func(key, raw string) bool) bool {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipSpace(s, i+1) == len(s)
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return false
		}
		end, ok := skipValue(s, i)
		if !ok {
			return false
		}
		key := s[i+1 : end-1]
		i = skipSpace(s, end)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipSpace(s, i+1)
		vend, ok := skipValue(s, i)
		if !ok {
			return false
		}
		if strings.Contains(key, `\`) || !fn(strings.ToLower(key), s[i:vend]) {
			return false
		}
		i = skipSpace(s, vend)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return skipSpace(s, i+1) == len(s)
		default:
			return false
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at s[i].
func skipValue(s string, i int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				end, ok := skipString(s, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	j := i
	for j < len(s) && !strings.ContainsRune(",}] \t\n\r", rune(s[j])) {
		j++
	}
	return j, j > i
}

// skipString returns the end of the JSON string starting at s[i] (a
// quote): the first quote after it not escaped (an odd run of
// backslashes before it), found at memchr speed.
func skipString(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for q-n-1 > i && s[q-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
	return 0, false
}
