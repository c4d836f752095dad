package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// bigConfig is a valid leo.yaml of well over 128 KiB (the size from which
// the old loader cut the file at templates: and tasks: and parsed the parts
// apart, counting each part's lines from 1). It returns the text and the
// 1-based line numbers of the templates: and tasks: keys.
func bigConfig(n int) (text string, templatesLine, tasksLine int) {
	var b strings.Builder
	line := 1
	w := func(s string) {
		b.WriteString(s)
		line += strings.Count(s, "\n")
	}
	w("# a large config\ndefaults:\n  model: sonnet\n\n")
	templatesLine = line
	w("templates:\n")
	for i := range n {
		w(fmt.Sprintf("  t%d:\n    harness: codex\n    model: gpt-5.3-codex\n    harness_options: {sandbox: workspace-write}\n    env: {INDEX: \"%d\"}\n", i, i))
	}
	tasksLine = line
	w("tasks:\n")
	for i := range n {
		w(fmt.Sprintf("  k%d:\n    schedule: \"%d %d * * *\"\n    prompt_file: /dev/null\n    timeout: 10m\n", i, i%60, i%24))
	}
	return b.String(), templatesLine, tasksLine
}

// replaceLine swaps the text of one 1-based line.
func replaceLine(text string, line int, with string) string {
	lines := strings.Split(text, "\n")
	lines[line-1] = with
	return strings.Join(lines, "\n")
}

// Findings in a file past 128 KiB point at the very line and column, on
// both sides of where the old loader cut the file (the first lines of the
// templates and tasks sections) and far down (line 9000 and more).
func TestFindingPositionsAreExactInLargeFiles(t *testing.T) {
	text, tplLine, taskLine := bigConfig(1000)
	if len(text) < 128<<10 {
		t.Fatalf("config is only %d bytes", len(text))
	}
	total := strings.Count(text, "\n")
	if total < 9000 {
		t.Fatalf("config has only %d lines", total)
	}
	cases := []struct {
		name string
		line int    // the line to replace
		with string // its new text
		path string // the finding expected there
		col  int
	}{
		{"first template, right after templates:", tplLine + 2, "    harness: nope", "templates.t0.harness", 5},
		{"last template, right before tasks:", taskLine - 1, "    env: {1BAD: x}", "templates.t999.env", 5},
		{"first task, right after tasks:", taskLine + 4, "    timeout: soon", "tasks.k0.timeout", 5},
		{"the last line, past line 9000", total, "    timeout: later", "tasks.k999.timeout", 5},
		{"a key before the first cut", 3, "  model: [x]", "defaults.model", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHome(t)
			y := replaceLine(text, tc.line, tc.with)
			c, err := Parse([]byte(y), h.Path, WithGetenv(h.getenv))
			if err != nil {
				t.Fatal(err)
			}
			var got *Finding
			for _, f := range c.Findings() {
				if f.IsError() && f.Path == tc.path {
					got = &f
					break
				}
			}
			if got == nil {
				t.Fatalf("no error on %s; findings: %v", tc.path, messages(c.Findings()))
			}
			if got.Line != tc.line || got.Column != tc.col {
				t.Fatalf("%s reported at %d:%d, want %d:%d (%s)", tc.path, got.Line, got.Column, tc.line, tc.col, got.Message)
			}
		})
	}
}

// Syntax errors in a large file name their own line and column, not ones
// counted from the start of a section. Each case writes a key a second
// time: the line before it is a key of the same scope.
func TestParseErrorPositionsAreExactInLargeFiles(t *testing.T) {
	text, tplLine, taskLine := bigConfig(1000)
	total := strings.Count(text, "\n")
	lines := strings.Split(text, "\n")
	for _, line := range []int{tplLine + 3, taskLine - 1, taskLine + 3, total} {
		t.Run(fmt.Sprint(line), func(t *testing.T) {
			y := replaceLine(text, line, lines[line-2])
			_, err := Parse([]byte(y), "/tmp/leo.yaml")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a ParseError", err)
			}
			if pe.Line != line || pe.Column != 5 || !strings.Contains(pe.Msg, "already defined") {
				t.Fatalf("reported at %d:%d, want %d:5: %v", pe.Line, pe.Column, line, err)
			}
		})
	}
	if total < 9000 {
		t.Fatalf("the last case is on line %d, want one past 9000", total)
	}
}
