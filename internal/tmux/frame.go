package tmux

import (
	"strings"
)

// A block is one command reply in control mode: the lines between
// "%begin <time> <number> <flags>" and the matching "%end …" or "%error …".
type block struct {
	// Number is the command number tmux assigned.
	Number string
	// Ours is true when flags=1: the command came from this client's input.
	// flags=0 blocks (the attach command itself, hooks) answer nobody.
	Ours  bool
	Error bool
	Lines []string
}

// frameParser splits control-mode output into reply blocks and
// notifications. tmux promises notifications never appear inside a block.
//
// A block ends only on an "%end"/"%error" line whose time, number and flags
// equal those of its "%begin": command output is raw (a capture of a pane
// that prints "%end 1 2 1" must not cut the reply short), and a genuine
// closing line always repeats the opening triple.
type frameParser struct {
	inBlock bool
	guard   string // "<time> <number> <flags>" of the open block
	cur     block
}

// feed takes one line (without its LF) and returns a completed block, or a
// notification line, or neither.
func (p *frameParser) feed(line string) (done *block, notification string) {
	if p.inBlock {
		if rest, ok := strings.CutPrefix(line, "%end "); ok && rest == p.guard {
			return p.finish(false), ""
		}
		if rest, ok := strings.CutPrefix(line, "%error "); ok && rest == p.guard {
			return p.finish(true), ""
		}
		p.cur.Lines = append(p.cur.Lines, line)
		return nil, ""
	}
	if rest, ok := strings.CutPrefix(line, "%begin "); ok {
		fields := strings.Fields(rest)
		if len(fields) == 3 && strings.Join(fields, " ") == rest {
			p.inBlock = true
			p.guard = rest
			p.cur = block{Number: fields[1], Ours: fields[2] == "1"}
			return nil, ""
		}
	}
	if strings.HasPrefix(line, "%") {
		return nil, line
	}
	// Stray text outside a block (should not happen): ignore it.
	return nil, ""
}

func (p *frameParser) finish(isErr bool) *block {
	b := p.cur
	b.Error = isErr
	p.inBlock = false
	p.guard = ""
	p.cur = block{}
	return &b
}
