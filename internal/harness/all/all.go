// Package all wires in every harness adapter leo ships: each registers
// itself in init(), and this package's only job is to import them. cmd/leo
// and the tests that need the adapters import it; nothing else does, so a
// new harness costs its folder under internal/harness/ plus one line here.
package all

import (
	_ "github.com/blackpaw-studio/leo/internal/harness/claude"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
	_ "github.com/blackpaw-studio/leo/internal/harness/pi"
)
