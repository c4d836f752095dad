package harness

// OptionType picks how an option is decoded and which form control edits it.
type OptionType int

const (
	// OptionBool is tri-state: unset stays distinguishable from false, which
	// the key-wise harness_options cascade needs.
	OptionBool OptionType = iota
	// OptionEnum is a string from EnumValues.
	OptionEnum
	// OptionString is free text; Source may name a list of suggestions.
	OptionString
	// OptionStringList is a list of strings (comma-separated in forms).
	OptionStringList
	// OptionText is multi-line free text.
	OptionText
	// OptionYAMLMap is a nested map, edited as YAML.
	OptionYAMLMap
)

func (t OptionType) String() string {
	switch t {
	case OptionBool:
		return "bool"
	case OptionEnum:
		return "enum"
	case OptionString:
		return "string"
	case OptionStringList:
		return "string list"
	case OptionText:
		return "text"
	case OptionYAMLMap:
		return "map"
	}
	return "unknown"
}

// OptionField describes one harness_options key.
type OptionField struct {
	Key        string
	Type       OptionType
	EnumValues []string // OptionEnum only
	// Source names a dynamic list of suggestions for OptionString (e.g.
	// "agents"); a form falls back to a plain input when it can't resolve it.
	Source string
	Help   string
	// TemplateOwn marks a key a template never inherits: on templates the
	// defaults.harness_options value of this key is ignored (tasks still
	// inherit it).
	TemplateOwn bool
	// TemplateDefault, when not nil, is the value of a TemplateOwn key on a
	// template that leaves it unset (of the option's canonical type).
	TemplateDefault any
}
