package daemon

import (
	"context"
	"log/slog"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// harnessNudge is the small system-prompt text every harness gets, pointing
// the agent at leo's own how-to tool.
const harnessNudge = `You are running under leo, which keeps this agent alive and delivers messages to it.
To message other agents, list or spawn them, or run leo tasks, call the leo_skill MCP tool first: it explains leo's tools.`

// prepareHarnesses runs each in-use adapter's global preparation. A failure
// is logged, never fatal: an agent still runs without the nudge.
func prepareHarnesses(ctx context.Context, c *config.Config, getenv func(string) string, log *slog.Logger) {
	env := map[string]string{}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		env[k] = getenv(k)
	}
	for _, name := range c.HarnessesInUse() {
		h, ok := harness.Lookup(name)
		if !ok {
			continue
		}
		gp, ok := h.(harness.GlobalPreparer)
		if !ok {
			continue
		}
		if err := gp.PrepareGlobal(ctx, harness.GlobalSpec{Env: env, Nudge: harnessNudge}); err != nil {
			log.Warn("harness global setup", "harness", name, "err", err)
		}
	}
}
