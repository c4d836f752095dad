package cli

import (
	"encoding/json"
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
// writeJSON; Run prints failures.

// addJSONFlag gives cmd the --json flag bound to target.
func addJSONFlag(cmd *cobra.Command, target *bool) {
	cmd.Flags().BoolVar(target, "json", false, "print one JSON object on stdout (failures: {\"error\":code,\"message\":…})")
}

// writeJSON writes v as one indented JSON object and a newline. HTML
// escaping is off: messages carry arrows and quotes users should read as is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// jsonFailure is an error whose JSON failure object carries more than
// {error, message} (it must still carry those two).
type jsonFailure interface {
	error
	JSONBody() any
}
