package main

type evKind int

const (
	evText evKind = iota
	evPaste
	evEnter
	evNewline
	evBackspace
	evCtrlC
	evCtrlU
	evEscape
	evUp
	evDown
	evLeft
	evRight
)

type event struct {
	kind evKind
	text string
}

// decoder turns terminal input bytes into events. A bracketed paste
// (ESC[200~ … ESC[201~) may span reads; other escape sequences are
// dropped, except arrows; an ESC ending a read is the Escape key.
type decoder struct {
	inPaste bool
	paste   []byte
	pending []byte // an incomplete escape sequence
}

func (d *decoder) feed(b []byte) []event {
	data := append(d.pending, b...)
	d.pending = nil
	var evs []event
	var text []byte
	flush := func() {
		if len(text) > 0 {
			evs = append(evs, event{kind: evText, text: string(text)})
			text = nil
		}
	}
	for i := 0; i < len(data); {
		if d.inPaste {
			end := indexOf(data[i:], "\x1b[201~")
			if end < 0 {
				// Keep a possible partial end marker for the next read.
				keep := partialSuffix(data[i:], "\x1b[201~")
				d.paste = append(d.paste, data[i:len(data)-keep]...)
				d.pending = append(d.pending, data[len(data)-keep:]...)
				return evs
			}
			d.paste = append(d.paste, data[i:i+end]...)
			evs = append(evs, event{kind: evPaste, text: string(d.paste)})
			d.paste = nil
			d.inPaste = false
			i += end + len("\x1b[201~")
			continue
		}
		c := data[i]
		switch {
		case c == 0x1b:
			flush()
			if i+1 >= len(data) {
				evs = append(evs, event{kind: evEscape})
				i++
				continue
			}
			n, ev, complete := escapeSeq(data[i:])
			if !complete {
				d.pending = append(d.pending, data[i:]...)
				return evs
			}
			if ev != nil {
				if ev.kind == evPaste {
					d.inPaste = true
				} else {
					evs = append(evs, *ev)
				}
			}
			i += n
		case c == '\r':
			flush()
			evs = append(evs, event{kind: evEnter})
			i++
		case c == '\n':
			flush()
			evs = append(evs, event{kind: evNewline})
			i++
		case c == 0x7f || c == 0x08:
			flush()
			evs = append(evs, event{kind: evBackspace})
			i++
		case c == 0x03:
			flush()
			evs = append(evs, event{kind: evCtrlC})
			i++
		case c == 0x15:
			flush()
			evs = append(evs, event{kind: evCtrlU})
			i++
		case c < 0x20:
			i++ // other control keys do nothing here
		default:
			text = append(text, c)
			i++
		}
	}
	flush()
	return evs
}

// escapeSeq parses the escape sequence at the start of b (b[0] is ESC).
// It returns its length, the event it makes (evPaste means "paste
// starts"), and false if b ends before the sequence does.
func escapeSeq(b []byte) (int, *event, bool) {
	switch b[1] {
	case '[':
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				seq := string(b[2 : j+1])
				switch seq {
				case "200~":
					return j + 1, &event{kind: evPaste}, true
				case "A":
					return j + 1, &event{kind: evUp}, true
				case "B":
					return j + 1, &event{kind: evDown}, true
				case "C":
					return j + 1, &event{kind: evRight}, true
				case "D":
					return j + 1, &event{kind: evLeft}, true
				}
				return j + 1, nil, true
			}
		}
		return 0, nil, false
	case 'O':
		if len(b) < 3 {
			return 0, nil, false
		}
		switch b[2] {
		case 'A':
			return 3, &event{kind: evUp}, true
		case 'B':
			return 3, &event{kind: evDown}, true
		case 'C':
			return 3, &event{kind: evRight}, true
		case 'D':
			return 3, &event{kind: evLeft}, true
		}
		return 3, nil, true
	case 0x1b:
		return 1, &event{kind: evEscape}, true
	}
	return 2, nil, true // Alt+key: ignored
}

func indexOf(b []byte, s string) int {
	n := len(s)
	for i := 0; i+n <= len(b); i++ {
		if string(b[i:i+n]) == s {
			return i
		}
	}
	return -1
}

// partialSuffix is how many trailing bytes of b are a proper prefix of s.
func partialSuffix(b []byte, s string) int {
	for k := min(len(s)-1, len(b)); k > 0; k-- {
		if string(b[len(b)-k:]) == s[:k] {
			return k
		}
	}
	return 0
}
