package harness

// What the web forms offer next to a scope's model and options. These are
// optional: an adapter without them gets plain inputs.

// ModelSuggester is implemented by adapters with a fixed list of models
// (the model input's suggestions).
type ModelSuggester interface {
	ModelSuggestions() []string
}

// ModelHinter is implemented by adapters whose model names are free-form:
// a short hint of the format, shown as the model input's placeholder.
type ModelHinter interface {
	ModelHint() string
}

// OptionSourcer is implemented by adapters whose OptionsSchema names a
// Source: it lists that source's suggestions for a scope. ok is false for
// a source it cannot resolve (the form then offers a plain input).
type OptionSourcer interface {
	OptionSource(source string, q SourceQuery) (values []string, ok bool)
}

// SourceQuery is the scope a source is listed for.
type SourceQuery struct {
	Workspace string            // absolute
	Env       map[string]string // overrides of the process environment (HOME, …)
}

// ModelSuggestions is h's list of models, nil when it has none.
func ModelSuggestions(h Harness) []string {
	if s, ok := h.(ModelSuggester); ok {
		return s.ModelSuggestions()
	}
	return nil
}

// ModelHint is h's model format hint, "" when it has none.
func ModelHint(h Harness) string {
	if s, ok := h.(ModelHinter); ok {
		return s.ModelHint()
	}
	return ""
}

// OptionSource lists source's suggestions for q; ok is false when h cannot
// resolve it.
func OptionSource(h Harness, source string, q SourceQuery) ([]string, bool) {
	if s, ok := h.(OptionSourcer); ok {
		return s.OptionSource(source, q)
	}
	return nil, false
}
