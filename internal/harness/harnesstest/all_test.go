package harnesstest_test

import (
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	// The one place adapters are wired in: whatever it registers is what
	// this contract runs against.
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestContractEveryRegisteredHarness(t *testing.T) {
	all := harness.All()
	for _, want := range []string{"claude", "codex", "opencode", "pi"} {
		if !slices.Contains(harness.Names(), want) {
			t.Fatalf("%s is not registered (registered: %v)", want, harness.Names())
		}
	}
	for _, h := range all {
		t.Run(h.Name(), func(t *testing.T) { harnesstest.Run(t, h) })
	}
}

// TestSupportMatrix pins what docs/configuration/harnesses.md says of each built-in
// adapter: its binary, whether it has channel plugins and honours
// max_turns, and that it runs every leo primitive.
func TestSupportMatrix(t *testing.T) {
	for _, want := range []struct {
		name               string
		channels, maxTurns bool
	}{
		{"claude", true, true},
		{"codex", false, false},
		{"opencode", false, false},
		{"pi", false, false},
	} {
		t.Run(want.name, func(t *testing.T) {
			h, ok := harness.Lookup(want.name)
			if !ok {
				t.Fatalf("%s is not registered", want.name)
			}
			if h.Binary() != want.name {
				t.Errorf("Binary() = %q, want %q", h.Binary(), want.name)
			}
			if h.SupportsChannels() != want.channels {
				t.Errorf("SupportsChannels() = %v, want %v", h.SupportsChannels(), want.channels)
			}
			if tl, ok := h.(harness.TurnLimiter); !ok || tl.HonorsMaxTurns() != want.maxTurns {
				t.Errorf("HonorsMaxTurns() = %v (implemented: %v), want %v", ok && tl.HonorsMaxTurns(), ok, want.maxTurns)
			}
			for _, k := range []harness.Kind{harness.KindTask, harness.KindAgent, harness.KindPersistent} {
				if !h.SupportsKind(k) {
					t.Errorf("SupportsKind(%s) = false", k)
				}
			}
		})
	}
}
