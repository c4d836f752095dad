package claude

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Option keys (spec: "Claude option reference").
const (
	optPermissionMode     = "permission_mode"
	optBypassPermissions  = "bypass_permissions"
	optRemoteControl      = "remote_control"
	optAgent              = "agent"
	optAllowedTools       = "allowed_tools"
	optDisallowedTools    = "disallowed_tools"
	optAppendSystemPrompt = "append_system_prompt"
)

// permissionModes are the values of claude's --permission-mode.
var permissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}

var schema = []harness.OptionField{
	{Key: optPermissionMode, Type: harness.OptionEnum, EnumValues: permissionModes,
		Help: "claude --permission-mode"},
	{Key: optBypassPermissions, Type: harness.OptionBool,
		Help: "pass --dangerously-skip-permissions (sandboxes only)"},
	// Ephemeral agents are remote-controllable out of the box: on templates
	// the key never comes from defaults, and unset means on.
	{Key: optRemoteControl, Type: harness.OptionBool, TemplateOwn: true, TemplateDefault: true,
		Help: "start the session with Remote Control enabled (templates: own value only, default on)"},
	{Key: optAgent, Type: harness.OptionString, Source: "agents",
		Help: "claude sub-agent for the session (--agent)"},
	{Key: optAllowedTools, Type: harness.OptionStringList,
		Help: "tools allowed without asking (--allowedTools)"},
	{Key: optDisallowedTools, Type: harness.OptionStringList,
		Help: "tools denied (--disallowedTools)"},
	{Key: optAppendSystemPrompt, Type: harness.OptionText,
		Help: "text appended to claude's system prompt (--append-system-prompt)"},
}

// OptionsSchema lists the seven claude options in display order.
func (Claude) OptionsSchema() []harness.OptionField { return slices.Clone(schema) }

// DecodeOptions strictly validates a raw harness_options map.
func (Claude) DecodeOptions(raw map[string]any) (harness.Options, error) {
	return harness.DecodeStrict(schema, nil, raw)
}

var validModels = []string{"sonnet", "opus", "haiku", "sonnet[1m]", "opus[1m]"}

// defaultModel is the built-in default model: what `leo setup` writes, and
// what a claude scope runs when it is the defaults' harness and nothing in
// leo.yaml names a model.
const defaultModel = "sonnet"

// DefaultModel implements harness.ModelDefaulter.
func (Claude) DefaultModel() string { return defaultModel }

// ValidModels lists the model aliases leo accepts for claude ("" is also valid).
func ValidModels() []string { return slices.Clone(validModels) }

// ModelSuggestions implements harness.ModelSuggester: the aliases leo
// accepts.
func (Claude) ModelSuggestions() []string { return ValidModels() }

// ValidateModel accepts "" and the aliases of ValidModels.
func (Claude) ValidateModel(model string) error {
	if model == "" || slices.Contains(validModels, model) {
		return nil
	}
	return fmt.Errorf("invalid model %q (valid: %s, or unset to let claude choose)", model, strings.Join(validModels, ", "))
}
