package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzJSONRule: whatever follows `leo validate --json`, `leo template
// show --json`, `leo status --json` or `leo pair --json` on the command line, stdout is exactly one JSON object, and
// it carries "error" exactly when the exit status is non-zero.
func FuzzJSONRule(f *testing.F) {
	for _, seed := range []string{
		"", "--bogus", "-c", "-c\x00/nonexistent/leo.yaml", "extra\x00args",
		"-x", "--config=", "--help\x00--bogus", "--resolved\x00a\x00b",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.Contains(raw, "json") || strings.Contains(raw, "-h") {
			return // a later --json=false or --help legitimately turns JSON off
		}
		tail := strings.Split(raw, "\x00")
		for _, prefix := range [][]string{{"validate", "--json"}, {"template", "show", "--json"}, {"status", "--json"}, {"pair", "--json"}} {
			args := append(append([]string{}, prefix...), tail...)
			io, _, out, _ := TestStreams()
			getenv := func(k string) string {
				if k == "HOME" {
					return dir
				}
				return ""
			}
			err := Run(context.Background(), args, NewFactory(io, getenv, "fuzz"))
			dec := json.NewDecoder(strings.NewReader(out.String()))
			var obj map[string]any
			if derr := dec.Decode(&obj); derr != nil {
				t.Fatalf("leo %q: stdout is not a JSON object: %v\n%s", args, derr, out.String())
			}
			if strings.TrimSpace(out.String()[dec.InputOffset():]) != "" {
				t.Fatalf("leo %q: extra output after the JSON object:\n%s", args, out.String())
			}
			_, hasError := obj["error"]
			if (err != nil) != hasError {
				t.Fatalf("leo %q: err=%v but JSON error field present=%v:\n%s", args, err, hasError, out.String())
			}
		}
	})
}
