package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// availableHarnesses is how an unknown harness's error lists the
// registered ones.
var availableHarnesses = strings.Join(harness.Names(), ", ")

// badYAML makes one of each mistake of docs/configuration/harnesses.md "Validation
// behavior", plus a warning (max_turns on codex).
const badYAML = `providers:
  zai: {}
defaults:
  harness_options:
    foo: 1
templates:
  a:
    harness: nope
  b:
    harness: codex
    channels: [plugin:telegram@claude-plugins-official]
    harness_options:
      approval: never
  c:
    harness: codex
    max_turns: 10
tasks:
  t:
    schedule: "* * *"
    prompt_file: missing.md
`

func TestValidateValidConfig(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()

	r := e.run("validate", "-c", cfg)
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	golden(t, "validate_ok", e.normalize(r.stdout))

	r = e.run("validate", "-c", cfg, "--json")
	if r.code != ExitOK {
		t.Fatalf("exit %d", r.code)
	}
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "validate success", obj, "ok", "config", "findings")
	if obj["ok"] != true || obj["config"] != cfg {
		t.Errorf("got %s", r.stdout)
	}
	if fs, ok := obj["findings"].([]any); !ok || len(fs) != 0 {
		t.Errorf("findings = %#v, want []", obj["findings"])
	}
}

// TestValidateInvalidConfig: every error is listed with severity and path,
// the exit is config_error's, and JSON keeps the findings next to the code.
func TestValidateInvalidConfig(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("bad", badYAML, nil)

	r := e.run("validate", "-c", cfg)
	if r.code != ExitConfig {
		t.Fatalf("exit %d, want %d", r.code, ExitConfig)
	}
	golden(t, "validate_errors", e.normalize(r.stdout))
	mustContain(t, "stdout", r.stdout,
		`error: providers: this section has been removed — see docs/configuration/harnesses.md`,
		`error: templates.a.harness "nope" is not a registered harness (available: `+availableHarnesses+`)`,
		`error: defaults.harness_options: unknown option "foo" (valid: agent, allowed_tools, append_system_prompt, bypass_permissions, disallowed_tools, permission_mode, remote_control)`,
		`error: templates.b.channels: the codex harness does not support channel plugins; use leo's MCP tools for messaging`,
		`error: templates.b.harness_options: option "approval" is not supported: codex exec always runs non-interactively (approval policy "never")`,
		`warning: templates.c.max_turns`,
	)
	if got := strings.TrimSpace(e.normalize(r.stderr)); !strings.HasPrefix(got, "leo: $TMP/bad/leo.yaml: ") || !strings.Contains(got, " errors, 1 warning") {
		t.Errorf("stderr = %q", got)
	}

	r = e.run("validate", "-c", cfg, "--json")
	obj := assertJSONFailure(t, r, "config_error", ExitConfig)
	assertKeys(t, "validate failure", obj, "ok", "error", "message", "config", "findings")
	if obj["ok"] != false || obj["config"] != cfg {
		t.Errorf("ok/config wrong: %s", r.stdout)
	}
	fs := obj["findings"].([]any)
	var errs, warns int
	for _, f := range fs {
		m := f.(map[string]any)
		for _, k := range keysOf(m) {
			switch k {
			case "severity", "path", "message", "line", "column":
			default:
				t.Errorf("finding has undocumented field %q", k)
			}
		}
		if !strings.HasPrefix(m["message"].(string), m["path"].(string)) {
			t.Errorf("message %q does not start with its path %q", m["message"], m["path"])
		}
		switch m["severity"] {
		case "error":
			errs++
		case "warning":
			warns++
		default:
			t.Errorf("severity %v", m["severity"])
		}
	}
	if errs < 6 || warns != 1 {
		t.Errorf("%d errors, %d warnings in %s", errs, warns, r.stdout)
	}
	golden(t, "validate_errors_json", e.normalize(r.stdout))
}

// TestValidateMissingConfig: the default home without leo.yaml answers the
// contract text; an explicit --config names the file.
func TestValidateMissingConfig(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("validate")
	if r.code != ExitConfig || r.stdout != "" {
		t.Fatalf("exit %d stdout %q", r.code, r.stdout)
	}
	want := "leo: no leo.yaml found — run 'leo setup' first (looked for " + filepath.Join(e.dir, "home", ".leo", "leo.yaml") + ")\n"
	if r.stderr != want {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}

	r = e.run("validate", "--json")
	obj := assertJSONFailure(t, r, "config_error", ExitConfig)
	if !strings.HasPrefix(obj["message"].(string), NoConfigMessage) {
		t.Errorf("message = %q", obj["message"])
	}

	e.vars["LEO_HOME"] = filepath.Join(e.dir, "elsewhere")
	r = e.run("validate", "--json")
	obj = assertJSONFailure(t, r, "config_error", ExitConfig)
	if obj["config"] != filepath.Join(e.dir, "elsewhere", "leo.yaml") {
		t.Errorf("config = %v", obj["config"])
	}
}

// TestValidateNotYAML: a syntax error is config_error with the position.
func TestValidateNotYAML(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("broken", "templates:\n  a: [unclosed\n", nil)
	r := e.run("validate", "-c", cfg, "--json")
	obj := assertJSONFailure(t, r, "config_error", ExitConfig)
	mustContain(t, "message", obj["message"].(string), cfg+":")
}

// TestValidateWarningsOnlyPass: warnings are listed but exit 0.
func TestValidateWarningsOnlyPass(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("warn", "templates:\n  c:\n    workspace: .\n    harness: codex\n    max_turns: 5\n", nil)
	r := e.run("validate", "-c", cfg)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "warning: templates.c.max_turns", "valid (1 template, 0 tasks, 1 warning)")

	r = e.run("validate", "-c", cfg, "--json")
	obj := decodeOne(t, r.stdout)
	if obj["ok"] != true || len(obj["findings"].([]any)) != 1 {
		t.Errorf("got %s", r.stdout)
	}
}

// TestRunValidateDirect drives the run function with fake streams.
func TestRunValidateDirect(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("bad", badYAML, nil)
	f := NewFactory(nil, e.getenv, "")
	f.ConfigFlag = cfg
	h, err := f.Home()
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := TestStreams()
	err = runValidate(&ValidateOptions{IO: io, Home: h, Getenv: e.getenv})
	var vf *validateFailure
	if !errors.As(err, &vf) || ExitCodeOf(err) != ExitConfig {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(out.String(), "error: providers:") {
		t.Errorf("stdout = %s", out.String())
	}
}
