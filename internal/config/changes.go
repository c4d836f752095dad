package config

import (
	"maps"
	"reflect"
	"slices"
)

// Change is one scope of leo.yaml that differs between two configs: a
// section ("defaults", "web", "scheduler", "notify") or a template or task
// ("templates.coder"), and how.
type Change struct {
	Scope string
	// How is "added", "removed" or "changed".
	How string
}

// Changes lists the scopes that differ from old to new: the sections
// first, then templates and tasks by name. It compares what was read
// (values after ${VAR} expansion included) and says only which scope
// changed, never a value, so it may be shown anywhere (a reload's event,
// the log). A nil old is an empty config.
func Changes(old, new *Config) []Change {
	if old == nil {
		old = &Config{}
	}
	if new == nil {
		new = &Config{}
	}
	var out []Change
	for _, s := range []struct {
		scope    string
		old, new any
	}{
		{"defaults", old.Defaults, new.Defaults},
		{"web", old.Web, new.Web},
		{"scheduler", old.Scheduler, new.Scheduler},
		{"notify", old.Notify, new.Notify},
	} {
		if !reflect.DeepEqual(s.old, s.new) {
			out = append(out, Change{Scope: s.scope, How: "changed"})
		}
	}
	out = append(out, scopeChanges(SectionTemplates, old.Templates, new.Templates)...)
	out = append(out, scopeChanges(SectionTasks, old.Tasks, new.Tasks)...)
	return out
}

func scopeChanges[T any](section string, old, new map[string]*T) []Change {
	var out []Change
	for _, name := range slices.Sorted(maps.Keys(mergeKeys(old, new))) {
		a, inOld := old[name]
		b, inNew := new[name]
		switch {
		case !inOld:
			out = append(out, Change{Scope: section + "." + name, How: "added"})
		case !inNew:
			out = append(out, Change{Scope: section + "." + name, How: "removed"})
		case !reflect.DeepEqual(a, b):
			out = append(out, Change{Scope: section + "." + name, How: "changed"})
		}
	}
	return out
}

func mergeKeys[T any](a, b map[string]*T) map[string]struct{} {
	keys := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		keys[k] = struct{}{}
	}
	for k := range b {
		keys[k] = struct{}{}
	}
	return keys
}
