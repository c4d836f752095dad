package claude

// InterruptKeys end the turn in flight (its busy line says "esc to interrupt").
func (Claude) InterruptKeys() []string { return []string{"Escape"} }
