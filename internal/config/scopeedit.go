package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// A scope edit changes keys of one scope (defaults, templates.<name> or
// tasks.<name>) in leo.yaml the way a person would: each changed key's
// value is spliced in at the position the parser reports, a new key is a
// line added at the end of the scope, a removed key's lines are cut out.
// Every other byte (comments, order, quoting, other scopes, env values)
// stays as written. The result is read back and compared with what was
// asked, scope by scope, then validated with the same Validate the CLI and
// daemon use, and only then written atomically under Save's lock.

// Sections that hold scopes.
const (
	SectionDefaults  = "defaults"
	SectionTemplates = "templates"
	SectionTasks     = "tasks"
	// SectionWeb is no cascade scope, but one mapping edited the same way
	// (`leo web enable`).
	SectionWeb = "web"
)

// ScopePath names one scope of leo.yaml.
type ScopePath struct {
	Section string // SectionDefaults, SectionTemplates or SectionTasks
	Name    string // the template or task name; "" for defaults
}

// DefaultsScope is the defaults: section.
func DefaultsScope() ScopePath { return ScopePath{Section: SectionDefaults} }

// TemplateScope is templates.<name>.
func TemplateScope(name string) ScopePath { return ScopePath{Section: SectionTemplates, Name: name} }

// WebScope is the web: section.
func WebScope() ScopePath { return ScopePath{Section: SectionWeb} }

// TaskScope is tasks.<name>.
func TaskScope(name string) ScopePath { return ScopePath{Section: SectionTasks, Name: name} }

// String is the scope's path as errors name it ("templates.foo").
func (s ScopePath) String() string {
	if s.Name == "" {
		return s.Section
	}
	return s.Section + "." + s.Name
}

// FieldChange sets Key of a scope to Value, or removes the key when Value
// is nil or "" (an empty string reads as unset anyway). Values are strings, bools, integers, string lists and (for
// harness_options) maps of those; harness_options is edited key by key, so
// the comments beside options that keep their value stay.
type FieldChange struct {
	Key   string
	Value any
}

// SetField is a change setting key to value.
func SetField(key string, value any) FieldChange { return FieldChange{Key: key, Value: value} }

// RemoveField is a change removing key from the scope.
func RemoveField(key string) FieldChange { return FieldChange{Key: key} }

// editableKeys are the keys EditScope changes, per section. env is not
// among them: its values may be secrets, and they stay as the user wrote
// them.
var editableKeys = func() map[string][]string {
	settings := []string{"workspace", "harness", "model", "max_turns", "harness_options",
		"channels", "dev_channels", "idle_suspend_after", "queue_max", "on_limit", "worktree"}
	return map[string][]string{
		SectionDefaults:  {"harness", "model", "max_turns", "harness_options", "workspace"},
		SectionTemplates: settings,
		SectionTasks: append(slices.Clone(settings), "schedule", "timezone", "prompt_file",
			"timeout", "retries", "enabled", "catch_up", "notify_on_fail", "runtime", "template"),
		SectionWeb: {"enabled", "bind", "port", "allowed_hosts"},
	}
}()

// EditableKeys lists the keys EditScope may change in a scope of section.
func EditableKeys(section string) []string { return slices.Clone(editableKeys[section]) }

// CreateScope lets EditScope add a template or task that the file does not
// have yet; without it an unknown scope is an error wrapping
// ErrUnknownScope.
func CreateScope() Option { return func(o *options) { o.create = true } }

// EditScope applies changes to one scope of the leo.yaml at path. A change
// whose value the scope already has is skipped, so its text stays as
// written. The whole resulting config must pass Validate: a
// *ValidationError is returned as it is, and on any error the file is left
// byte for byte as it was. Shapes leo does not rewrite (a scope that is an
// alias, a value shared through an anchor, a flow mapping it cannot splice
// into) are errors wrapping ErrCannotEdit naming the scope and field.
func EditScope(path string, scope ScopePath, changes []FieldChange, opts ...Option) error {
	return editScope(path, scope, func(*Config) ([]FieldChange, error) { return changes, nil }, opts...)
}

// editScope is EditScope with the changes planned from the config as it
// is under the lock (SetTaskEnabled skips a task already in its state).
func editScope(path string, scope ScopePath, plan func(*Config) ([]FieldChange, error), opts ...Option) error {
	if err := checkScopePath(scope); err != nil {
		return err
	}
	o := buildOptions(opts)

	saveMu.Lock()
	defer saveMu.Unlock()

	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	before, beforeRoot, err := parseConfig(data, abs, o)
	if err != nil {
		return err
	}
	exists := scopeExists(before, scope)
	if !exists && !o.create {
		return unknownScopeError(before, scope)
	}
	changes, err := plan(before)
	if err != nil {
		return err
	}
	if len(changes) == 0 && exists {
		return nil
	}
	canon, err := checkChanges(scope, changes)
	if err != nil {
		return err
	}
	field := scope.String()
	if len(changes) == 1 {
		field += "." + changes[0].Key
	}

	edited, err := editLines(data, func(lf []byte) ([]byte, error) {
		ed, err := newScopeEditor(lf, abs, field, beforeRoot)
		if err != nil {
			return nil, err
		}
		return ed.apply(scope, canon)
	})
	if err != nil {
		return err
	}
	if bytes.Equal(edited, data) {
		return before.Validate()
	}
	after, afterRoot, err := parseConfig(edited, abs, o)
	if err != nil {
		return fmt.Errorf("%s: %w (the edited file would not read back: %v)", field, ErrCannotEdit, err)
	}
	if err := checkReadBack(beforeRoot, afterRoot, scope, canon, field); err != nil {
		return err
	}
	if err := after.Validate(); err != nil {
		return err
	}
	return writeAtomic(abs, edited)
}

func checkScopePath(scope ScopePath) error {
	switch scope.Section {
	case SectionDefaults, SectionWeb:
		if scope.Name != "" {
			return fmt.Errorf("%s: a scope name (%q) given for the %s section", scope.Section, scope.Name, scope.Section)
		}
	case SectionTemplates, SectionTasks:
		if scope.Name == "" {
			return fmt.Errorf("%s: no scope name given", scope.Section)
		}
	default:
		return fmt.Errorf("%q is not a section leo edits (defaults, templates, tasks, web)", scope.Section)
	}
	return nil
}

func scopeExists(c *Config, scope ScopePath) bool {
	switch scope.Section {
	case SectionTemplates:
		_, ok := c.Templates[scope.Name]
		return ok
	case SectionTasks:
		_, ok := c.Tasks[scope.Name]
		return ok
	}
	return true
}

func unknownScopeError(c *Config, scope ScopePath) error {
	names := c.TaskNames()
	if scope.Section == SectionTemplates {
		names = c.TemplateNames()
	}
	known := "no " + scope.Section + " are configured"
	if len(names) > 0 {
		known = scope.Section + ": " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%s: %w (%s)", scope, ErrUnknownScope, known)
}

// checkChanges refuses keys EditScope does not edit, a key changed twice
// and values it cannot write, and returns the values in canonical form.
func checkChanges(scope ScopePath, changes []FieldChange) ([]FieldChange, error) {
	allowed := editableKeys[scope.Section]
	seen := map[string]bool{}
	out := make([]FieldChange, 0, len(changes))
	for _, ch := range changes {
		field := scope.String() + "." + ch.Key
		switch {
		case ch.Key == "env":
			return nil, fmt.Errorf("%s: leo does not edit env (its values may be secrets; edit leo.yaml by hand)", field)
		case !slices.Contains(allowed, ch.Key):
			return nil, fmt.Errorf("%s: not a key leo edits here (editable: %s)", field, strings.Join(allowed, ", "))
		case seen[ch.Key]:
			return nil, fmt.Errorf("%s: changed twice in one edit", field)
		}
		seen[ch.Key] = true
		v, err := canonValue(ch.Value, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", field, err)
		}
		if v == "" { // an empty string reads as unset: no key says it plainer
			v = nil
		}
		if _, ok := v.(map[string]any); ok && ch.Key != "harness_options" {
			return nil, fmt.Errorf("%s: expected a scalar or a list, got a mapping", field)
		}
		if ch.Key == "harness_options" && v != nil {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: expected a mapping", field)
			}
			if len(m) == 0 { // no options is no key
				v = nil
			}
		}
		out = append(out, FieldChange{Key: ch.Key, Value: v})
	}
	return out, nil
}

// maxValueDepth bounds the nesting of a value EditScope writes.
const maxValueDepth = 32

// canonValue checks a value can be written and returns it in the form
// genericValue reads it back: int64 for integers (and integral floats),
// []any for lists, map[string]any for mappings.
func canonValue(v any, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("the value is nested too deeply")
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("the value is not valid UTF-8")
		}
		return x, nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case uint64:
		if x <= 1<<63-1 {
			return int64(x), nil
		}
		return x, nil
	case float64:
		if x != x || x > 1e300 || x < -1e300 {
			return nil, fmt.Errorf("the number %v cannot be written", x)
		}
		if x == float64(int64(x)) {
			return int64(x), nil
		}
		return x, nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			if !utf8.ValidString(s) {
				return nil, fmt.Errorf("item %d is not valid UTF-8", i+1)
			}
			out[i] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := canonValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := canonValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, checkKeys(out)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := canonValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, checkKeys(out)
	}
	return nil, fmt.Errorf("cannot write a value of type %T", v)
}

func checkKeys(m map[string]any) error {
	for k := range m {
		if !utf8.ValidString(k) {
			return fmt.Errorf("a key is not valid UTF-8")
		}
		if k == "<<" {
			return fmt.Errorf(`the key "<<" is YAML's merge key`)
		}
	}
	return nil
}

// parseConfig parses data into a Config and keeps the document tree the
// read-back check compares.
func parseConfig(data []byte, path string, o options) (*Config, *node, error) {
	c, root, err := parse(data, path, o)
	return c, root, err
}

// checkReadBack compares the edited document with the original, scope by
// scope: the edited scope must hold exactly the values asked for, and
// every other scope and section must read as before.
func checkReadBack(beforeRoot, afterRoot *node, scope ScopePath, changes []FieldChange, field string) error {
	cannot := func(why string) error { return fmt.Errorf("%s: %w (%s)", field, ErrCannotEdit, why) }
	before, err := scopeValues(beforeRoot)
	if err != nil {
		return cannot(err.Error())
	}
	after, err := scopeValues(afterRoot)
	if err != nil {
		return cannot(err.Error())
	}
	target := scope.String()
	want, _ := before[target].(map[string]any)
	want = cloneMap(want)
	for _, ch := range changes {
		if ch.Value == nil {
			delete(want, ch.Key)
		} else {
			want[ch.Key] = ch.Value
		}
	}
	got, _ := after[target].(map[string]any)
	if !reflect.DeepEqual(normalizeEmpty(got), normalizeEmpty(want)) {
		return cannot("the result does not read back as the values asked for; is a value merged in with <<?")
	}
	paths := make([]string, 0, len(before)+len(after))
	for p := range before {
		paths = append(paths, p)
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		if p == target {
			continue
		}
		b, inB := before[p]
		a, inA := after[p]
		if inB != inA || !reflect.DeepEqual(b, a) {
			return cannot(sharedWith(scope) + " is shared with " + strings.TrimPrefix(p, "\x00"))
		}
	}
	return nil
}

func sharedWith(scope ScopePath) string {
	switch scope.Section {
	case SectionTasks:
		return "the task's mapping"
	case SectionTemplates:
		return "the template's mapping"
	}
	return "the " + scope.Section + " mapping"
}

// scopeValues reads a document as one generic value per scope
// (templates.<name>, tasks.<name>, defaults) and per other top-level key.
// Each is built on its own budget, so a large config is compared in full.
func scopeValues(root *node) (map[string]any, error) {
	out := map[string]any{}
	for _, top := range entries(root, 0) {
		if top.key == SectionTemplates || top.key == SectionTasks {
			if isNull(top.val) {
				continue // no scopes, as if the section were missing
			}
			if top.val.Kind == mappingNode {
				for _, s := range entries(top.val, 0) {
					v, err := genericValue(s.val)
					if err != nil {
						return nil, err
					}
					out[top.key+"."+s.key] = canonRead(v)
				}
				continue
			}
		}
		v, err := genericValue(top.val)
		if err != nil {
			return nil, err
		}
		if top.key == SectionDefaults || top.key == SectionWeb {
			out[top.key] = canonRead(v)
		} else {
			out["\x00"+top.key] = canonRead(v) // never equal to a scope path
		}
	}
	return out, nil
}

// canonRead puts a value read back from YAML in canonValue's form.
func canonRead(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonRead(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonRead(e)
		}
		return out
	}
	c, err := canonValue(v, 0)
	if err != nil {
		return v
	}
	return c
}

// normalizeEmpty treats a scope written empty (`name:` or `name: {}`) and
// one with no keys alike.
func normalizeEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// editLines runs edit on data with LF line ends. goccy/go-yaml miscounts
// the lines of a CRLF file (after a comment every token's line is one too
// many), so a file whose every line ends in CRLF is edited as LF and its
// line ends put back.
func editLines(data []byte, edit func([]byte) ([]byte, error)) ([]byte, error) {
	crlf, lf := []byte("\r\n"), []byte("\n")
	if n := bytes.Count(data, lf); n == 0 || bytes.Count(data, crlf) != n {
		return edit(data)
	}
	out, err := edit(bytes.ReplaceAll(data, crlf, lf))
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(out, lf, crlf), nil
}
