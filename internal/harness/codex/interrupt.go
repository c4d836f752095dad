package codex

// InterruptKeys end the turn in flight (its busy line says "Esc to interrupt").
func (Codex) InterruptKeys() []string { return []string{"Escape"} }
