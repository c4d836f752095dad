package claude

// InterruptKeys end the turn in flight (its busy line says "esc to interrupt").
func (Claude) InterruptKeys() []string { return []string{"Escape"} }

// ClearInputKeys clear claude's input line (Ctrl+U: to the start of the
// line). claude 2.1.197, interrupted before the model answered, takes the
// message back out of the conversation and puts it into the input line.
func (Claude) ClearInputKeys() []string { return []string{"C-u"} }
