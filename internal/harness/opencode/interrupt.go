package opencode

// InterruptKeys end the turn in flight (the first Escape only arms it: its busy line then says "esc again to interrupt").
func (Opencode) InterruptKeys() []string { return []string{"Escape", "Escape"} }
