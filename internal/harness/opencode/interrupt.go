package opencode

// InterruptKeys end the turn in flight (the first Escape only arms it: its busy line then says "esc again to interrupt").
func (Opencode) InterruptKeys() []string { return []string{"Escape", "Escape"} }

// ClearInputKeys clear opencode's box (Ctrl+U; one press cleared each
// one-line paste of testdata/screens/opencode/ready-pasted-* on 1.18.33).
func (Opencode) ClearInputKeys() []string { return []string{"C-u"} }
