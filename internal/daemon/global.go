package daemon

import (
	"context"
	"log/slog"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

// prepareHarnesses runs each in-use adapter's global preparation. A failure
// is logged, never fatal: an agent still runs without the nudge. The nudge
// (harness.BridgeNudge) is handed on only when launches get leo's MCP
// server (bridged); otherwise it is "", and an adapter removes what it
// wrote, so no harness is pointed at tools that are not there.
func prepareHarnesses(ctx context.Context, c *config.Config, bridged bool, getenv func(string) string, log *slog.Logger) {
	nudge := ""
	if bridged {
		nudge = harness.BridgeNudge
	}
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
		if err := gp.PrepareGlobal(ctx, harness.GlobalSpec{Env: env, Nudge: nudge}); err != nil {
			log.Warn("harness global setup", "harness", name, "err", err)
		}
	}
}

// bridged reports whether launches under c get leo's MCP server (the gate
// of config.MCPBridge: web enabled and a usable token).
func (d *run) bridged(c *config.Config, h home.Home) bool {
	return c.MCPBridge(h, d.opts.LeoBinary) != nil
}
