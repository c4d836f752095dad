package harness

// WorkspaceFiler is a harness whose launches put files of leo's own into
// the workspace (claude's .claude/settings.local.json with leo's hooks).
// They are no work of the agent's: a worktree holding only them is clean
// for leo's removal rules.
type WorkspaceFiler interface {
	// WorkspaceFiles are the absolute paths leo writes under workspace.
	WorkspaceFiles(workspace string) []string
}
