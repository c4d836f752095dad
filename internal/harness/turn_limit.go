package harness

// TurnLimiter is implemented by adapters to say whether a scope's max_turns
// reaches the harness (claude's --max-turns) or is ignored (codex and
// opencode have no per-turn cap). Config warns about a max_turns the
// harness ignores; an adapter that does not implement TurnLimiter is taken
// to honour it.
type TurnLimiter interface {
	HonorsMaxTurns() bool
}
