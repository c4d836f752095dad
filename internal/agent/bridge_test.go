package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// An agent of a daemon started with --config <file> gets leo's MCP server
// pointed at that file, exactly as `leo run` does (one bridge for every
// launch, config.MCPBridge); it used to get <home>/leo.yaml.
func TestAgentLaunchBridgeNamesTheDaemonsConfigFile(t *testing.T) {
	e := newEnv(t)
	custom := filepath.Join(e.home.Root, "custom.yaml")
	e.home = home.Home{Root: e.home.Root, ConfigPath: custom, ExplicitConfig: true}
	if err := os.WriteFile(e.home.TokenPath(), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	y := "web: {enabled: true}\ntemplates:\n  codex:\n    harness: codex\n    workspace: " + filepath.Join(e.workspace, "codex") + "\n    env:\n"
	for k, v := range e.userHome {
		y += "      " + k + ": \"" + v + "\"\n"
	}
	cfg, err := config.Parse([]byte(y), custom)
	if err != nil {
		t.Fatal(err)
	}
	e.cfg.Store(cfg)
	m := e.newManager()

	p, err := m.plan(context.Background(), &Record{Name: "codex-2", Template: "codex", Harness: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	// The server speaks for the agent it runs in, so its messages are
	// signed by it (never by a tool argument).
	if got := p.spec.Bridge.Env["LEO_AGENT"]; got != "codex-2" {
		t.Errorf("bridge LEO_AGENT = %q, want the agent's name codex-2", got)
	}
	if !slices.ContainsFunc(p.cmd.Argv, func(a string) bool {
		return strings.HasPrefix(a, "mcp_servers.leo.env=") && strings.Contains(a, `LEO_AGENT = "codex-2"`)
	}) {
		t.Errorf("argv does not hand the server its agent's name: %q", p.cmd.Argv)
	}
	want := cfg.MCPBridge(e.home, "/bin/false")
	if p.spec.Bridge == nil || want == nil || !slices.Equal(p.spec.Bridge.Args, want.Args) {
		t.Fatalf("agent bridge %+v, want %+v", p.spec.Bridge, want)
	}
	if !testutil.HasSeq(p.cmd.Argv, []string{"-c", `mcp_servers.leo.args=["--config", "` + custom + `", "mcp-server"]`}) {
		t.Fatalf("argv does not start the MCP server on %s: %q", custom, p.cmd.Argv)
	}
}
