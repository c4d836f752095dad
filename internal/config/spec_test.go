package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The examples of docs/configuration/harnesses.md, copied into testdata/, validate clean.
func TestSpecExamplesValidateClean(t *testing.T) {
	cases := []struct {
		file    string
		prompts []string // prompt files the example refers to
	}{
		{"spec-config-shape.yaml", []string{"workspace/prompts/daily-briefing.md"}},
		{"spec-codex-opencode.yaml", []string{"workspace/prompts/codex-refactor.md", "workspace/prompts/opencode-triage.md"}},
		{"spec-env-endpoints.yaml", []string{"workspace/nightly-report.md"}},
		{"spec-migration-after.yaml", nil},
		{"spec-migration-before.yaml", nil},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			h := newTestHome(t)
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.prompts {
				h.file(t, p, "Do the thing.\n")
			}
			h.file(t, "leo.yaml", string(data))
			c, err := Load(h.Path, WithGetenv(h.getenv))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			wantClean(t, c)
			for _, n := range c.TemplateNames() {
				if _, err := c.ResolveTemplate(n); err != nil {
					t.Errorf("ResolveTemplate(%s): %v", n, err)
				}
			}
			for _, n := range c.TaskNames() {
				if _, err := c.ResolveTask(n); err != nil {
					t.Errorf("ResolveTask(%s): %v", n, err)
				}
			}
		})
	}
}

// The flat claude fields of the migration table's "before" form are now
// unknown keys: ignored, so they take no effect.
func TestOldFlatFieldsAreSilentlyIgnored(t *testing.T) {
	data, err := os.ReadFile("testdata/spec-migration-before.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := parseTestYAML(t, string(data)+"defaults:\n  permission_mode: plan\n  allowed_tools: [Read]\n")
	wantClean(t, c)
	r, err := c.ResolveTemplate("assistant")
	if err != nil {
		t.Fatal(err)
	}
	if _, set := r.Options["permission_mode"]; set {
		t.Errorf("flat permission_mode took effect: %v", r.Options)
	}
	// remote_control is true here only because that is the template default.
	if v, _ := r.Options.Bool("remote_control"); !v || !r.OptionsInherited["remote_control"] {
		t.Errorf("remote_control = %v inherited=%v", r.Options["remote_control"], r.OptionsInherited["remote_control"])
	}
}

// Every error text of docs/configuration/harnesses.md, literally.
func TestSpecErrorTexts(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want string
	}{
		{
			"providers section",
			"providers:\n  zai:\n    base_url: https://example.invalid\n",
			"providers: this section has been removed — see docs/configuration/harnesses.md",
		},
		{
			"template provider field",
			"templates:\n  foo:\n    provider: zai\n",
			"templates.foo.provider: this field has been removed — see docs/configuration/harnesses.md",
		},
		{
			"task provider field",
			"tasks:\n  foo:\n    provider: zai\n",
			"tasks.foo.provider: this field has been removed — see docs/configuration/harnesses.md",
		},
		{
			"defaults provider field",
			"defaults:\n  provider: zai\n",
			"defaults.provider: this field has been removed — see docs/configuration/harnesses.md",
		},
		{
			"unregistered defaults harness",
			"defaults:\n  harness: foo\n",
			`defaults.harness "foo" is not a registered harness (available: ` + availableHarnesses + `)`,
		},
		{
			"unregistered template harness",
			"templates:\n  foo:\n    harness: gemini\n",
			`templates.foo.harness "gemini" is not a registered harness (available: ` + availableHarnesses + `)`,
		},
		{
			"unregistered task harness",
			"tasks:\n  foo:\n    harness: aider\n",
			`tasks.foo.harness "aider" is not a registered harness (available: ` + availableHarnesses + `)`,
		},
		{
			"unknown claude option",
			"defaults:\n  harness_options:\n    foo: 1\n",
			`defaults.harness_options: unknown option "foo" (valid: agent, allowed_tools, append_system_prompt, bypass_permissions, disallowed_tools, permission_mode, remote_control)`,
		},
		{
			"codex channels",
			"templates:\n  foo:\n    harness: codex\n    channels: [plugin:telegram@claude-plugins-official]\n",
			"templates.foo.channels: the codex harness does not support channel plugins; use leo's MCP tools for messaging",
		},
		{
			"codex dev_channels",
			"templates:\n  foo:\n    harness: codex\n    dev_channels: [plugin:x@y]\n",
			"templates.foo.dev_channels: the codex harness does not support channel plugins; use leo's MCP tools for messaging",
		},
		{
			"opencode channels",
			"templates:\n  foo:\n    harness: opencode\n    channels: [plugin:x@y]\n",
			"templates.foo.channels: the opencode harness does not support channel plugins; use leo's MCP tools for messaging",
		},
		{
			"codex approval",
			"tasks:\n  foo:\n    harness: codex\n    harness_options:\n      approval: never\n",
			`tasks.foo.harness_options: option "approval" is not supported: codex exec always runs non-interactively (approval policy "never")`,
		},
		{
			"codex append_system_prompt",
			"templates:\n  foo:\n    harness: codex\n    harness_options:\n      append_system_prompt: be brief\n",
			`templates.foo.harness_options: option "append_system_prompt" is not supported: codex has no append-system-prompt equivalent (use the workspace AGENTS.md)`,
		},
		{
			"opencode append_system_prompt",
			"templates:\n  foo:\n    harness: opencode\n    harness_options:\n      append_system_prompt: be brief\n",
			`templates.foo.harness_options: option "append_system_prompt" is not supported: opencode has no append-system-prompt equivalent (use AGENTS.md or the instructions config)`,
		},
		{
			"wrong option type",
			"templates:\n  foo:\n    harness_options:\n      remote_control: \"yes\"\n",
			`templates.foo.harness_options: option "remote_control": expected a boolean, got string`,
		},
		{
			"invalid enum value",
			"templates:\n  foo:\n    harness: codex\n    harness_options:\n      sandbox: yolo\n",
			`templates.foo.harness_options: option "sandbox": invalid value "yolo" (valid: read-only, workspace-write, danger-full-access)`,
		},
		{
			"claude model",
			"templates:\n  foo:\n    model: gpt-5\n",
			`templates.foo.model: invalid model "gpt-5" (valid: sonnet, opus, haiku, sonnet[1m], opus[1m], or unset to let claude choose)`,
		},
		{
			"opencode model",
			"templates:\n  foo:\n    harness: opencode\n    model: sonnet\n",
			`templates.foo.model: invalid model "sonnet": opencode models are provider/model, e.g. anthropic/claude-sonnet-4-5`,
		},
		{
			"codex model",
			"templates:\n  foo:\n    harness: codex\n    model: gpt 5\n",
			`templates.foo.model: invalid model "gpt 5": must not contain whitespace`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := parseTestYAML(t, tc.yaml)
			f := wantFinding(t, c, tc.want)
			if f.Severity != SeverityError {
				t.Errorf("severity %q", f.Severity)
			}
			if !strings.HasPrefix(tc.want, f.Path) || f.Line == 0 {
				t.Errorf("finding path %q line %d", f.Path, f.Line)
			}
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

// "Validation behavior": each mistake in one file, all reported at once,
// each naming its scope and field.
func TestValidateReportsEveryMistakeAtOnce(t *testing.T) {
	c := parseTestYAML(t, `
providers:
  zai: {}
defaults:
  harness: foo
templates:
  foo:
    harness: codex
    channels: [plugin:telegram@claude-plugins-official]
    provider: zai
  bar:
    harness_options:
      foo: 1
      permission_mode: sometimes
tasks:
  t1:
    harness: codex
    harness_options:
      approval: never
    prompt_file: missing.md
`)
	want := []string{
		"providers: this section has been removed — see docs/configuration/harnesses.md",
		`defaults.harness "foo" is not a registered harness (available: ` + availableHarnesses + `)`,
		"templates.foo.channels: the codex harness does not support channel plugins; use leo's MCP tools for messaging",
		"templates.foo.provider: this field has been removed — see docs/configuration/harnesses.md",
		`tasks.t1.harness_options: option "approval" is not supported: codex exec always runs non-interactively (approval policy "never")`,
	}
	err := c.Validate()
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("Validate() = %T %v", err, err)
	}
	lines := strings.Split(ve.Error(), "\n")
	for _, w := range want {
		if !contains(lines, w) {
			t.Errorf("missing %q in\n%s", w, ve.Error())
		}
	}
	// templates.bar inherits the unregistered defaults harness: its options
	// cannot be checked, and the harness error is not repeated per scope.
	n := 0
	for _, l := range lines {
		if strings.Contains(l, `"foo" is not a registered harness`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("unregistered harness reported %d times", n)
	}
	if !contains(lines, `tasks.t1.prompt_file: "missing.md" not found: the task workspace `+filepath.Join(filepath.Dir(c.Path), "workspace")+` does not exist`) {
		t.Errorf("prompt_file finding missing:\n%s", ve.Error())
	}
	// Sorted by path.
	for i := 1; i < len(ve.Findings); i++ {
		if ve.Findings[i-1].Path > ve.Findings[i].Path {
			t.Errorf("findings not sorted: %q before %q", ve.Findings[i-1].Path, ve.Findings[i].Path)
		}
	}
}

// Several bad keys in one harness_options map are separate findings, each
// located at its key.
func TestEachBadOptionIsItsOwnFinding(t *testing.T) {
	c := parseTestYAML(t, "templates:\n  bar:\n    harness_options:\n      foo: 1\n      permission_mode: sometimes\n")
	valid := "agent, allowed_tools, append_system_prompt, bypass_permissions, disallowed_tools, permission_mode, remote_control"
	f1 := wantFinding(t, c, `templates.bar.harness_options: unknown option "foo" (valid: `+valid+`)`)
	f2 := wantFinding(t, c, `templates.bar.harness_options: option "permission_mode": invalid value "sometimes" (valid: acceptEdits, auto, bypassPermissions, default, dontAsk, plan)`)
	if f1.Line != 4 || f1.Column != 7 || f2.Line != 5 {
		t.Errorf("positions: foo %d:%d, permission_mode %d:%d", f1.Line, f1.Column, f2.Line, f2.Column)
	}
}
