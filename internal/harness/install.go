package harness

// Install is how a person gets a harness's CLI, for the reports that find
// it missing (leo doctor's fix line).
type Install struct {
	// Title names the CLI as a person knows it ("Claude Code").
	Title string
	// Command installs it ("npm install -g @openai/codex").
	Command string
}

// Installer is implemented by adapters that say how their CLI is
// installed.
type Installer interface {
	Install() Install
}

// InstallOf is h's Install; for an adapter without one, its name and a
// plain instruction to put its program on PATH.
func InstallOf(h Harness) Install {
	if i, ok := h.(Installer); ok {
		return i.Install()
	}
	return Install{Title: h.Name(), Command: "install " + h.Binary() + " and put its directory on PATH"}
}

// NotFounder is implemented by an adapter whose missing program is an
// error of its own (a code and a text the spec fixes) instead of the
// harness_not_found every other harness gives, which names the program
// and the PATH searched (binpath.LookupHarness).
type NotFounder interface {
	// NotFound is the error of a launch that finds Binary on no PATH.
	NotFound() error
}
