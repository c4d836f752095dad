package config

import (
	"fmt"
	"math"
	"sort"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
)

// decoder turns the generic YAML value of leo.yaml into typed sections. The
// loader is non-strict at scope level: keys it does not know are ignored
// (that is how the old flat claude fields are treated). A known key with a
// value of the wrong type is a finding, and decoding goes on, so one
// Validate shows every problem.
type decoder struct {
	findings []Finding
	src      *yamlv3.Node // the document as parsed; nil on goccy's fallback path
}

func (d *decoder) errorf(path, format string, args ...any) {
	d.findings = append(d.findings, Finding{
		Severity: SeverityError,
		Path:     path,
		Message:  path + ": " + fmt.Sprintf(format, args...),
	})
}

func (d *decoder) config(c *Config, top map[string]any) {
	if _, ok := top["providers"]; ok {
		d.errorf("providers", "this section has been removed — see %s", HarnessDocs)
	}
	if v, ok := top["defaults"]; ok {
		d.defaults(&c.Defaults, d.mapping("defaults", v))
	}
	if v, ok := top["templates"]; ok {
		for name, raw := range d.mapping("templates", v) {
			c.Templates[name] = d.template(name, d.mapping("templates."+name, raw))
		}
	}
	if v, ok := top["tasks"]; ok {
		for name, raw := range d.mapping("tasks", v) {
			c.Tasks[name] = d.task(name, d.mapping("tasks."+name, raw))
		}
	}
	if v, ok := top["web"]; ok {
		d.web(&c.Web, d.mapping("web", v))
	}
}

// removedProvider rejects a scope's provider: field; there is no
// replacement key, so a silent ignore would hide a broken endpoint setup.
func (d *decoder) removedProvider(scope string, m map[string]any) {
	if _, ok := m["provider"]; ok {
		d.errorf(scope+".provider", "this field has been removed — see %s", HarnessDocs)
	}
}

func (d *decoder) defaults(out *Defaults, m map[string]any) {
	const s = "defaults"
	d.removedProvider(s, m)
	out.Harness = d.str(s, m, "harness")
	out.Model = d.str(s, m, "model")
	out.MaxTurns = d.intp(s, m, "max_turns")
	out.HarnessOptions = d.optionsMap(s, m)
	out.Env = d.env(s, []string{"defaults"}, m)
	out.Workspace = d.str(s, m, "workspace")
}

func (d *decoder) template(name string, m map[string]any) *Template {
	s := "templates." + name
	t := &Template{}
	d.removedProvider(s, m)
	t.Workspace = d.str(s, m, "workspace")
	t.Harness = d.str(s, m, "harness")
	t.Model = d.str(s, m, "model")
	t.MaxTurns = d.intp(s, m, "max_turns")
	t.HarnessOptions = d.optionsMap(s, m)
	t.Channels = d.strList(s, m, "channels")
	t.DevChannels = d.strList(s, m, "dev_channels")
	t.Env = d.env(s, []string{"templates", name}, m)
	t.IdleSuspendAfter = d.duration(s, m, "idle_suspend_after")
	t.QueueMax = d.intp(s, m, "queue_max")
	return t
}

func (d *decoder) task(name string, m map[string]any) *Task {
	s := "tasks." + name
	t := &Task{}
	d.removedProvider(s, m)
	t.Schedule = d.str(s, m, "schedule")
	t.Timezone = d.str(s, m, "timezone")
	t.PromptFile = d.str(s, m, "prompt_file")
	t.Workspace = d.str(s, m, "workspace")
	t.Harness = d.str(s, m, "harness")
	t.Model = d.str(s, m, "model")
	t.MaxTurns = d.intp(s, m, "max_turns")
	t.HarnessOptions = d.optionsMap(s, m)
	t.Channels = d.strList(s, m, "channels")
	t.DevChannels = d.strList(s, m, "dev_channels")
	t.Env = d.env(s, []string{"tasks", name}, m)
	t.Timeout = d.duration(s, m, "timeout")
	t.Retries = d.intp(s, m, "retries")
	t.Enabled = d.boolp(s, m, "enabled")
	if b := d.boolp(s, m, "notify_on_fail"); b != nil {
		t.NotifyOnFail = *b
	}
	t.Runtime = d.str(s, m, "runtime")
	t.Template = d.str(s, m, "template")
	t.QueueMax = d.intp(s, m, "queue_max")
	t.IdleSuspendAfter = d.duration(s, m, "idle_suspend_after")
	return t
}

func (d *decoder) web(w *Web, m map[string]any) {
	const s = "web"
	if b := d.boolp(s, m, "enabled"); b != nil {
		w.Enabled = *b
	}
	w.Bind = d.str(s, m, "bind")
	w.Port = d.intp(s, m, "port")
	w.AllowedHosts = d.strList(s, m, "allowed_hosts")
}

// mapping accepts a YAML map; null (a key with nothing after it) is an empty
// map, so `assistant:` alone is a template with every default.
func (d *decoder) mapping(path string, v any) map[string]any {
	if v == nil {
		return map[string]any{}
	}
	if m, ok := asStringMap(v); ok {
		return m
	}
	d.errorf(path, "expected a mapping, got %s", kindOf(v))
	return map[string]any{}
}

func (d *decoder) str(scope string, m map[string]any, key string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	d.errorf(scope+"."+key, "expected a string, got %s", kindOf(v))
	return ""
}

// duration keeps the text of a duration field; Resolve parses it, so the
// error names the field and the value the user wrote. A bare number is not a
// duration: "30" could mean seconds or minutes.
func (d *decoder) duration(scope string, m map[string]any, key string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	d.errorf(scope+"."+key, "expected a duration such as 30m or 1h30m, got %s", kindOf(v))
	return ""
}

func (d *decoder) intp(scope string, m map[string]any, key string) *int {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	n, ok := toInt(v)
	if !ok {
		d.errorf(scope+"."+key, "expected an integer, got %s", kindOf(v))
		return nil
	}
	return &n
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		if n < math.MinInt || n > math.MaxInt {
			return 0, false
		}
		return int(n), true
	case uint64:
		if n > math.MaxInt {
			return 0, false
		}
		return int(n), true
	case float64:
		// 5.0 is an integer a YAML writer may produce; 5.5 is not.
		if n == math.Trunc(n) && n >= math.MinInt32 && n <= math.MaxInt32 {
			return int(n), true
		}
	}
	return 0, false
}

func (d *decoder) boolp(scope string, m map[string]any, key string) *bool {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		d.errorf(scope+"."+key, "expected true or false, got %s", kindOf(v))
		return nil
	}
	return &b
}

func (d *decoder) strList(scope string, m map[string]any, key string) []string {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	path := scope + "." + key
	l, ok := v.([]any)
	if !ok {
		d.errorf(path, "expected a list of strings, got %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok || s == "" {
			what := kindOf(e)
			if ok {
				what = "an empty string"
			}
			d.errorf(path, "item %d: expected a non-empty string, got %s", i+1, what)
			continue
		}
		out = append(out, s)
	}
	return out
}

// optionsMap keeps harness_options raw: only the adapter that the scope
// resolves to can tell what its keys mean.
func (d *decoder) optionsMap(scope string, m map[string]any) map[string]any {
	v, ok := m["harness_options"]
	if !ok || v == nil {
		return nil
	}
	path := scope + ".harness_options"
	mm := d.mapping(path, v)
	return mm
}

// env reads an env: map. A value that YAML would read as a number or a
// boolean (PORT: 8080, ZIP: 01234, VERSION: 1.10) is taken as written, not
// as YAML's reading of it. Values are never repeated in errors: they may be
// secrets.
func (d *decoder) env(scope string, loc []string, m map[string]any) map[string]string {
	v, ok := m["env"]
	if !ok || v == nil {
		return nil
	}
	path := scope + ".env"
	raw := d.mapping(path, v)
	out := make(map[string]string, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !validEnvName(k) {
			d.errorf(path, "invalid variable name %q (letters, digits and _, not starting with a digit)", k)
			continue
		}
		switch e := raw[k].(type) {
		case nil:
			out[k] = ""
		case string:
			out[k] = e
		case bool, int, int64, uint64, float64:
			if text, ok := scalarText(d.src, append(loc, "env", k)...); ok {
				out[k] = text
			} else {
				out[k] = fmt.Sprint(e)
			}
		default:
			d.errorf(path+"."+k, "expected a string, got %s", kindOf(e))
		}
	}
	return out
}

// scalarText finds the scalar at path in the document and returns its
// source text, following aliases and << merge keys the way decoding does.
func scalarText(doc *yamlv3.Node, path ...string) (string, bool) {
	if doc == nil {
		return "", false
	}
	n := doc
	if n.Kind == yamlv3.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, key := range path {
		if n = mapValue(n, key, 0); n == nil {
			return "", false
		}
	}
	n = deref(n)
	if n == nil || n.Kind != yamlv3.ScalarNode {
		return "", false
	}
	return n.Value, true
}

func deref(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n != nil && n.Kind == yamlv3.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// mapValue returns the value of key in mapping n: an explicit key first,
// then the merged maps in order (the first one holding key wins).
func mapValue(n *yamlv3.Node, key string, depth int) *yamlv3.Node {
	n = deref(n)
	if n == nil || n.Kind != yamlv3.MappingNode || depth > 8 {
		return nil
	}
	var merges []*yamlv3.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Tag == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if k.Value == key {
			return n.Content[i+1]
		}
	}
	for _, m := range merges {
		m = deref(m)
		if m == nil {
			continue
		}
		sources := []*yamlv3.Node{m}
		if m.Kind == yamlv3.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			if v := mapValue(src, key, depth+1); v != nil {
				return v
			}
		}
	}
	return nil
}

func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// kindOf names the YAML type of a decoded value the way a user wrote it.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int64, uint64:
		return "an integer"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a mapping"
	case time.Time:
		return "a date"
	}
	return fmt.Sprintf("%T", v)
}
