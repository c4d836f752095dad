package codex

// InterruptKeys end the turn in flight (its busy line says "Esc to interrupt").
func (Codex) InterruptKeys() []string { return []string{"Escape"} }

// ClearInputKeys clear codex's composer (Ctrl+U; one press cleared each
// one-line paste of testdata/screens/codex/ready-pasted-* on 0.171.0).
func (Codex) ClearInputKeys() []string { return []string{"C-u"} }
