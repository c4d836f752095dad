package codex

import "github.com/blackpaw-studio/leo/internal/harness"

var _ harness.Installer = Codex{}

// Install names codex and its npm package.
func (Codex) Install() harness.Install {
	return harness.Install{Title: "codex", Command: "npm install -g @openai/codex"}
}
