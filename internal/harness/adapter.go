package harness

import (
	"maps"
	"os"
)

// Small pieces every adapter needs the same way.

// Known reports whether k is one of the leo primitives, so an adapter that
// runs every primitive answers SupportsKind with k.Known().
func (k Kind) Known() bool {
	switch k {
	case KindTask, KindAgent, KindPersistent:
		return true
	}
	return false
}

// Getenv reads key from a launch or lookup environment (LaunchSpec.Env,
// SessionQuery.Env, GlobalSpec.Env), falling back to leo's own environment
// when env does not set it; a key set to "" in env stays "".
func Getenv(env map[string]string, key string) string {
	if v, ok := env[key]; ok {
		return v
	}
	return os.Getenv(key)
}

// The bridge environment that tells leo's MCP server whom it speaks for:
// the agent it was launched in, or the task whose run launched it. The
// server signs messages with it; a tool argument never can.
const (
	BridgeAgentEnv = "LEO_AGENT"
	BridgeTaskEnv  = "LEO_TASK"
)

// For returns a copy of b whose server speaks for one sender: key is
// BridgeAgentEnv or BridgeTaskEnv, name the agent or task. The other key is
// set empty, so a value the harness's own environment carries (a leo run
// started inside an agent's pane) never reaches the server as a second
// sender. A nil bridge (none wired) stays nil.
func (b *MCPBridge) For(key, name string) *MCPBridge {
	if b == nil {
		return nil
	}
	out := *b
	out.Env = make(map[string]string, len(b.Env)+1)
	maps.Copy(out.Env, b.Env)
	out.Env[BridgeAgentEnv], out.Env[BridgeTaskEnv] = "", ""
	out.Env[key] = name
	return &out
}

// BridgeNudge is the short system-prompt text a harness carries when leo's
// MCP server is wired in (and only then: without the bridge there is no
// leo_skill to point at). Each adapter delivers it its own way.
const BridgeNudge = `You are running under leo, which keeps this agent alive and delivers messages to it.
To message other agents, list or spawn them, or run leo tasks, call the leo_skill MCP tool first: it explains leo's tools.`

// ServerEnv is the environment of leo's MCP server process: the bridge's
// Env plus LEO_URL (unless Env sets it). It holds no secret: the server
// reads its token from a file.
func (b *MCPBridge) ServerEnv() map[string]string {
	env := make(map[string]string, len(b.Env)+1)
	maps.Copy(env, b.Env)
	if _, set := env["LEO_URL"]; !set && b.URL != "" {
		env["LEO_URL"] = b.URL
	}
	return env
}

// Nudger is implemented by adapters whose harness is told of leo in words
// of its own instead of BridgeNudge (pi has no MCP: its note names the leo
// CLI). Nudge is the text a launch wired with b carries, "" for none.
type Nudger interface {
	Nudge(b *MCPBridge) string
}

// NudgeOf is the note a launch of h wired with b carries: the adapter's
// own (Nudger), else BridgeNudge.
func NudgeOf(h Harness, b *MCPBridge) string {
	if n, ok := h.(Nudger); ok {
		return n.Nudge(b)
	}
	return BridgeNudge
}
