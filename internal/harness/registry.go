package harness

import (
	"fmt"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Harness{}
)

// Register adds an adapter. It is called from an adapter's init(); a second
// registration of the same name is a programming error and panics.
func Register(h Harness) {
	registryMu.Lock()
	defer registryMu.Unlock()
	name := h.Name()
	if name == "" {
		panic("harness: Register with empty name")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("harness: %q registered twice", name))
	}
	registry[name] = h
}

// Lookup returns the adapter registered under name.
func Lookup(name string) (Harness, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	h, ok := registry[name]
	return h, ok
}

// Names lists the registered adapters, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns every registered adapter, sorted by name.
func All() []Harness {
	out := []Harness{}
	for _, n := range Names() {
		h, _ := Lookup(n)
		out = append(out, h)
	}
	return out
}

// Default is the harness of a config that names none.
const Default = "claude"
