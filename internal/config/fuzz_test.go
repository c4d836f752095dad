package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the loader and the whole pipeline after
// it. It must never panic, and every problem it reports must say where: a
// parse error names the file (and line:col when the YAML library knows it),
// a finding names the scope and field it is about. The seed corpus in
// testdata/fuzz/FuzzParse runs with every plain `go test`.
func FuzzParse(f *testing.F) {
	f.Add([]byte("templates:\n  a:\n    harness: codex\n    channels: [x]\n"))
	f.Add([]byte("providers: {}\ndefaults: {provider: x, harness_options: {foo: 1}}\n"))
	f.Add([]byte("tasks:\n  t: {schedule: \"0 0 30 2 *\", timezone: Mars/Base, prompt_file: ../x}\n"))
	const file = "/nonexistent-leo-fuzz/leo.yaml"
	getenv := func(k string) string {
		if k == "HOME" {
			return "/nonexistent-leo-fuzz"
		}
		return "v"
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, file, WithGetenv(getenv))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), file+":") {
				t.Fatalf("error without a file position: %T %v", err, err)
			}
			return
		}
		for _, f := range c.Findings() {
			if f.Path == "" || !strings.HasPrefix(f.Message, f.Path) {
				t.Fatalf("finding does not name its scope: %+v", f)
			}
			if f.Severity != SeverityError && f.Severity != SeverityWarning {
				t.Fatalf("severity %q", f.Severity)
			}
		}
		_ = c.Validate()
		for _, n := range c.TemplateNames() {
			if r, err := c.ResolveTemplate(n); err == nil {
				_ = r.LaunchSpec()
			}
			_ = c.TemplateModel(n)
		}
		for _, n := range c.TaskNames() {
			if r, err := c.ResolveTask(n); err == nil {
				_ = r.LaunchSpec()
			}
			_ = c.TaskModel(n)
		}
		_ = c.HarnessesInUse()
		_ = c.WebLocalURL()
	})
}
