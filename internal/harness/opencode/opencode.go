// Package opencode is the adapter for the opencode CLI. Its permissions and
// leo's MCP bridge ride the OPENCODE_CONFIG_CONTENT overlay (never a file);
// session ids are found with `opencode session list` after the first turn.
package opencode

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func init() { harness.Register(Opencode{}) }

// Opencode implements harness.Harness, harness.GlobalPreparer,
// harness.PasteTiming and harness.TurnLimiter. It is stateless and safe for
// concurrent use.
type Opencode struct{}

var (
	_ harness.Harness        = Opencode{}
	_ harness.GlobalPreparer = Opencode{}
	_ harness.PasteTiming    = Opencode{}
	_ harness.TurnLimiter    = Opencode{}
)

// Name is the registry key.
func (Opencode) Name() string { return "opencode" }

// Binary is the executable looked up on PATH.
func (Opencode) Binary() string { return "opencode" }

// SupportsChannels: opencode messages through leo's MCP tools instead.
func (Opencode) SupportsChannels() bool { return false }

// SupportsKind: opencode runs every leo primitive.
func (Opencode) SupportsKind(k harness.Kind) bool { return k.Known() }

// HonorsMaxTurns: like codex, opencode has no per-turn cap, so max_turns is
// ignored (spec: "Opencode option reference").
func (Opencode) HonorsMaxTurns() bool { return false }

// EnterDelay is zero for the same reason as claude's: the paste showing in
// the input box is the proof it was read.
func (Opencode) EnterDelay() time.Duration { return 0 }

const optPermission = "permission"

var schema = []harness.OptionField{
	{Key: optPermission, Type: harness.OptionYAMLMap,
		Help: "opencode permission config ({tool: verdict} or {tool: {pattern: verdict}}), sent as OPENCODE_CONFIG_CONTENT"},
}

// Rejected keys and why (spec: "Opencode option reference", word for word).
var rejected = map[string]string{
	"append_system_prompt": "opencode has no append-system-prompt equivalent (use AGENTS.md or the instructions config)",
}

// OptionsSchema lists opencode's one option.
func (Opencode) OptionsSchema() []harness.OptionField { return slices.Clone(schema) }

// DecodeOptions strictly validates a raw harness_options map.
func (Opencode) DecodeOptions(raw map[string]any) (harness.Options, error) {
	return harness.DecodeStrict(schema, rejected, raw)
}

// ModelHint implements harness.ModelHinter.
func (Opencode) ModelHint() string { return "provider/model, e.g. anthropic/claude-sonnet-5" }

// ValidateModel requires provider/model (e.g. anthropic/claude-sonnet-4-5).
func (Opencode) ValidateModel(model string) error {
	if model == "" {
		return nil
	}
	provider, name, ok := strings.Cut(model, "/")
	if !ok || provider == "" || name == "" || strings.ContainsFunc(model, unicode.IsSpace) {
		return fmt.Errorf("invalid model %q: opencode models are provider/model, e.g. anthropic/claude-sonnet-4-5", model)
	}
	return nil
}

// CommandPrefixes: the TUI takes input starting with these as its own
// slash commands ("/exit") and "!" shell commands, not as a message.
func (Opencode) CommandPrefixes() []string { return []string{"/", "!"} }
