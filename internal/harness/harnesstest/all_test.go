package harnesstest_test

import (
	"slices"
	"testing"

	// The one place adapters are wired in: whatever config registers is
	// what this contract runs against.
	_ "github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestContractEveryRegisteredHarness(t *testing.T) {
	all := harness.All()
	for _, want := range []string{"claude", "codex", "opencode"} {
		if !slices.Contains(harness.Names(), want) {
			t.Fatalf("%s is not registered (registered: %v)", want, harness.Names())
		}
	}
	for _, h := range all {
		t.Run(h.Name(), func(t *testing.T) { harnesstest.Run(t, h) })
	}
}
