package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func TestHarnessCascade(t *testing.T) {
	c := parseTestYAML(t, `
templates:
  plain: {}
  own:
    harness: codex
tasks:
  t:
    harness: opencode
    prompt_file: p.md
`)
	cases := []struct {
		scope     string
		harness   string
		inherited bool
	}{{"plain", "claude", true}, {"own", "codex", false}}
	for _, tc := range cases {
		r, err := c.ResolveTemplate(tc.scope)
		if err != nil {
			t.Fatal(err)
		}
		if r.HarnessName != tc.harness || r.Harness.Name() != tc.harness || r.HarnessInherited != tc.inherited {
			t.Errorf("%s: harness %s inherited %v", tc.scope, r.HarnessName, r.HarnessInherited)
		}
	}
	c2 := parseTestYAML(t, "defaults:\n  harness: codex\ntemplates:\n  plain: {}\n  back:\n    harness: claude\n")
	if r, _ := c2.ResolveTemplate("plain"); r.HarnessName != "codex" || !r.HarnessInherited {
		t.Errorf("defaults.harness not inherited: %+v", r)
	}
	if r, _ := c2.ResolveTemplate("back"); r.HarnessName != "claude" || r.HarnessInherited {
		t.Errorf("own harness lost: %+v", r)
	}
}

func TestOptionsMergeSameHarnessOnly(t *testing.T) {
	c := parseTestYAML(t, `
defaults:
  harness: codex
  harness_options:
    sandbox: read-only
templates:
  same: {}
  over:
    harness_options: {sandbox: workspace-write}
  other:
    harness: claude
    harness_options: {permission_mode: plan}
`)
	wantClean(t, c)
	same, _ := c.ResolveTemplate("same")
	if same.Options.String("sandbox") != "read-only" || !same.OptionsInherited["sandbox"] {
		t.Errorf("same: %v %v", same.Options, same.OptionsInherited)
	}
	over, _ := c.ResolveTemplate("over")
	if over.Options.String("sandbox") != "workspace-write" || over.OptionsInherited["sandbox"] {
		t.Errorf("over: %v %v", over.Options, over.OptionsInherited)
	}
	other, _ := c.ResolveTemplate("other")
	want := map[string]any{"permission_mode": "plan", "remote_control": true}
	if !reflect.DeepEqual(map[string]any(other.Options), want) {
		t.Errorf("codex defaults leaked into a claude template: %v", other.Options)
	}
}

// Merging is one top-level key at a time: a scope's nested map replaces the
// defaults' map whole.
func TestOptionsMergeIsNotDeep(t *testing.T) {
	c := parseTestYAML(t, `
defaults:
  harness: opencode
  harness_options:
    permission: {bash: ask, edit: deny}
tasks:
  t:
    prompt_file: p.md
    harness_options:
      permission: {edit: allow}
`)
	r, err := c.ResolveTask("t")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Options.Map("permission"); !reflect.DeepEqual(got, map[string]any{"edit": "allow"}) {
		t.Errorf("permission = %v", got)
	}
}

func TestTemplateRemoteControlIsTemplateOwnOnly(t *testing.T) {
	c := parseTestYAML(t, `
defaults:
  harness_options:
    remote_control: false
    permission_mode: plan
templates:
  unset: {}
  off:
    harness_options: {remote_control: false}
tasks:
  t:
    prompt_file: p.md
`)
	unset, _ := c.ResolveTemplate("unset")
	if v, _ := unset.Options.Bool("remote_control"); !v {
		t.Errorf("template remote_control = %v, want the built-in true (defaults' false ignored)", unset.Options)
	}
	if unset.Options.String("permission_mode") != "plan" {
		t.Errorf("other claude options must still inherit: %v", unset.Options)
	}
	off, _ := c.ResolveTemplate("off")
	if v, set := off.Options.Bool("remote_control"); v || !set || off.OptionsInherited["remote_control"] {
		t.Errorf("own false lost: %v", off.Options)
	}
	task, _ := c.ResolveTask("t")
	if v, set := task.Options.Bool("remote_control"); v || !set || !task.OptionsInherited["remote_control"] {
		t.Errorf("tasks inherit remote_control normally: %v", task.Options)
	}
	// No remote_control on a harness that has no such option.
	c = parseTestYAML(t, "templates:\n  x:\n    harness: codex\n")
	if r, _ := c.ResolveTemplate("x"); len(r.Options) != 0 {
		t.Errorf("codex options = %v", r.Options)
	}
}

func TestCrossHarnessModelCascade(t *testing.T) {
	c := parseTestYAML(t, `
defaults:
  harness: claude
  model: opus
templates:
  same: {}
  codex:
    harness: codex
  own:
    harness: opencode
    model: anthropic/claude-sonnet-4-5
tasks:
  same: {prompt_file: p.md}
  codex: {harness: codex, prompt_file: p.md}
  opencode: {harness: opencode, prompt_file: p.md}
  explicit: {harness: codex, model: gpt-5.3-codex, prompt_file: p.md}
`)
	for task, want := range map[string]string{"same": "opus", "codex": "", "opencode": "", "explicit": "gpt-5.3-codex", "missing": ""} {
		if got := c.TaskModel(task); got != want {
			t.Errorf("TaskModel(%s) = %q, want %q", task, got, want)
		}
	}
	for tmpl, want := range map[string]string{"same": "opus", "codex": "", "own": "anthropic/claude-sonnet-4-5"} {
		if got := c.TemplateModel(tmpl); got != want {
			t.Errorf("TemplateModel(%s) = %q, want %q", tmpl, got, want)
		}
		r, _ := c.ResolveTemplate(tmpl)
		if r.Model != want {
			t.Errorf("Resolved(%s).Model = %q", tmpl, r.Model)
		}
	}
	if r, _ := c.ResolveTemplate("same"); !r.ModelInherited {
		t.Error("ModelInherited not set")
	}
}

// The cascade ends in the built-in default of the defaults' harness when
// nothing sets a model: claude has one (the model leo setup writes), codex
// and opencode have none, and it never crosses harnesses.
func TestModelCascadeEndsInTheBuiltInDefault(t *testing.T) {
	claude, _ := harness.Lookup("claude")
	builtin := harness.DefaultModel(claude)
	if builtin == "" || claude.ValidateModel(builtin) != nil {
		t.Fatalf("claude's built-in default model %q", builtin)
	}
	for _, h := range []string{"codex", "opencode"} {
		a, _ := harness.Lookup(h)
		if m := harness.DefaultModel(a); m != "" {
			t.Errorf("%s has a built-in default model %q, want none", h, m)
		}
	}
	cases := []struct {
		name, yaml string
		want       map[string]string // task → model
	}{
		{"no defaults at all", "tasks:\n  a: {prompt_file: p.md}\n  c: {harness: codex, prompt_file: p.md}\n",
			map[string]string{"a": builtin, "c": ""}},
		{"defaults.harness claude, no model", "defaults: {harness: claude}\ntasks:\n  a: {prompt_file: p.md}\n  o: {harness: opencode, prompt_file: p.md}\n",
			map[string]string{"a": builtin, "o": ""}},
		{"defaults.model wins over the built-in", "defaults: {model: haiku}\ntasks:\n  a: {prompt_file: p.md}\n",
			map[string]string{"a": "haiku"}},
		{"defaults on codex: no built-in default", "defaults: {harness: codex}\ntasks:\n  a: {prompt_file: p.md}\n  k: {harness: claude, prompt_file: p.md}\n",
			map[string]string{"a": "", "k": ""}},
	}
	for _, tc := range cases {
		c := parseTestYAML(t, tc.yaml)
		for task, want := range tc.want {
			if got := c.TaskModel(task); got != want {
				t.Errorf("%s: TaskModel(%s) = %q, want %q", tc.name, task, got, want)
			}
			r, err := c.ResolveTask(task)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if r.Model != want || r.ModelInherited != (want != "") {
				t.Errorf("%s: resolved %s: model %q inherited %v", tc.name, task, r.Model, r.ModelInherited)
			}
		}
	}
	c := parseTestYAML(t, "templates:\n  a: {}\n")
	if r, _ := c.ResolveTemplate("a"); r.Model != builtin || r.LaunchSpec().Model != builtin {
		t.Errorf("template model %q, want the built-in %q", r.Model, builtin)
	}
}

func TestEnvExpansionAndMerge(t *testing.T) {
	h := newTestHome(t)
	h.env["GLM_API_KEY"] = "secret-token"
	h.env["REGION"] = "eu"
	c := h.parse(t, `
defaults:
  env:
    SHARED: base
    OVERRIDE: from-defaults
templates:
  scout:
    env:
      ANTHROPIC_AUTH_TOKEN: ${GLM_API_KEY}
      URL: https://$REGION.example/v1
      PRICE: $$5
      OVERRIDE: mine
      MISSING: ${NOT_SET}
      PORT: 8080
`)
	r, err := c.ResolveTemplate("scout")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"SHARED": "base", "OVERRIDE": "mine", "ANTHROPIC_AUTH_TOKEN": "secret-token",
		"URL": "https://eu.example/v1", "PRICE": "$5", "MISSING": "", "PORT": "8080",
	}
	if !reflect.DeepEqual(r.Env, want) {
		t.Errorf("env = %v", r.Env)
	}
	if !reflect.DeepEqual(r.EnvKeys, []string{"ANTHROPIC_AUTH_TOKEN", "MISSING", "OVERRIDE", "PORT", "PRICE", "SHARED", "URL"}) {
		t.Errorf("keys = %v", r.EnvKeys)
	}
	// Expansion happens at resolution time, from leo's environment then.
	h.env["GLM_API_KEY"] = "rotated"
	r, _ = c.ResolveTemplate("scout")
	if r.Env["ANTHROPIC_AUTH_TOKEN"] != "rotated" {
		t.Errorf("not expanded at resolution time: %q", r.Env["ANTHROPIC_AUTH_TOKEN"])
	}
	// Values never show up in findings.
	c = h.parse(t, "templates:\n  s:\n    env:\n      \"BAD NAME\": secret-token\n")
	for _, f := range c.Findings() {
		if contains([]string{f.Message}, "secret-token") {
			t.Errorf("secret in finding: %s", f.Message)
		}
	}
}

func TestWorkspaceResolution(t *testing.T) {
	h := newTestHome(t)
	c := h.parse(t, `
templates:
  dflt: {}
  rel: {workspace: agents/rel}
  tilde: {workspace: ~/code}
  abs: {workspace: /srv/x/../y}
tasks:
  dflt: {prompt_file: prompts/a.md}
  abs: {prompt_file: /etc/x.md}
`)
	want := map[string]string{
		"dflt":  filepath.Join(h.Leo, "agents"),
		"rel":   filepath.Join(h.Leo, "agents", "rel"),
		"tilde": filepath.Join(h.User, "code"),
		"abs":   "/srv/y",
	}
	for n, w := range want {
		r, _ := c.ResolveTemplate(n)
		if r.Workspace != w {
			t.Errorf("templates.%s workspace = %s, want %s", n, r.Workspace, w)
		}
	}
	r, _ := c.ResolveTask("dflt")
	if r.Workspace != filepath.Join(h.Leo, "workspace") || r.PromptFile != filepath.Join(h.Leo, "workspace", "prompts", "a.md") {
		t.Errorf("task: %s %s", r.Workspace, r.PromptFile)
	}
	r, _ = c.ResolveTask("abs")
	if r.PromptFile != "/etc/x.md" {
		t.Errorf("absolute prompt_file = %s", r.PromptFile)
	}
	// defaults.workspace applies to templates and tasks that set none.
	c = h.parse(t, "defaults:\n  workspace: shared\ntemplates:\n  a: {}\ntasks:\n  b: {prompt_file: p.md}\n")
	ra, _ := c.ResolveTemplate("a")
	rb, _ := c.ResolveTask("b")
	if ra.Workspace != filepath.Join(h.Leo, "shared") || rb.Workspace != ra.Workspace {
		t.Errorf("defaults.workspace: %s %s", ra.Workspace, rb.Workspace)
	}
}

func TestTaskDefaults(t *testing.T) {
	c := parseTestYAML(t, "tasks:\n  t:\n    schedule: \"0 7 * * *\"\n    prompt_file: p.md\n")
	r, err := c.ResolveTask("t")
	if err != nil {
		t.Fatal(err)
	}
	if r.Timeout != 30*time.Minute || r.Retries != 0 || !r.Enabled || !r.CatchUp || r.NotifyOnFail ||
		r.Runtime != RuntimeOneshot || r.QueueMax != 5 || r.Template != "" || r.IdleSuspendAfter != 0 || r.OnLimit != OnLimitWait {
		t.Errorf("defaults: %+v", r)
	}
	c = parseTestYAML(t, `
templates:
  a:
    idle_suspend_after: 45m
    queue_max: 9
    on_limit: continue
tasks:
  t:
    prompt_file: p.md
    timeout: 2h
    retries: 3
    enabled: false
    catch_up: false
    notify_on_fail: true
    runtime: persistent
    template: a
    queue_max: 2
    timezone: Europe/Berlin
`)
	r, _ = c.ResolveTask("t")
	if r.Timeout != 2*time.Hour || r.Retries != 3 || r.Enabled || r.CatchUp || !r.NotifyOnFail ||
		r.Runtime != RuntimePersistent || r.Template != "a" || r.QueueMax != 2 || r.Timezone != "Europe/Berlin" {
		t.Errorf("set: %+v", r)
	}
	ra, _ := c.ResolveTemplate("a")
	if ra.IdleSuspendAfter != 45*time.Minute || ra.QueueMax != 9 || ra.OnLimit != OnLimitContinue {
		t.Errorf("template: %+v", ra)
	}
}

func TestMaxTurnsCascade(t *testing.T) {
	c := parseTestYAML(t, "defaults:\n  max_turns: 50\ntemplates:\n  a: {}\n  b: {max_turns: 7}\n")
	a, _ := c.ResolveTemplate("a")
	b, _ := c.ResolveTemplate("b")
	if a.MaxTurns != 50 || b.MaxTurns != 7 {
		t.Errorf("max_turns %d %d", a.MaxTurns, b.MaxTurns)
	}
}

func TestLaunchSpec(t *testing.T) {
	h := newTestHome(t)
	h.env["TOKEN"] = "t0k"
	c := h.parse(t, `
defaults:
  model: sonnet
  max_turns: 20
templates:
  a:
    channels: [plugin:telegram@claude-plugins-official]
    dev_channels: [plugin:dev@local]
    env: {TOKEN: $TOKEN}
    harness_options: {permission_mode: acceptEdits}
`)
	r, err := c.ResolveTemplate("a")
	if err != nil {
		t.Fatal(err)
	}
	spec := r.LaunchSpec()
	if spec.Name != "a" || spec.Workspace != filepath.Join(h.Leo, "agents") || spec.Model != "sonnet" || spec.MaxTurns != 20 ||
		!reflect.DeepEqual(spec.Channels, []string{"plugin:telegram@claude-plugins-official"}) ||
		!reflect.DeepEqual(spec.DevChannels, []string{"plugin:dev@local"}) ||
		spec.Env["TOKEN"] != "t0k" || spec.Options.String("permission_mode") != "acceptEdits" ||
		spec.SessionID != "" || spec.Prompt != "" || spec.Bridge != nil {
		t.Errorf("spec = %+v", spec)
	}
	// The spec is a copy: changing it does not change the resolution.
	spec.Options["permission_mode"] = "plan"
	spec.Env["TOKEN"] = "x"
	if r.Options.String("permission_mode") != "acceptEdits" || r.Env["TOKEN"] != "t0k" {
		t.Error("LaunchSpec shares maps with Resolved")
	}
	// The adapter accepts it.
	if _, err := r.Harness.Interactive(r.LaunchSpec()); err != nil {
		t.Errorf("Interactive: %v", err)
	}
}

func TestResolveErrors(t *testing.T) {
	c := parseTestYAML(t, "templates:\n  bad:\n    harness: nope\ntasks:\n  t:\n    timeout: never\n    prompt_file: p.md\n")
	_, err := c.ResolveTemplate("missing")
	if !errors.Is(err, ErrUnknownScope) || err.Error() != "templates.missing: not in the config" {
		t.Errorf("unknown template: %v", err)
	}
	if _, err := c.ResolveTask("missing"); !errors.Is(err, ErrUnknownScope) {
		t.Errorf("unknown task: %v", err)
	}
	_, err = c.ResolveTemplate("bad")
	var ve *ValidationError
	if !errors.As(err, &ve) || err.Error() != `templates.bad.harness "nope" is not a registered harness (available: `+availableHarnesses+`)` {
		t.Errorf("bad template: %v", err)
	}
	if _, err := c.ResolveTask("t"); err == nil || err.Error() != `tasks.t.timeout: invalid duration "never" (use a number with a unit: 90s, 30m, 2h)` {
		t.Errorf("bad task: %v", err)
	}
}

func TestHarnessesInUse(t *testing.T) {
	c := parseTestYAML(t, "templates:\n  a: {harness: opencode}\ntasks:\n  b: {harness: codex, prompt_file: p.md}\n")
	if got := c.HarnessesInUse(); !reflect.DeepEqual(got, []string{"claude", "codex", "opencode"}) {
		t.Errorf("in use = %v", got)
	}
	c = parseTestYAML(t, "defaults:\n  harness: codex\n")
	if got := c.HarnessesInUse(); !reflect.DeepEqual(got, []string{"codex"}) {
		t.Errorf("in use = %v", got)
	}
}

// env values are text: what YAML would read as a number is kept as written.
func TestEnvValuesKeepTheirText(t *testing.T) {
	c := parseTestYAML(t, `
x-env: &shared
  VERSION: 1.10
defaults:
  env:
    ZIP: 01234
templates:
  a:
    env:
      <<: *shared
      PORT: 8080
      RATIO: 1e3
      FLAG: true
      OCTAL: 0o17
`)
	r, err := c.ResolveTemplate("a")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ZIP": "01234", "VERSION": "1.10", "PORT": "8080", "RATIO": "1e3", "FLAG": "true", "OCTAL": "0o17"}
	if !reflect.DeepEqual(r.Env, want) {
		t.Errorf("env = %v, want %v", r.Env, want)
	}
}
