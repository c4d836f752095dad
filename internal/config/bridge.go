package config

import (
	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

// MCPBridge is how every launch — an agent of the daemon, `leo run` — wires
// leo's MCP server (`leo mcp-server`) into a harness. It is nil unless the
// web API is enabled, executable (the leo binary) is known and h's
// state/api.token is readable and non-empty. The server reads the token from
// the home itself, so no secret is in the bridge. It is pointed at the very
// config this leo uses: LEO_HOME names the home, and a config named with
// --config is passed on as --config <file> (the home alone would lead the
// server to <home>/leo.yaml, another file).
func (c *Config) MCPBridge(h home.Home, executable string) *harness.MCPBridge {
	if !c.WebEnabled() || executable == "" {
		return nil
	}
	if _, err := apitoken.Read(h.TokenPath()); err != nil {
		return nil
	}
	args := []string{"mcp-server"}
	if h.ExplicitConfig {
		args = []string{"--config", h.ConfigPath, "mcp-server"}
	}
	return &harness.MCPBridge{
		Command: executable,
		Args:    args,
		Env:     map[string]string{"LEO_HOME": h.Root},
		URL:     c.WebLocalURL(),
	}
}
