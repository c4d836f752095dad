// Package claude is the adapter for Anthropic's Claude Code CLI. It pins
// conversation ids up front (--session-id), supports channel plugins, and
// drives the TUI whose input line sits between two horizontal rules.
package claude

import (
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func init() { harness.Register(Claude{}) }

// Claude implements harness.Harness, harness.Preparer, harness.PasteTiming
// and harness.TurnLimiter. It is stateless, so the zero value is ready and
// safe for concurrent use.
type Claude struct{}

var (
	_ harness.Harness     = Claude{}
	_ harness.Preparer    = Claude{}
	_ harness.PasteTiming = Claude{}
	_ harness.TurnLimiter = Claude{}

	_ harness.ModelDefaulter = Claude{}
)

// Name is the registry key.
func (Claude) Name() string { return "claude" }

// Binary is the executable looked up on PATH.
func (Claude) Binary() string { return "claude" }

// SupportsChannels: claude is the one harness with channel plugins.
func (Claude) SupportsChannels() bool { return true }

// SupportsKind: claude runs every leo primitive.
func (Claude) SupportsKind(k harness.Kind) bool { return k.Known() }

// HonorsMaxTurns: headless runs pass max_turns as --max-turns.
func (Claude) HonorsMaxTurns() bool { return true }

// EnterDelay is zero: delivery sends Enter only after the pasted text shows
// in the input line, which is claude having committed the paste; a lost
// Enter is caught by the submit check and resent once.
func (Claude) EnterDelay() time.Duration { return 0 }

// CommandPrefixes: the TUI takes input starting with these as its own
// slash commands ("/exit", "/clear") and "!" shell mode, not as a message.
func (Claude) CommandPrefixes() []string { return []string{"/", "!"} }
