package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the streams a command reads and writes. Commands never touch
// os.Stdout directly, so tests drive them with buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTTY reports whether Out is a terminal (tables get aligned colors-free
	// either way; prompts are only shown on a TTY).
	IsTTY bool
	// Lines is where a command whose --json is a stream of JSON lines
	// (jsonLines) writes them as they come: the real stdout, which Out is
	// not while the JSON rule holds a command's output to check it. Nil
	// outside --json; use LinesOut.
	Lines io.Writer
}

// LinesOut is where a stream of JSON lines goes: Lines under --json, else
// Out.
func (s *IOStreams) LinesOut() io.Writer {
	if s.Lines != nil {
		return s.Lines
	}
	return s.Out
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		IsTTY:  term.IsTerminal(int(os.Stdout.Fd())),
	}
}

// TestStreams returns streams backed by buffers: stdin, stdout, stderr.
func TestStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
