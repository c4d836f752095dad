package claude

import (
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// NotFoundMessage is the contract text of docs/managed-install.md for a
// launch (and a daemon's health) that finds no claude.
const NotFoundMessage = "claude CLI not found; install it from https://claude.com/claude-code"

var (
	_ harness.NotFounder = Claude{}
	_ harness.Installer  = Claude{}
)

// NotFound is claude_not_found with NotFoundMessage: claude's missing
// CLI has its own code and text (docs/managed-install.md).
func (Claude) NotFound() error {
	return &api.Error{Code: api.CodeClaudeNotFound, Message: NotFoundMessage}
}

// Install names Claude Code and its npm package.
func (Claude) Install() harness.Install {
	return harness.Install{Title: "Claude Code", Command: "npm install -g @anthropic-ai/claude-code (see https://claude.com/claude-code)"}
}
