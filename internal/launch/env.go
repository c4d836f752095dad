package launch

import (
	"maps"
	"strings"
)

// Env is an environment as an ordered set of variables: later writes win,
// a variable keeps the place of its first write.
type Env struct {
	keys []string
	vals map[string]string
}

// NewEnv is the environment of base (KEY=VALUE; entries without a name
// are dropped).
func NewEnv(base []string) *Env {
	e := &Env{vals: make(map[string]string, len(base)+8)}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			e.Set(k, v)
		}
	}
	return e
}

// Set sets k to v.
func (e *Env) Set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *Env) overlay(m map[string]string) {
	for k, v := range m {
		e.Set(k, v)
	}
}

// Get is k's value and whether it is set.
func (e *Env) Get(k string) (string, bool) {
	v, ok := e.vals[k]
	return v, ok
}

// List is the environment as exec takes it (KEY=VALUE, in order).
func (e *Env) List() []string {
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// Map is a copy of the environment as a map.
func (e *Env) Map() map[string]string { return maps.Clone(e.vals) }
