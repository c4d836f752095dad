package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// The JSON rule (docs/managed-install.md), implemented here and in Run once:
//
//   - stdout carries only the JSON object; logs and progress go to stderr;
//   - a failure is {"error": "<stable code>", "message": "…"} with a non-zero
//     exit, bad flags and arguments included (invalid_args).
//
// A command opts in with addJSONFlag and prints its success object with
// writeJSON; Run prints failures. Run also lays the object out once, for
// every command (layoutJSON): indented on a terminal, compact otherwise
// (a program reading the object pays for no whitespace).

// addJSONFlag gives cmd the --json flag bound to target.
func addJSONFlag(cmd *cobra.Command, target *bool) {
	cmd.Flags().BoolVar(target, "json", false, "print one JSON object on stdout (failures: {\"error\":code,\"message\":…})")
}

// writeJSON writes v as one compact JSON object and a newline (Run lays it
// out for the terminal). HTML escaping is off: messages carry arrows and
// quotes users should read as is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// layoutJSON checks that b is one JSON object and nothing else, and returns
// it followed by a newline: indented by two spaces when it goes to a
// terminal, compact otherwise. Only whitespace between tokens changes;
// field names, their order and every string stay as written.
func layoutJSON(b []byte, tty bool) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("nothing was printed")
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("%.20q is not an object", b)
	}
	var out bytes.Buffer
	var err error
	if tty {
		out.Grow(2 * len(b))
		err = json.Indent(&out, b, "", "  ")
	} else {
		out.Grow(len(b) + 1)
		err = json.Compact(&out, b)
	}
	if err != nil {
		return nil, err // not JSON, or more follows the object
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// printJSON writes v on io.Out laid out as layoutJSON does.
func printJSON(io *IOStreams, v any) error {
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return err
	}
	out, err := layoutJSON(b.Bytes(), io.IsTTY)
	if err != nil {
		return err
	}
	_, err = io.Out.Write(out)
	return err
}

// jsonFailure is an error whose JSON failure object carries more than
// {error, message} (it must still carry those two).
type jsonFailure interface {
	error
	JSONBody() any
}
