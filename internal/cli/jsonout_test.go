package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONLayoutFollowsTheTerminal: one rule for every --json command and
// for failures: compact on a pipe or file (nothing but the object and a
// newline), indented by two spaces on a terminal, the same object either
// way.
func TestJSONLayoutFollowsTheTerminal(t *testing.T) {
	for _, args := range [][]string{
		{"version", "--json"},            // a success
		{"version", "--json", "--bogus"}, // a failure (invalid_args)
	} {
		outs := map[bool]string{}
		for _, tty := range []bool{false, true} {
			io, _, out, _ := TestStreams()
			io.IsTTY = tty
			_ = Run(context.Background(), args, NewFactory(io, func(string) string { return "" }, "1.2.3-test"))
			outs[tty] = out.String()
		}
		pipe, term := outs[false], outs[true]
		if strings.Count(pipe, "\n") != 1 || !strings.HasSuffix(pipe, "}\n") || strings.Contains(pipe, "\n  ") {
			t.Errorf("%v on a pipe printed %q, want one compact line", args, pipe)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, bytes.TrimSpace([]byte(pipe)), "", "  "); err != nil {
			t.Fatalf("%v: %v in %q", args, err, pipe)
		}
		want.WriteByte('\n')
		if term != want.String() || !strings.Contains(term, "\n  \"") {
			t.Errorf("%v on a terminal printed\n%s\nwant the same object indented:\n%s", args, term, want.String())
		}
	}
}

// TestLayoutJSONRefusesAllButOneObject: the held stdout of a --json run is
// passed on only when it is exactly one object.
func TestLayoutJSONRefusesAllButOneObject(t *testing.T) {
	for _, in := range []string{"", " \n", "null", "[1]", `"x"`, `{"a":1} {"b":2}`, `{"a":1}x`, `{"a":`, "hello\n"} {
		for _, tty := range []bool{false, true} {
			if out, err := layoutJSON([]byte(in), tty); err == nil {
				t.Errorf("layoutJSON(%q, tty %v) = %q, want an error", in, tty, out)
			}
		}
	}
	out, err := layoutJSON([]byte(" {\"m\": \"<a> & \\u00e9\"}\n\n"), false)
	if err != nil || string(out) != `{"m":"<a> & \u00e9"}`+"\n" {
		t.Errorf("layoutJSON changed a string or kept the whitespace: %q, %v", out, err)
	}
}
