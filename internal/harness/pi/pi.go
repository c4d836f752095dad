// Package pi is the adapter for pi (npm @mariozechner/pi-coding-agent), a
// coding-agent TUI with no MCP, no permission prompts and no trust dialog
// (docs/harness-behaviour/pi.md). leo discovers each conversation's id (pi's
// own, in its session file's name) after the first turn and resumes it with
// --session <id>, reads pi's JSONL session files for delivery proof, turn
// records, compactions and conversations, learns turn ends from a small
// extension of its own (turnend_extension.js, loaded with -e), and tells pi
// about leo's messaging in the system prompt (--append-system-prompt): pi's
// bash tool runs the leo CLI.
package pi

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func init() { harness.Register(Pi{}) }

// Pi implements harness.Harness and the optional interfaces asserted below.
// It is stateless (but for its read caches) and safe for concurrent use.
type Pi struct{}

var (
	_ harness.Harness         = Pi{}
	_ harness.PasteTiming     = Pi{}
	_ harness.TurnLimiter     = Pi{}
	_ harness.CommandPrefixer = Pi{}
	_ harness.Interrupter     = Pi{}
	_ harness.InputClearer    = Pi{}
	_ harness.Installer       = Pi{}
	_ harness.ModelHinter     = Pi{}
	_ harness.Nudger          = Pi{}
)

// Name is the registry key.
func (Pi) Name() string { return "pi" }

// Binary is the executable looked up on PATH.
func (Pi) Binary() string { return "pi" }

// SupportsChannels: pi messages through the leo CLI instead.
func (Pi) SupportsChannels() bool { return false }

// SupportsKind: pi runs every leo primitive.
func (Pi) SupportsKind(k harness.Kind) bool { return k.Known() }

// HonorsMaxTurns: pi has no per-turn cap (no such flag in 0.73.1), so
// max_turns is ignored.
func (Pi) HonorsMaxTurns() bool { return false }

// EnterDelay is zero: pi's editor takes a bracketed paste whole, and the
// paste showing in the box is the proof it was read.
func (Pi) EnterDelay() time.Duration { return 0 }

// Install names pi and its npm package.
func (Pi) Install() harness.Install {
	return harness.Install{Title: "pi", Command: "npm install -g @mariozechner/pi-coding-agent"}
}

// CommandPrefixes: the editor runs "/…" as pi's own command and "!…" as a
// shell command (its start-up help: "/ commands · ! bash").
func (Pi) CommandPrefixes() []string { return []string{"/", "!"} }

// InterruptKeys end the turn in flight: one Escape (the start-up help says
// "escape interrupt"; pi records the turn as aborted).
func (Pi) InterruptKeys() []string { return []string{"Escape"} }

// ClearInputKeys clear pi's editor: Ctrl+C empties it whole (Ctrl+U only
// the line the cursor is on, which leaves a multi-line paste's other
// lines).
func (Pi) ClearInputKeys() []string { return []string{"C-c"} }

const (
	optThinking     = "thinking"
	optTools        = "tools"
	optAppendSystem = "append_system_prompt"
)

// thinkingLevels are the values of --thinking (pi 0.73.1 --help).
var thinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh"}

var schema = []harness.OptionField{
	{Key: optThinking, Type: harness.OptionEnum, EnumValues: thinkingLevels,
		Help: "pi's thinking level (--thinking); unset leaves pi's default"},
	{Key: optTools, Type: harness.OptionStringList,
		Help: "the only tools pi may use (--tools), e.g. read, grep, find, ls; unset: pi's defaults"},
	{Key: optAppendSystem, Type: harness.OptionText,
		Help: "text (or a file to read it from) appended to pi's system prompt (--append-system-prompt), before leo's own note"},
}

// OptionsSchema lists pi's options.
func (Pi) OptionsSchema() []harness.OptionField { return slices.Clone(schema) }

// DecodeOptions strictly validates a raw harness_options map.
func (Pi) DecodeOptions(raw map[string]any) (harness.Options, error) {
	return harness.DecodeStrict(schema, nil, raw)
}

// ModelHint implements harness.ModelHinter.
func (Pi) ModelHint() string { return "provider/id[:thinking], e.g. anthropic/claude-sonnet-4-5" }

// ValidateModel requires provider/id, optionally followed by :<thinking>
// (pi's --model shorthand), the level one of --thinking's.
func (Pi) ValidateModel(model string) error {
	if model == "" {
		return nil
	}
	bad := func(why string) error {
		return fmt.Errorf("invalid model %q: %s; pi models are provider/id or provider/id:<thinking> (%s), e.g. anthropic/claude-sonnet-4-5", model, why, strings.Join(thinkingLevels, ", "))
	}
	if strings.ContainsFunc(model, unicode.IsSpace) {
		return bad("it contains white space")
	}
	provider, id, ok := strings.Cut(model, "/")
	if !ok || provider == "" || id == "" {
		return bad("it has no provider")
	}
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		level := id[i+1:]
		if slices.Contains(thinkingLevels, level) {
			id = id[:i]
		}
	}
	if id == "" || strings.HasPrefix(model, "-") {
		return bad("it has no id")
	}
	return nil
}
