package opencode

import "github.com/blackpaw-studio/leo/internal/harness"

var _ harness.Installer = Opencode{}

// Install names opencode and its npm package.
func (Opencode) Install() harness.Install {
	return harness.Install{Title: "opencode", Command: "npm install -g opencode-ai"}
}
