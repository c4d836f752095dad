package config

import (
	"strings"
	"testing"

	// The config tests name every adapter leo ships (and assert their
	// list, availableHarnesses).
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
	"github.com/blackpaw-studio/leo/internal/testutil/imports"
)

// availableHarnesses is how an unknown harness's error lists the
// registered ones.
var availableHarnesses = strings.Join(harness.Names(), ", ")

// Config finds the adapters through the registry only: it wires none in
// (internal/harness/all does, for cmd/leo and the tests), so a new harness
// is its folder plus one line there.
func TestConfigWiresInNoAdapter(t *testing.T) {
	for _, p := range imports.Deps(t, imports.Module+"/internal/config") {
		if rest, ok := strings.CutPrefix(p, imports.Module+"/internal/harness/"); ok {
			t.Errorf("internal/config imports %s (the %s adapter, or the package wiring them)", p, rest)
		}
	}
}
