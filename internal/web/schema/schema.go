// Package schema is the form model of the config forms (docs/configuration/harnesses.md
// "Web UI"): the harness dropdown, one control per harness option built
// from the adapter's OptionsSchema(), the model input's suggestions and
// hint, and the reverse — a posted form back into a harness_options map.
// It knows no harness by name: everything harness-specific comes from the
// adapters.
package schema

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Choice is one <option> of a select.
type Choice struct {
	Value    string
	Label    string
	Selected bool
}

// Source names of OptionField.Source and of the harness dropdown.
const (
	SourceHarnesses = "harnesses"
	SourceAgents    = "agents"
)

// TryFor lists the choices of a named source that needs no scope:
// "harnesses" is harness.Names() after an empty first entry labelled
// "inherit" (leaving harness: unset falls through the cascade).
func TryFor(source string) ([]Choice, bool) {
	if source != SourceHarnesses {
		return nil, false
	}
	return namedKeys(harness.Names()), true
}

func namedKeys(names []string) []Choice {
	out := []Choice{{Value: "", Label: "inherit"}}
	for _, n := range names {
		out = append(out, Choice{Value: n, Label: n})
	}
	return out
}

// Select marks the choice whose value is v (the first when none is).
func Select(choices []Choice, v string) []Choice {
	out := make([]Choice, len(choices))
	found := false
	for i, c := range choices {
		c.Selected = c.Value == v && !found
		found = found || c.Selected
		out[i] = c
	}
	if !found && len(out) > 0 {
		out[0].Selected = true
	}
	return out
}

// Control kinds, one per harness.OptionType.
const (
	KindBool     = "bool"   // tri-state select: inherit / on / off
	KindEnum     = "enum"   // select over EnumValues
	KindString   = "string" // text input (with a datalist when its Source resolves)
	KindList     = "list"   // text input, comma-separated
	KindText     = "text"   // textarea
	KindYAMLMap  = "yaml"   // monospace textarea, parsed as YAML
	fieldPrefix  = "opt."   // form field name of an option: opt.<key>
	idPrefix     = "opt-"   // element id of an option's control
	textAreaRows = 4
)

// Control is one harness option's form control.
type Control struct {
	Key   string
	Help  string
	Kind  string
	Name  string // form field name
	ID    string // element id
	Value string // the scope's own value as the control shows it
	// Choices of a select (bool, enum); the first is "inherit", labelled
	// "inherit (<value>)" when a value is inherited.
	Choices []Choice
	// ListID and Suggestions are the datalist of a string option whose
	// Source resolved; ListID is "" otherwise (a plain input).
	ListID      string
	Suggestions []string
	// Placeholder is "inherit: <value>" on inputs and textareas whose value
	// is inherited.
	Placeholder string
	Rows        int
}

// OptionsInput is what the controls of one scope are built from.
type OptionsInput struct {
	Harness harness.Harness
	// Own is the scope's own harness_options (nil when it sets none for
	// this harness).
	Own map[string]any
	// Inherited is defaults.harness_options when the scope inherits them
	// (its resolved harness is the defaults harness); nil otherwise, and
	// always nil on the defaults form.
	Inherited map[string]any
	// Template marks a template scope: its template-own options inherit
	// nothing but their template default.
	Template bool
	// Source lists an option source (e.g. "agents") for the scope; nil or
	// ok=false leaves a plain input.
	Source func(source string) ([]string, bool)
}

// Controls builds one control per option of the harness, in schema order.
func Controls(in OptionsInput) []Control {
	var out []Control
	for _, f := range in.Harness.OptionsSchema() {
		c := Control{Key: f.Key, Help: f.Help, Name: fieldPrefix + f.Key, ID: idPrefix + f.Key}
		own, hasOwn := in.Own[f.Key]
		if hasOwn {
			c.Value = display(f.Type, own)
		}
		inherited, hasInherited := in.Inherited[f.Key]
		if in.Template && f.TemplateOwn {
			inherited, hasInherited = f.TemplateDefault, f.TemplateDefault != nil
		}
		hint := ""
		if hasInherited {
			hint = display(f.Type, inherited)
		}
		switch f.Type {
		case harness.OptionBool:
			c.Kind = KindBool
			c.Choices = Select([]Choice{{Value: "", Label: inheritLabel(hasInherited, hint)}, {Value: "on", Label: "on"}, {Value: "off", Label: "off"}}, c.Value)
		case harness.OptionEnum:
			c.Kind = KindEnum
			choices := []Choice{{Value: "", Label: inheritLabel(hasInherited, hint)}}
			for _, v := range f.EnumValues {
				choices = append(choices, Choice{Value: v, Label: v})
			}
			if c.Value != "" && !containsValue(choices, c.Value) { // an invalid value in the file stays visible
				choices = append(choices, Choice{Value: c.Value, Label: c.Value})
			}
			c.Choices = Select(choices, c.Value)
		case harness.OptionStringList:
			c.Kind = KindList
		case harness.OptionText:
			c.Kind, c.Rows = KindText, textAreaRows
		case harness.OptionYAMLMap:
			c.Kind, c.Rows = KindYAMLMap, textAreaRows
		default:
			c.Kind = KindString
			if f.Source != "" && in.Source != nil {
				if values, ok := in.Source(f.Source); ok {
					c.ListID, c.Suggestions = idPrefix+f.Key+"-options", values
				}
			}
		}
		if hasInherited && c.Choices == nil {
			c.Placeholder = "inherit: " + hint
		}
		out = append(out, c)
	}
	return out
}

func inheritLabel(inherited bool, value string) string {
	if inherited {
		return "inherit (" + value + ")"
	}
	return "inherit"
}

func containsValue(cs []Choice, v string) bool {
	for _, c := range cs {
		if c.Value == v {
			return true
		}
	}
	return false
}

// display is an option value as its control shows it.
func display(t harness.OptionType, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "on"
		}
		return "off"
	case string:
		return x
	case []string:
		return strings.Join(x, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		if len(x) == 0 {
			return ""
		}
		out, err := yaml.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return strings.TrimRight(string(out), "\n")
	}
	return fmt.Sprint(v)
}

// ApplyHarnessOptions reads the option controls of h from a posted form
// into a harness_options map: an empty control (or "inherit") leaves the
// key unset; bools are on/off; a list is split at commas; a YAML map is
// parsed and set only when non-empty. Values are not checked here beyond
// their shape: the adapter's DecodeOptions does that on save. Errors name
// the option ("harness_options.permission: …").
func ApplyHarnessOptions(h harness.Harness, form url.Values) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range h.OptionsSchema() {
		raw := strings.ReplaceAll(form.Get(fieldPrefix+f.Key), "\r\n", "\n")
		if strings.TrimSpace(raw) == "" {
			continue
		}
		field := "harness_options." + f.Key
		switch f.Type {
		case harness.OptionBool:
			switch raw {
			case "on":
				out[f.Key] = true
			case "off":
				out[f.Key] = false
			default:
				return nil, fmt.Errorf("%s: expected inherit, on or off, got %q", field, clip(raw))
			}
		case harness.OptionStringList:
			var items []string
			for _, item := range strings.Split(raw, ",") {
				if item = strings.TrimSpace(item); item != "" {
					items = append(items, item)
				}
			}
			if len(items) > 0 {
				out[f.Key] = items
			}
		case harness.OptionYAMLMap:
			var m map[string]any
			if err := yaml.Unmarshal([]byte(raw), &m); err != nil {
				return nil, fmt.Errorf("%s: not a YAML mapping: %s", field, firstLine(err.Error()))
			}
			if len(m) > 0 {
				out[f.Key] = m
			}
		case harness.OptionString, harness.OptionEnum:
			out[f.Key] = strings.TrimSpace(raw)
		default: // OptionText keeps its text exactly
			out[f.Key] = raw
		}
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ModelSuggestions are the model input's datalist for a harness: the
// adapter's fixed list (claude's valid models), nil for free-form ones.
func ModelSuggestions(harnessName string) []string {
	if h, ok := harness.Lookup(harnessName); ok {
		return harness.ModelSuggestions(h)
	}
	return nil
}

// ModelPlaceholder is the model input's format hint for a harness whose
// names are free-form (from its adapter), "" otherwise.
func ModelPlaceholder(harnessName string) string {
	if h, ok := harness.Lookup(harnessName); ok {
		return harness.ModelHint(h)
	}
	return ""
}

// SortedKeys lists a map's keys in order (for stable pages).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
