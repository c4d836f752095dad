package config

import (
	"fmt"
	"math"
)

// decoder walks the parsed YAML document into typed sections. The loader is
// non-strict at scope level: keys it does not know are skipped (that is how
// the old flat claude fields are treated). A known key with a value of the
// wrong type is a finding, and decoding goes on, so one Validate shows every
// problem. It reads the document nodes directly rather than a generic
// map[string]any: every scalar keeps the text it was written with (env
// values, see env).
type decoder struct {
	findings []Finding
}

func (d *decoder) errorf(path, format string, args ...any) {
	d.findings = append(d.findings, Finding{
		Severity: SeverityError,
		Path:     path,
		Message:  path + ": " + fmt.Sprintf(format, args...),
	})
}

// entry is one key of a mapping and its value node.
type entry struct {
	key string
	val *node
}

// fields is a mapping's entries; scopes have few keys, so a linear lookup
// beats building a map.
type fields []entry

func (fs fields) get(key string) *node {
	for _, e := range fs {
		if e.key == key {
			return e.val
		}
	}
	return nil
}

func (fs fields) has(key string) bool {
	for _, e := range fs {
		if e.key == key {
			return true
		}
	}
	return false
}

// maxAliasDepth bounds nested merges.
const maxAliasDepth = 16

func isMergeKey(k *node) bool {
	return k.Kind == scalarNode && k.Tag == tagMerge
}

// entries lists a mapping's keys the way YAML decoding sees them: keys
// written in the mapping win over keys brought in by `<<` merges, and among
// merged maps the first one listed wins. A map merged a second time (aliases
// share nodes) adds nothing, so it is skipped: a small file cannot make the
// walk explode.
func entries(n *node, depth int) fields {
	return entriesOnce(n, depth, map[*node]bool{})
}

func entriesOnce(n *node, depth int, merged map[*node]bool) fields {
	if n == nil || n.Kind != mappingNode {
		return nil
	}
	out := make(fields, 0, len(n.Content)/2)
	var merges []*node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			merges = append(merges, v)
			continue
		}
		out = append(out, entry{key: keyText(k), val: v})
	}
	if len(merges) == 0 || depth >= maxAliasDepth {
		return out
	}
	seen := make(map[string]bool, len(out))
	for _, e := range out {
		seen[e.key] = true
	}
	for _, m := range merges {
		if m == nil {
			continue
		}
		sources := []*node{m}
		if m.Kind == sequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			if merged[src] {
				continue
			}
			merged[src] = true
			for _, e := range entriesOnce(src, depth+1, merged) {
				if !seen[e.key] {
					seen[e.key] = true
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// keyText is the text of a mapping key; a non-scalar key (legal YAML, never
// a leo key) gets a placeholder that cannot match a field name.
func keyText(k *node) string {
	if k == nil || k.Kind != scalarNode {
		return "<complex key>"
	}
	return k.Value
}

func isNull(n *node) bool {
	return n == nil || n.Kind == scalarNode && n.Tag == tagNull
}

// kindOf names the YAML type of a node the way a user wrote it.
func kindOf(n *node) string {
	if n == nil {
		return "null"
	}
	switch n.Kind {
	case mappingNode:
		return "a mapping"
	case sequenceNode:
		return "a list"
	}
	switch n.Tag {
	case tagNull:
		return "null"
	case tagBool:
		return "a boolean"
	case tagStr:
		return "a string"
	case tagInt:
		return "an integer"
	case tagFloat:
		return "a number"
	case "!!timestamp":
		return "a date"
	case "!!binary":
		return "binary data"
	}
	return "a value tagged " + n.Tag
}

func (d *decoder) config(c *Config, root *node) {
	top := entries(root, 0)
	if top.has("providers") {
		d.errorf("providers", "this section has been removed — see %s", HarnessDocs)
	}
	if v := top.get("defaults"); v != nil {
		d.defaults(&c.Defaults, d.mapping("defaults", v))
	}
	if v := top.get("templates"); v != nil {
		for _, e := range d.mapping("templates", v) {
			c.Templates[e.key] = d.template(e.key, d.mapping("templates."+e.key, e.val))
		}
	}
	if v := top.get("tasks"); v != nil {
		for _, e := range d.mapping("tasks", v) {
			c.Tasks[e.key] = d.task(e.key, d.mapping("tasks."+e.key, e.val))
		}
	}
	if v := top.get("scheduler"); v != nil {
		d.scheduler(&c.Scheduler, d.mapping("scheduler", v))
	}
	if v := top.get("web"); v != nil {
		d.web(&c.Web, d.mapping("web", v))
	}
	if v := top.get("worktrees"); v != nil {
		d.worktrees(&c.Worktrees, d.mapping("worktrees", v))
	}
	c.Notify, _ = d.notifyList("notify", top.get("notify"))
}

// removedProvider rejects a scope's provider: field; there is no
// replacement key, so a silent ignore would hide a broken endpoint setup.
func (d *decoder) removedProvider(scope string, m fields) {
	if m.has("provider") {
		d.errorf(scope+".provider", "this field has been removed — see %s", HarnessDocs)
	}
}

func (d *decoder) defaults(out *Defaults, m fields) {
	const s = "defaults"
	d.removedProvider(s, m)
	out.Harness = d.str(s, m, "harness")
	out.Model = d.str(s, m, "model")
	out.MaxTurns = d.intp(s, m, "max_turns")
	out.HarnessOptions = d.optionsMap(s, m)
	out.Env = d.env(s, m)
	out.Workspace = d.str(s, m, "workspace")
}

func (d *decoder) template(name string, m fields) *Template {
	s := "templates." + name
	d.removedProvider(s, m)
	return &Template{Settings: d.settings(s, m)}
}

func (d *decoder) task(name string, m fields) *Task {
	s := "tasks." + name
	d.removedProvider(s, m)
	t := &Task{Settings: d.settings(s, m)}
	t.Schedule = d.str(s, m, "schedule")
	t.Timezone = d.str(s, m, "timezone")
	t.PromptFile = d.str(s, m, "prompt_file")
	t.Timeout = d.duration(s, m, "timeout")
	t.Retries = d.intp(s, m, "retries")
	t.Enabled = d.boolp(s, m, "enabled")
	t.CatchUp = d.boolp(s, m, "catch_up")
	if b := d.boolp(s, m, "notify_on_fail"); b != nil {
		t.NotifyOnFail = *b
	}
	t.Runtime = d.str(s, m, "runtime")
	t.Template = d.str(s, m, "template")
	return t
}

// settings decodes the keys templates and tasks share.
func (d *decoder) settings(scope string, m fields) Settings {
	notify, notifySet := d.notifyList(notifyPath(scope), m.get("notify"))
	return Settings{
		Notify:           notify,
		NotifySet:        notifySet,
		Workspace:        d.str(scope, m, "workspace"),
		Harness:          d.str(scope, m, "harness"),
		Model:            d.str(scope, m, "model"),
		MaxTurns:         d.intp(scope, m, "max_turns"),
		HarnessOptions:   d.optionsMap(scope, m),
		Channels:         d.strList(scope, m, "channels"),
		DevChannels:      d.strList(scope, m, "dev_channels"),
		Env:              d.env(scope, m),
		IdleSuspendAfter: d.duration(scope, m, "idle_suspend_after"),
		QueueMax:         d.intp(scope, m, "queue_max"),
		OnLimit:          d.str(scope, m, "on_limit"),
		Worktree:         d.boolp(scope, m, "worktree"),
	}
}

func (d *decoder) scheduler(out *Scheduler, m fields) {
	const s = "scheduler"
	out.MaxConcurrentRuns = d.intp(s, m, "max_concurrent_runs")
	out.HistoryKeep = d.intp(s, m, "history_keep")
	out.LogsKeep = d.intp(s, m, "logs_keep")
}

func (d *decoder) web(w *Web, m fields) {
	const s = "web"
	if b := d.boolp(s, m, "enabled"); b != nil {
		w.Enabled = *b
	}
	w.Bind = d.str(s, m, "bind")
	w.Port = d.intp(s, m, "port")
	w.AllowedHosts = d.strList(s, m, "allowed_hosts")
}

// mapping accepts a YAML mapping; null (a key with nothing after it) is an
// empty one, so `assistant:` alone is a template with every default.
func (d *decoder) mapping(path string, v *node) fields {
	if isNull(v) {
		return nil
	}
	if v.Kind != mappingNode {
		d.errorf(path, "expected a mapping, got %s", kindOf(v))
		return nil
	}
	return entries(v, 0)
}

// value returns the node of key; null (or a missing key) is unset.
func value(m fields, key string) (*node, bool) {
	v := m.get(key)
	return v, !isNull(v)
}

func (d *decoder) str(scope string, m fields, key string) string {
	return d.text(scope, m, key, "a string")
}

// duration keeps the text of a duration field; Resolve parses it, so the
// error names the field and the value the user wrote. A bare number is not a
// duration: "30" could mean seconds or minutes.
func (d *decoder) duration(scope string, m fields, key string) string {
	return d.text(scope, m, key, "a duration such as 30m or 1h30m")
}

// text reads a YAML string; anything else is a finding saying what was
// expected.
func (d *decoder) text(scope string, m fields, key, expected string) string {
	v, ok := value(m, key)
	if !ok {
		return ""
	}
	if v.Kind == scalarNode && v.Tag == tagStr {
		return v.Value
	}
	d.errorf(scope+"."+key, "expected %s, got %s", expected, kindOf(v))
	return ""
}

func (d *decoder) intp(scope string, m fields, key string) *int {
	v, ok := value(m, key)
	if !ok {
		return nil
	}
	if v.Kind == scalarNode && (v.Tag == tagInt || v.Tag == tagFloat) {
		if n, ok := toInt(v.Typed); ok {
			return &n
		}
	}
	d.errorf(scope+"."+key, "expected an integer, got %s", kindOf(v))
	return nil
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

func (d *decoder) boolp(scope string, m fields, key string) *bool {
	v, ok := value(m, key)
	if !ok {
		return nil
	}
	if b, ok := v.Typed.(bool); ok && v.Kind == scalarNode && v.Tag == tagBool {
		return &b
	}
	d.errorf(scope+"."+key, "expected true or false, got %s", kindOf(v))
	return nil
}

func (d *decoder) strList(scope string, m fields, key string) []string {
	v := m.get(key)
	if isNull(v) {
		return nil
	}
	path := scope + "." + key
	if v.Kind != sequenceNode {
		d.errorf(path, "expected a list of strings, got %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for i, e := range v.Content {
		if e == nil || e.Kind != scalarNode || e.Tag != tagStr || e.Value == "" {
			what := kindOf(e)
			if e != nil && e.Kind == scalarNode && e.Tag == tagStr {
				what = "an empty string"
			}
			d.errorf(path, "item %d: expected a non-empty string, got %s", i+1, what)
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

// optionsMap keeps harness_options as a generic map: only the adapter the
// scope resolves to can tell what its keys mean.
func (d *decoder) optionsMap(scope string, m fields) map[string]any {
	v := m.get("harness_options")
	if isNull(v) {
		return nil
	}
	path := scope + ".harness_options"
	if v.Kind != mappingNode {
		d.errorf(path, "expected a mapping, got %s", kindOf(v))
		return nil
	}
	raw, err := genericValue(v)
	if err != nil {
		d.errorf(path, "%v", err)
		return nil
	}
	out, _ := raw.(map[string]any)
	return out
}

// env reads an env: map. Values are taken as written: what YAML would read
// as a number or a boolean (PORT: 8080, ZIP: 01234, VERSION: 1.10) keeps its
// text. Values are never repeated in errors: they may be secrets.
func (d *decoder) env(scope string, m fields) map[string]string {
	path := scope + ".env"
	kv := d.mapping(path, m.get("env"))
	if kv == nil {
		return nil
	}
	out := make(map[string]string, len(kv))
	for _, e := range kv {
		if !validEnvName(e.key) {
			d.errorf(path, "invalid variable name %q (letters, digits and _, not starting with a digit)", e.key)
			continue
		}
		v := e.val
		switch {
		case isNull(v):
			out[e.key] = ""
		case v.Kind == scalarNode:
			out[e.key] = v.Value
		default:
			d.errorf(path+"."+e.key, "expected a string, got %s", kindOf(v))
		}
	}
	return out
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
