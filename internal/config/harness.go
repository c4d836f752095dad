package config

// The harness adapters leo ships. A new harness is a package under
// internal/harness/ plus one blank import here: each adapter registers itself
// in init(), and the cascade, validation and web forms find it through the
// registry.
import (
	_ "github.com/blackpaw-studio/leo/internal/harness/claude"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
)
