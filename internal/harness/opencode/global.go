package opencode

import (
	"context"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// PrepareGlobal keeps leo's nudge in the managed block of opencode's global
// AGENTS.md: opencode has no per-invocation system-prompt flag, and it merges
// the global file with a project's own AGENTS.md.
func (Opencode) PrepareGlobal(_ context.Context, spec harness.GlobalSpec) error {
	return EnsureManagedBlock(ConfigDir(spec.Env), spec.Nudge)
}
