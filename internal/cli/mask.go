package cli

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// masked replaces a secret wherever leo shows one.
const masked = "***"

// secretName matches names that look like they hold a credential. It is
// compiled on first use: most leo commands never mask anything.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(TOKEN|KEY|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL|PRIVATE|COOKIE)`)
})

// looksSecret reports whether a variable or key name suggests a credential.
func looksSecret(name string) bool { return secretName().MatchString(name) }

// scrubber hides known secret values (the scope's env: values) inside any
// text leo prints: argv elements, adapter env values, JSON overlays.
type scrubber struct {
	// values are the secrets, longest first so a secret containing another
	// is replaced whole.
	values []string
}

// minSubstring is the shortest secret replaced inside a longer string;
// shorter values ("1", "on") are only hidden when a whole string equals
// them, or every digit of a display would turn into ***.
const minSubstring = 4

func newScrubber(env map[string]string) *scrubber {
	s := &scrubber{}
	for _, v := range env {
		if v != "" {
			s.values = append(s.values, v)
		}
	}
	sort.Slice(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
	return s
}

// scrub returns text with every secret value replaced by ***.
func (s *scrubber) scrub(text string) string {
	for _, v := range s.values {
		if text == v {
			return masked
		}
		if len(v) >= minSubstring && strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, masked)
		}
	}
	return text
}

// maskJSON hides, inside a JSON document, the values of secret-looking keys
// and any secret value, and returns it compact. A value that is not JSON is
// scrubbed as text.
func (s *scrubber) maskJSON(doc string) string {
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return s.scrub(doc)
	}
	out, err := json.Marshal(s.maskValue(v))
	if err != nil {
		return masked
	}
	return string(out)
}

// maskValue walks a decoded JSON or YAML value, masking secret-named keys'
// values and scrubbing every string.
func (s *scrubber) maskValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			shown := s.scrub(k) // a secret can hide in a key (a permission pattern)
			if looksSecret(k) {
				out[shown] = masked
				continue
			}
			out[shown] = s.maskValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.maskValue(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = s.scrub(e)
		}
		return out
	case string:
		return s.scrub(x)
	default:
		return v
	}
}
