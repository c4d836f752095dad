// Package codex is the adapter for OpenAI's Codex CLI. Codex chooses its own
// thread ids, so leo launches it fresh (approval policy "never") and finds the
// id afterwards in codex's rollout files; headless runs use `codex exec`.
package codex

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func init() { harness.Register(Codex{}) }

// Codex implements harness.Harness, harness.Preparer, harness.PasteTiming
// and harness.TurnLimiter. It is stateless and safe for concurrent use.
type Codex struct{}

var (
	_ harness.Harness     = Codex{}
	_ harness.Preparer    = Codex{}
	_ harness.PasteTiming = Codex{}
	_ harness.TurnLimiter = Codex{}
)

// Name is the registry key.
func (Codex) Name() string { return "codex" }

// Binary is the executable looked up on PATH.
func (Codex) Binary() string { return "codex" }

// SupportsChannels: codex messages through leo's MCP tools instead.
func (Codex) SupportsChannels() bool { return false }

// SupportsKind: codex runs every leo primitive.
func (Codex) SupportsKind(k harness.Kind) bool { return k.Known() }

// HonorsMaxTurns: codex has no per-turn cap leo can drive, so max_turns is
// ignored (spec: "Codex option reference").
func (Codex) HonorsMaxTurns() bool { return false }

// EnterDelay covers codex's paste-burst window: an Enter read within 120 ms
// of pasted bytes becomes a newline. Delivery counts it from the moment the
// paste shows on screen, which is after codex read it, so 130 ms suffices.
func (Codex) EnterDelay() time.Duration { return 130 * time.Millisecond }

const optSandbox = "sandbox"

var sandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

var schema = []harness.OptionField{
	{Key: optSandbox, Type: harness.OptionEnum, EnumValues: sandboxModes,
		Help: "codex --sandbox policy for model-generated commands"},
}

// Rejected keys and why (spec: "Codex option reference", word for word).
var rejected = map[string]string{
	"approval":             `codex exec always runs non-interactively (approval policy "never")`,
	"append_system_prompt": "codex has no append-system-prompt equivalent (use the workspace AGENTS.md)",
}

// OptionsSchema lists codex's one option.
func (Codex) OptionsSchema() []harness.OptionField { return slices.Clone(schema) }

// DecodeOptions strictly validates a raw harness_options map.
func (Codex) DecodeOptions(raw map[string]any) (harness.Options, error) {
	return harness.DecodeStrict(schema, rejected, raw)
}

// ValidateModel only rejects whitespace: codex validates names server-side.
func (Codex) ValidateModel(model string) error {
	if strings.ContainsFunc(model, unicode.IsSpace) {
		return fmt.Errorf("invalid model %q: must not contain whitespace", model)
	}
	return nil
}

// ModelHint implements harness.ModelHinter: codex names are free-form.
func (Codex) ModelHint() string { return "e.g. gpt-5.3-codex" }

// Home is codex's state directory: $CODEX_HOME, else ~/.codex.
func Home(env map[string]string) string {
	if d := harness.Getenv(env, "CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(harness.Getenv(env, "HOME"), ".codex")
}

// CommandPrefixes: the TUI takes input starting with these as its own
// slash commands ("/exit", "/new") and "!" shell mode, not as a message.
func (Codex) CommandPrefixes() []string { return []string{"/", "!"} }
