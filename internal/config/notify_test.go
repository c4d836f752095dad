package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// secretURL and secretEnv are what no finding may repeat.
const (
	secretURL   = "https://user:hunter2@hooks.example.com/services/T000/B000/XXXXSECRET"
	secretValue = "s3cr3t-token-value"
)

func TestNotifyValidationNamesScopeAndField(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"top not a list", "notify: {command: [x]}\n",
			"notify: expected a list of notifiers (each with command: and/or webhook:, and events:), got a mapping"},
		{"item not a mapping", "notify: [x]\n",
			"notify[0]: expected a mapping (command:, webhook:, events:, env:, timeout:, retries:), got a string"},
		{"unknown key", "notify:\n  - command: [x]\n    events: [idle]\n    comand: [y]\n",
			`notify[0]: unknown key "comand" (valid: command, webhook, events, env, timeout, retries)`},
		{"neither", "notify:\n  - events: [idle]\n",
			"notify[0]: needs a command: (a list: the program and its arguments) or a webhook: (an http or https URL), or both"},
		{"command a string", "notify:\n  - command: notify-send hi\n    events: [idle]\n",
			"notify[0].command: expected a list of strings (the program, then each argument: leo runs no shell), got a string"},
		{"command empty item", "notify:\n  - command: [x, \"\"]\n    events: [idle]\n",
			"notify[0].command: item 2: expected a non-empty string, got an empty string"},
		{"events missing", "notify:\n  - command: [x]\n",
			"notify[0].events: required: the events to send (needs_input, errored, limited, resumed, idle, task_failed, task_succeeded, crash_loop)"},
		{"event unknown", "notify:\n  - command: [x]\n    events: [idle, turn_ended]\n",
			`notify[0].events: unknown event "turn_ended" (valid: needs_input, errored, limited, resumed, idle, task_failed, task_succeeded, crash_loop)`},
		{"template event unknown", "templates:\n  a:\n    notify:\n      - {command: [x], events: [nope]}\n",
			`templates.a.notify[0].events: unknown event "nope" (valid: needs_input, errored, limited, resumed, idle, task_failed, task_succeeded, crash_loop)`},
		{"template second entry", "templates:\n  a:\n    notify:\n      - {command: [x], events: [idle]}\n      - {webhook: \"ftp://h/x\", events: [idle]}\n",
			"templates.a.notify[1].webhook: must be an http:// or https:// URL"},
		{"task webhook no host", "tasks:\n  t:\n    schedule: \"0 7 * * *\"\n    prompt_file: p.md\n    notify:\n      - {webhook: \"https:///x\", events: [task_failed]}\n",
			"tasks.t.notify[0].webhook: has no host"},
		{"webhook bad port", "notify:\n  - {webhook: \"http://h:99999/x\", events: [idle]}\n",
			"notify[0].webhook: has an invalid port"},
		{"webhook not a URL", "notify:\n  - {webhook: \"http://h/%zz\", events: [idle]}\n",
			"notify[0].webhook: is not a valid URL"},
		{"webhook empty var", "notify:\n  - {webhook: \"${UNSET_HOOK}\", events: [idle]}\n",
			"notify[0].webhook: is empty after expanding ${…} from leo's environment (is the variable set where the daemon runs?)"},
		{"timeout", "notify:\n  - {command: [x], events: [idle], timeout: soon}\n",
			`notify[0].timeout: invalid duration "soon" (use a number with a unit: 90s, 30m, 2h)`},
		{"timeout too long", "notify:\n  - {command: [x], events: [idle], timeout: 1h}\n",
			`notify[0].timeout: must be at most 5m0s, got "1h"`},
		{"retries", "notify:\n  - {command: [x], events: [idle], retries: 11}\n",
			"notify[0].retries: must be between 0 and 10, got 11"},
		{"env name", "notify:\n  - command: [x]\n    events: [idle]\n    env: {1BAD: x}\n",
			`notify[0].env: invalid variable name "1BAD" (letters, digits and _, not starting with a digit)`},
		{"env value type", "notify:\n  - command: [x]\n    events: [idle]\n    env: {A: [x]}\n",
			"notify[0].env.A: expected a string, got a list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := homeWithPrompt(t)
			c := h.parse(t, tc.yaml)
			f := wantFinding(t, c, tc.want)
			if !f.IsError() {
				t.Errorf("%q is a %s, want an error", tc.want, f.Severity)
			}
			if c.Validate() == nil {
				t.Error("Validate passed")
			}
		})
	}
}

func TestNotifyFindingsCarryTheirPosition(t *testing.T) {
	c := parseTestYAML(t, "notify:\n  - command: [x]\n    events: [idle]\n  - command: [y]\n    events: [nope]\n")
	f := wantFinding(t, c, `notify[1].events: unknown event "nope" (valid: needs_input, errored, limited, resumed, idle, task_failed, task_succeeded, crash_loop)`)
	if f.Line != 5 {
		t.Errorf("line %d, want 5 (the events: key of the second entry)", f.Line)
	}
	f = wantFinding(t, parseTestYAML(t, "notify:\n  - {command: [x]}\n"), "notify[0].events: required: the events to send (needs_input, errored, limited, resumed, idle, task_failed, task_succeeded, crash_loop)")
	if f.Line != 2 {
		t.Errorf("line %d, want 2 (the entry)", f.Line)
	}
}

// A bad webhook is reported without any part of its URL: its path, query
// or user info may be the secret. Env values are never repeated either.
func TestNotifyFindingsNeverRepeatSecrets(t *testing.T) {
	for _, yaml := range []string{
		"notify:\n  - {webhook: \"ftp" + strings.TrimPrefix(secretURL, "https") + "\", events: [idle]}\n",
		"notify:\n  - {webhook: \"https://user:hunter2@/services/XXXXSECRET\", events: [idle]}\n",
		"notify:\n  - {webhook: \"" + secretURL + "%zz\", events: [idle]}\n",
		"notify:\n  - {webhook: \"hooks.example.com/services/XXXXSECRET\", events: [idle]}\n",
		"notify:\n  - {webhook: \"" + secretURL + "\", events: [idle], env: {TOKEN: " + secretValue + "}}\n",
		"notify:\n  - {command: [x], events: [idle], env: {TOKEN: [" + secretValue + "]}}\n",
	} {
		c := parseTestYAML(t, yaml)
		fs := c.Findings()
		if len(fs) == 0 {
			t.Errorf("no finding for %q", yaml)
		}
		for _, f := range fs {
			for _, secret := range []string{"hunter2", "XXXXSECRET", "services", secretValue} {
				if strings.Contains(f.Message, secret) {
					t.Errorf("finding repeats a secret (%s): %s", secret, f.Message)
				}
			}
		}
	}
}

func TestNotifyEventsThatCannotFireAreWarnings(t *testing.T) {
	h := homeWithPrompt(t)
	c := h.parse(t, `templates:
  a:
    notify:
      - {command: [x], events: [needs_input, task_failed]}
tasks:
  t:
    prompt_file: p.md
    notify:
      - {command: [x], events: [task_succeeded, idle]}
  p:
    prompt_file: p.md
    runtime: persistent
    notify:
      - {command: [x], events: [needs_input]}
  q:
    prompt_file: p.md
    runtime: persistent
    template: a
    notify:
      - {command: [x], events: [crash_loop, task_failed]}
`)
	for _, want := range []string{
		"templates.a.notify[0].events: task_failed never fires here: a template's agents run no tasks (a task's runs notify through the task's own notify: or the top level's)",
		"tasks.t.notify[0].events: idle never fires here: a one-shot task runs headless, without an agent",
		"tasks.q.notify[0].events: crash_loop never fires here: the task's agent is templates.a's, whose notify: list (or the top level's) gets its events",
	} {
		if f := wantFinding(t, c, want); f.IsError() {
			t.Errorf("%q is an error, want a warning", want)
		}
	}
	for _, f := range c.Findings() {
		if strings.HasPrefix(f.Path, "tasks.p.") {
			t.Errorf("a persistent task's own agent does fire needs_input: %s", f.Message)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("warnings failed Validate: %v", err)
	}
}

func TestNotifiersCascade(t *testing.T) {
	h := homeWithPrompt(t)
	h.env["HOOK"] = secretURL
	h.env["TOK"] = secretValue
	c := h.parse(t, `notify:
  - command: [notify-send, leo]
    events: [needs_input, crash_loop]
    env: {TOKEN: "${TOK}"}
    timeout: 30s
    retries: 1
templates:
  own:
    notify:
      - webhook: ${HOOK}
        events: [idle]
  off:
    notify: []
  inherits:
    model: sonnet
  unset:
    notify:
tasks:
  t:
    prompt_file: p.md
    notify:
      - {command: [x], webhook: "http://127.0.0.1:9/h", events: [task_failed]}
`)
	wantClean(t, c)

	top := c.Notifiers(SectionTemplates, "inherits")
	if len(top) != 1 || top[0].Name != "notify[0]" || !slices.Equal(top[0].Command, []string{"notify-send", "leo"}) ||
		top[0].Timeout != 30*time.Second || top[0].Retries != 1 || top[0].Env["TOKEN"] != secretValue ||
		!slices.Equal(top[0].EnvKeys, []string{"TOKEN"}) || !top[0].Listens("crash_loop") || top[0].Listens("idle") {
		t.Errorf("inherited = %+v", top)
	}
	if got := c.Notifiers(SectionTemplates, "unset"); len(got) != 1 || got[0].Name != "notify[0]" {
		t.Errorf("notify: with nothing after it is unset, inherits: %+v", got)
	}
	if got := c.Notifiers(SectionTemplates, "gone"); len(got) != 1 || got[0].Name != "notify[0]" {
		t.Errorf("a template no longer in the config gets the top level's: %+v", got)
	}
	own := c.Notifiers(SectionTemplates, "own")
	if len(own) != 1 || own[0].Name != "templates.own.notify[0]" || own[0].Webhook != secretURL ||
		own[0].Timeout != DefaultNotifyTimeout || own[0].Retries != DefaultNotifyRetries {
		t.Errorf("own = %+v", own)
	}
	if got := c.Notifiers(SectionTemplates, "off"); len(got) != 0 {
		t.Errorf("notify: [] turns notifications off: %+v", got)
	}
	if got := c.Notifiers(SectionTasks, "t"); len(got) != 1 || got[0].Name != "tasks.t.notify[0]" {
		t.Errorf("task = %+v", got)
	}
	var names []string
	for _, n := range c.AllNotifiers() {
		names = append(names, n.Name)
	}
	if want := []string{"notify[0]", "templates.own.notify[0]", "tasks.t.notify[0]"}; !slices.Equal(names, want) {
		t.Errorf("AllNotifiers = %v, want %v", names, want)
	}
	for name, want := range map[string]string{"notify[0]": "notify", "templates.own.notify[0]": "templates.own", "tasks.t.notify[3]": "tasks.t"} {
		if got := NotifyScope(name); got != want {
			t.Errorf("NotifyScope(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNotifyEnvWithoutCommandIsAWarning(t *testing.T) {
	c := parseTestYAML(t, "notify:\n  - {webhook: \"http://127.0.0.1:1/x\", events: [idle], env: {A: b}}\n")
	if f := wantFinding(t, c, "notify[0].env: ignored: env: is for the command, and this notifier has none"); f.IsError() {
		t.Error("want a warning")
	}
}
