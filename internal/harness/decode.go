package harness

import (
	"fmt"
	"sort"
	"strings"
)

// OptionError is one problem with one harness_options key. Its text is
// relative to the map; config prefixes the scope
// ("templates.x.harness_options: " + err.Error()).
type OptionError struct {
	// Key is the offending harness_options key.
	Key string
	// Msg is the whole message, key included (e.g. `unknown option "foo" (valid: …)`).
	Msg string
}

func (e *OptionError) Error() string { return e.Msg }

// OptionErrors is every problem DecodeStrict found, sorted by key. Its text
// joins the messages with "; "; Unwrap lets callers walk them one by one
// (errors.As into *OptionErrors, or range over the slice).
type OptionErrors []*OptionError

func (es OptionErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Msg
	}
	return strings.Join(msgs, "; ")
}

// Unwrap exposes each problem to errors.Is/As.
func (es OptionErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// DecodeStrict validates raw against schema and returns the options with
// canonical types: bool, string, []string, map[string]any. Keys in rejected
// are known-but-unsupported; their value is the reason shown to the user.
// A nil value (a YAML key with nothing after it) counts as unset. Every
// problem is reported, sorted by key, as OptionErrors.
func DecodeStrict(schema []OptionField, rejected map[string]string, raw map[string]any) (Options, error) {
	out := make(Options, len(raw))
	var errs OptionErrors
	fail := func(key, format string, args ...any) {
		errs = append(errs, &OptionError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	for key, v := range raw {
		if reason, ok := rejected[key]; ok {
			fail(key, "option %q is not supported: %s", key, reason)
			continue
		}
		f, ok := field(schema, key)
		if !ok {
			fail(key, "unknown option %q (valid: %s)", key, strings.Join(sortedKeys(schema), ", "))
			continue
		}
		if v == nil {
			continue
		}
		decoded, msg := decodeValue(f, v)
		if msg != "" {
			fail(key, "option %q: %s", key, msg)
			continue
		}
		out[key] = decoded
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
		return nil, errs
	}
	return out, nil
}

// field finds key in a schema; schemas are a handful of keys, so a scan
// beats building a map on every decode.
func field(schema []OptionField, key string) (OptionField, bool) {
	for _, f := range schema {
		if f.Key == key {
			return f, true
		}
	}
	return OptionField{}, false
}

func sortedKeys(schema []OptionField) []string {
	keys := make([]string, len(schema))
	for i, f := range schema {
		keys[i] = f.Key
	}
	sort.Strings(keys)
	return keys
}

// decodeValue converts one value to the canonical type of f, or returns a
// message saying what was expected and what was found.
func decodeValue(f OptionField, v any) (any, string) {
	switch f.Type {
	case OptionBool:
		if b, ok := v.(bool); ok {
			return b, ""
		}
		return nil, "expected a boolean, got " + yamlKind(v)
	case OptionString, OptionText:
		if s, ok := v.(string); ok {
			return s, ""
		}
		return nil, "expected a string, got " + yamlKind(v)
	case OptionEnum:
		s, ok := v.(string)
		if !ok {
			return nil, "expected a string, got " + yamlKind(v)
		}
		for _, e := range f.EnumValues {
			if s == e {
				return s, ""
			}
		}
		return nil, fmt.Sprintf("invalid value %q (valid: %s)", s, strings.Join(f.EnumValues, ", "))
	case OptionStringList:
		switch l := v.(type) {
		case []string:
			return append([]string{}, l...), ""
		case []any:
			out := make([]string, 0, len(l))
			for i, e := range l {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Sprintf("expected a list of strings, got %s at index %d", yamlKind(e), i)
				}
				out = append(out, s)
			}
			return out, ""
		}
		return nil, "expected a list of strings, got " + yamlKind(v)
	case OptionYAMLMap:
		m, ok := canonicalMap(v)
		if !ok {
			return nil, "expected a map, got " + yamlKind(v)
		}
		return m, ""
	}
	return nil, fmt.Sprintf("unsupported option type %s", f.Type)
}

// canonicalMap turns a YAML map (string or interface keys, nested at any
// depth) into map[string]any with nested maps converted the same way.
func canonicalMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = canonicalValue(e)
		}
		return out, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[fmt.Sprint(k)] = canonicalValue(e)
		}
		return out, true
	}
	return nil, false
}

func canonicalValue(v any) any {
	if m, ok := canonicalMap(v); ok {
		return m
	}
	if l, ok := v.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = canonicalValue(e)
		}
		return out
	}
	return v
}

// yamlKind names the YAML type of a decoded value the way a user wrote it.
func yamlKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	case float32, float64:
		return "number"
	case []any, []string:
		return "list"
	case map[string]any, map[any]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
