package cli

import (
	"fmt"
	"strings"
	"testing"
)

func TestTemplateList(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()

	r := e.run("template", "list", "-c", cfg)
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	golden(t, "template_list", e.normalize(r.stdout))

	r = e.run("template", "list", "-c", cfg, "--json")
	golden(t, "template_list_json", e.normalize(r.stdout))
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "template list", obj, "templates")
	rows := obj["templates"].([]any)
	if len(rows) != 4 {
		t.Fatalf("%d templates", len(rows))
	}
	for _, row := range rows {
		assertKeys(t, "template row", row.(map[string]any),
			"name", "harness", "harness_inherited", "model", "model_inherited", "workspace")
	}
	first := rows[0].(map[string]any)
	if first["name"] != "assistant" || first["harness"] != "claude" || first["harness_inherited"] != true {
		t.Errorf("assistant row = %v", first)
	}
}

func TestTemplateListEmpty(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("empty", "defaults: {model: sonnet}\n", nil)
	r := e.run("template", "list", "-c", cfg, "--json")
	if got := strings.TrimSpace(r.stdout); got != `{"templates":[]}` {
		t.Errorf("got %s", got)
	}
	r = e.run("template", "list", "-c", cfg)
	mustContain(t, "stdout", r.stdout, "no templates in ")
}

func TestTemplateShowRaw(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()

	r := e.run("template", "show", "scout", "-c", cfg)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	golden(t, "template_show_scout", e.normalize(r.stdout))

	r = e.run("template", "show", "assistant", "-c", cfg, "--json")
	golden(t, "template_show_assistant_json", e.normalize(r.stdout))
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "template show", obj, "scope", "name", "resolved", "harness", "model", "max_turns",
		"workspace", "harness_options", "channels", "dev_channels", "env_keys", "idle_suspend_after", "queue_max", "worktree", "notify")
	if obj["resolved"] != false || obj["harness"] != "" || obj["workspace"] != "agents" {
		t.Errorf("raw view shows resolved values: %s", r.stdout)
	}
}

func TestTemplateShowResolved(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()

	for _, name := range []string{"assistant", "scout", "codex-coder", "opencode-coder"} {
		r := e.run("template", "show", name, "--resolved", "-c", cfg)
		if r.code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		golden(t, "template_show_resolved_"+name, e.normalize(r.stdout))
	}

	r := e.run("template", "show", "scout", "--resolved", "-c", cfg, "--json")
	golden(t, "template_show_resolved_scout_json", e.normalize(r.stdout))
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "template show --resolved", obj, "scope", "name", "resolved", "harness", "harness_inherited",
		"model", "model_inherited", "max_turns", "workspace", "options", "channels", "dev_channels",
		"env_keys", "idle_suspend_after", "queue_max", "worktree", "notify")
	opts := obj["options"].(map[string]any)
	// Same harness as defaults: defaults' options come in marked inherited;
	// remote_control is the built-in template default, also inherited.
	for _, k := range []string{"permission_mode", "allowed_tools", "remote_control"} {
		o, ok := opts[k].(map[string]any)
		if !ok || o["inherited"] != true {
			t.Errorf("option %s = %v, want inherited", k, opts[k])
		}
		assertKeys(t, "option "+k, o, "value", "inherited")
	}

	// A codex template inherits nothing from claude defaults.
	r = e.run("template", "show", "codex-coder", "--resolved", "-c", cfg, "--json")
	obj = decodeOne(t, r.stdout)
	opts = obj["options"].(map[string]any)
	if len(opts) != 1 || opts["sandbox"].(map[string]any)["inherited"] != false {
		t.Errorf("codex options = %v", opts)
	}
	if obj["model"] != "gpt-5.3-codex" || obj["model_inherited"] != false {
		t.Errorf("codex model = %v", obj["model"])
	}
}

// TestTemplateShowSaysWorktree: a template's worktree: true is in every
// view, so a person sees before spawning that its agents get their own
// checkout.
func TestTemplateShowSaysWorktree(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("wt", "templates:\n  iso:\n    worktree: true\n  plain: {}\n", nil)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"iso", []string{"template", "show", "iso"}, "true"},
		{"plain", []string{"template", "show", "plain"}, "(unset: false)"},
		{"iso", []string{"template", "show", "iso", "--resolved"}, "true"},
		{"plain", []string{"template", "show", "plain", "--resolved"}, "false"},
	} {
		r := e.run(append(tc.args, "-c", cfg)...)
		if r.code != ExitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, r.code, r.stderr)
		}
		if !lineHas(r.stdout, "worktree", tc.want) {
			t.Errorf("%v: no worktree line saying %q:\n%s", tc.args, tc.want, r.stdout)
		}
	}
	for _, args := range [][]string{{"template", "show", "iso", "--json"}, {"template", "show", "iso", "--resolved", "--json"}} {
		r := e.run(append(args, "-c", cfg)...)
		if obj := decodeOne(t, r.stdout); obj["worktree"] != true {
			t.Errorf("%v: worktree = %v", args, obj["worktree"])
		}
	}
}

// lineHas says whether some line of out starts with field and holds want.
func lineHas(out, field, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, field) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// TestTemplateShowNeverPrintsEnvValues: every view of a template shows env
// key names only.
func TestTemplateShowNeverPrintsEnvValues(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	views := [][]string{
		{"template", "show", "scout"},
		{"template", "show", "scout", "--json"},
		{"template", "show", "scout", "--resolved"},
		{"template", "show", "scout", "--resolved", "--json"},
		{"template", "list"},
		{"template", "list", "--json"},
	}
	for _, argv := range views {
		r := e.run(append(argv, "-c", cfg)...)
		if r.code != ExitOK {
			t.Fatalf("%v: exit %d", argv, r.code)
		}
		out := r.stdout + r.stderr
		for _, secret := range append(allSecrets(), "https://api.z.ai/api/coding/paas/v4", "${GLM_API_KEY}", "hooks.example.com", "${NOTIFY_HOOK}") {
			if strings.Contains(out, secret) {
				t.Errorf("%v printed env value %q:\n%s", argv, secret, out)
			}
		}
		if strings.Contains(argv[1], "show") {
			mustContain(t, strings.Join(argv, " "), out, "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
		}
	}
}

// TestTemplateShowMasksSecretLookingOptions: an option whose key looks like a
// credential is never printed (no built-in option does; a future one might).
func TestTemplateShowMasksSecretLookingOptions(t *testing.T) {
	got := maskOptions(map[string]any{
		"permission": map[string]any{"bash": "ask", "api_key": "k-123456"},
		"auth_token": "t-123456",
		"plain":      "visible",
	})
	if formatValue(got) != "{auth_token: ***, permission: {api_key: ***, bash: ask}, plain: visible}" {
		t.Errorf("got %s", formatValue(got))
	}
}

func TestTemplateShowUnknown(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	r := e.run("template", "show", "nope", "-c", cfg, "--json")
	obj := assertJSONFailure(t, r, "not_found", ExitError)
	if obj["message"] != `template "nope" not found in leo.yaml (templates: assistant, codex-coder, opencode-coder, scout)` {
		t.Errorf("message = %q", obj["message"])
	}
}

// TestTemplateCommandsRefuseInvalidConfig: like the daemon, the CLI does not
// act on a config that fails validation.
func TestTemplateCommandsRefuseInvalidConfig(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.writeConfig("bad", badYAML, nil)
	r := e.run("template", "list", "-c", cfg, "--json")
	obj := assertJSONFailure(t, r, "config_error", ExitConfig)
	mustContain(t, "message", obj["message"].(string), "run 'leo validate' for details", `templates.a.harness "nope"`)
}

func TestRunTemplateShowDirect(t *testing.T) {
	e := newTestEnv(t)
	cfgPath := e.withFullConfig()
	f := NewFactory(nil, e.getenv, "")
	f.ConfigFlag = cfgPath
	cfg, _, err := f.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := TestStreams()
	if err := runTemplateShow(&TemplateShowOptions{IO: io, Config: cfg, Name: "opencode-coder", Resolved: true}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "stdout", out.String(), "permission:", "{bash: ask, edit: allow}", "queue_max:           3")
}

func TestUnknownScopeErrorListsAFewNames(t *testing.T) {
	var names []string
	for i := range 25 {
		names = append(names, fmt.Sprintf("t%02d", i))
	}
	msg := unknownScopeError("task", "x", names).Error()
	if !strings.HasSuffix(msg, "t19, … and 5 more)") || strings.Contains(msg, "t20") {
		t.Errorf("message = %q", msg)
	}
	if got := unknownScopeError("task", "x", nil).Error(); got != `task "x" not found in leo.yaml (tasks: none)` {
		t.Errorf("message = %q", got)
	}
}
