package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// taskYAML is a task that is valid apart from what a case adds.
func taskYAML(extra string) string {
	schedule := "    schedule: \"0 7 * * *\"\n"
	if strings.Contains(extra, "schedule:") {
		schedule = ""
	}
	return "tasks:\n  t:\n" + schedule + "    prompt_file: p.md\n" + extra
}

func homeWithPrompt(t *testing.T) *testHome {
	h := newTestHome(t)
	h.file(t, "workspace/p.md", "hi\n")
	return h
}

func TestValidateTaskChecks(t *testing.T) {
	cases := []struct {
		name  string
		extra string // appended under tasks.t (4-space indent) or at top level
		want  string
	}{
		{"cron fields", "    schedule: \"0 7 * *\"\n", `tasks.t.schedule: "0 7 * *" has 4 fields; a schedule has 5 (minute hour day-of-month month day-of-week)`},
		{"cron value", "    schedule: \"61 7 * * *\"\n", `tasks.t.schedule: invalid cron expression "61 7 * * *": …`},
		{"cron never fires", "    schedule: \"0 0 30 2 *\"\n", `tasks.t.schedule: "0 0 30 2 *" never fires: no date matches it`},
		{"cron 31st of short months", "    schedule: \"0 0 31 4,6,9,11 *\"\n", `tasks.t.schedule: "0 0 31 4,6,9,11 *" never fires: no date matches it`},
		{"cron TZ prefix", "    schedule: \"CRON_TZ=UTC 0 7 * * *\"\n", `tasks.t.schedule: "CRON_TZ=UTC 0 7 * * *": put the time zone in the timezone field, not in the schedule`},
		{"cron descriptor", "    schedule: \"@daily\"\n", `tasks.t.schedule: "@daily": use a 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "0 7 * * *"`},
		{"timezone", "    timezone: Mars/Olympus\n", `tasks.t.timezone: unknown time zone "Mars/Olympus" (use an IANA name such as Europe/Berlin or America/New_York)`},
		{"timeout text", "    timeout: soon\n", `tasks.t.timeout: invalid duration "soon" (use a number with a unit: 90s, 30m, 2h)`},
		{"timeout number", "    timeout: 30\n", `tasks.t.timeout: expected a duration such as 30m or 1h30m, got an integer`},
		{"timeout negative", "    timeout: -5m\n", `tasks.t.timeout: must be a positive duration, got "-5m"`},
		{"idle zero", "    idle_suspend_after: 0s\n", `tasks.t.idle_suspend_after: must be a positive duration, got "0s"`},
		{"retries", "    retries: -1\n", `tasks.t.retries: must be 0 or more, got -1`},
		{"queue_max", "    queue_max: 0\n", `tasks.t.queue_max: must be at least 1, got 0`},
		{"on_limit", "    on_limit: retry\n", `tasks.t.on_limit: invalid value "retry" (valid: wait, continue, fail)`},
		{"runtime", "    runtime: forever\n", `tasks.t.runtime: invalid value "forever" (valid: oneshot, persistent)`},
		{"template needs persistent", "    template: a\ntemplates:\n  a: {}\n", `tasks.t.template: only used with runtime: persistent (the task delivers into that template's agent)`},
		{"template missing", "    runtime: persistent\n    template: nope\n", `tasks.t.template: no template named "nope"`},
		{"channels subset", "    runtime: persistent\n    template: a\n    channels: [plugin:slack@x, plugin:tg@x]\ntemplates:\n  a:\n    channels: [plugin:tg@x]\n",
			`tasks.t.channels: "plugin:slack@x" is not in templates.a.channels (a persistent task can only use its target agent's channels)`},
		{"dev_channels subset", "    runtime: persistent\n    template: a\n    dev_channels: [plugin:dev@x]\ntemplates:\n  a: {}\n",
			`tasks.t.dev_channels: "plugin:dev@x" is not in templates.a.dev_channels (a persistent task can only use its target agent's channels)`},
		{"enabled type", "    enabled: \"yes\"\n", `tasks.t.enabled: expected true or false, got a string`},
		{"catch_up type", "    catch_up: 0\n", `tasks.t.catch_up: expected true or false, got an integer`},
		{"max_turns type", "    max_turns: lots\n", `tasks.t.max_turns: expected an integer, got a string`},
		{"max_turns negative", "    max_turns: -3\n", `tasks.t.max_turns: must be 0 (no limit) or more, got -3`},
		{"channels type", "    channels: plugin:tg@x\n", `tasks.t.channels: expected a list of strings, got a string`},
		{"env type", "    env: [A]\n", `tasks.t.env: expected a mapping, got a list`},
		{"env name", "    env:\n      1BAD: x\n", `tasks.t.env: invalid variable name "1BAD" (letters, digits and _, not starting with a digit)`},
		{"harness_options type", "    harness_options: [a]\n", `tasks.t.harness_options: expected a mapping, got a list`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := homeWithPrompt(t)
			c := h.parse(t, taskYAML(tc.extra))
			errs := errorMessages(c)
			found := false
			for _, m := range errs {
				// A want ending in "…" is a prefix: the rest is the cron
				// library's own wording.
				if m == tc.want || strings.HasSuffix(tc.want, "…") && strings.HasPrefix(m, strings.TrimSuffix(tc.want, "…")) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %q\ngot %q", tc.want, errs)
			}
		})
	}
}

func TestValidScheduleForms(t *testing.T) {
	for _, s := range []string{"0 7 * * *", "*/15 * * * *", "0 9 * * MON-FRI", "0 0 29 2 *", "0 0 15 * FRI", "30 6 1,15 * *"} {
		h := homeWithPrompt(t)
		c := h.parse(t, "tasks:\n  t:\n    schedule: \""+s+"\"\n    timezone: Europe/Berlin\n    prompt_file: p.md\n")
		wantClean(t, c)
	}
	// DowOrDom: the 15th OR any Friday, as in Vixie cron.
	sched, err := ParseSchedule("0 0 15 * FRI", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	from := mustTime(t, "2026-05-01T00:00:00Z") // a Friday
	next := sched.Next(from)
	if got := next.Format("2006-01-02"); got != "2026-05-08" {
		t.Errorf("next after %v = %v, want the Friday 2026-05-08", from, next)
	}
}

func TestScheduleUsesTimezone(t *testing.T) {
	sched, err := ParseSchedule("0 7 * * *", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	next := sched.Next(mustTime(t, "2026-01-10T00:00:00Z"))
	if got := next.UTC().Format("15:04"); got != "12:00" { // 07:00 EST
		t.Errorf("next = %v (UTC %s), want 12:00 UTC", next, got)
	}
}

func TestPromptFileMustBeInsideWorkspace(t *testing.T) {
	h := homeWithPrompt(t)
	h.file(t, "secret.md", "outside\n")
	outside := filepath.Join(h.Leo, "secret.md")
	if err := os.Symlink(outside, filepath.Join(h.Leo, "workspace", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.Leo, "workspace", "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(h.Leo, "workspace")
	cases := map[string]string{
		"../secret.md": `tasks.t.prompt_file: "../secret.md" is outside the task workspace (` + ws + `)`,
		outside:        `tasks.t.prompt_file: "` + outside + `" is outside the task workspace (` + ws + `)`,
		"link.md":      `tasks.t.prompt_file: "link.md" resolves outside the task workspace (` + ws + `) through a symlink`,
		"nope.md":      `tasks.t.prompt_file: "nope.md" not found in the task workspace (` + ws + `)`,
		"dir":          `tasks.t.prompt_file: "dir" is not a regular file`,
	}
	for pf, want := range cases {
		c := h.parse(t, "tasks:\n  t:\n    prompt_file: "+pf+"\n")
		wantFinding(t, c, want)
	}
	c := h.parse(t, "tasks:\n  t:\n    schedule: \"0 7 * * *\"\n")
	wantFinding(t, c, `tasks.t.prompt_file: required: the file holding the task's prompt, relative to the task workspace (`+ws+`)`)

	// An absolute path inside the workspace, and a task workspace of its own.
	h.file(t, "elsewhere/q.md", "q\n")
	c = h.parse(t, "tasks:\n  t:\n    prompt_file: "+filepath.Join(ws, "p.md")+"\n  u:\n    workspace: elsewhere\n    prompt_file: q.md\n")
	wantClean(t, c)
}

// A prompt that is not UTF-8 is refused at validation (issue 15): it
// would reach a TUI or a harness's argv changed, or not at all.
func TestPromptFileMustBeUTF8(t *testing.T) {
	h := homeWithPrompt(t)
	h.file(t, "workspace/bad.md", "line one\nhalf \xe2\x82 a euro\n")
	c := h.parse(t, "tasks:\n  t:\n    prompt_file: bad.md\n")
	wantFinding(t, c, `tasks.t.prompt_file: "bad.md" is not valid UTF-8 (byte 0xe2 at byte 14); leo refuses a prompt it would have to change`)
	h.file(t, "workspace/good.md", "café 👍🏽\n")
	wantClean(t, h.parse(t, "tasks:\n  t:\n    prompt_file: good.md\n"))
}

func TestValidateNames(t *testing.T) {
	c := parseTestYAML(t, "templates:\n  Foo: {}\n  -bar: {}\n  ok-1: {}\ntasks:\n  a_b:\n    prompt_file: x\n")
	wantFinding(t, c, `templates.Foo: invalid template name "Foo" (use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit)`)
	wantFinding(t, c, `templates.-bar: invalid template name "-bar" (use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit)`)
	wantFinding(t, c, `tasks.a_b: invalid task name "a_b" (use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit)`)
	for _, m := range errorMessages(c) {
		if strings.HasPrefix(m, "templates.ok-1") {
			t.Errorf("valid name rejected: %s", m)
		}
	}
	long := strings.Repeat("a", 64)
	c = parseTestYAML(t, "templates:\n  "+long+": {}\n  "+long[:63]+": {}\n")
	if got := errorMessages(c); len(got) != 1 || !strings.HasPrefix(got[0], "templates."+long+":") {
		t.Errorf("64-char name: %q", got)
	}
}

func TestValidateWeb(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"web:\n  port: 0\n", "web.port: must be between 1 and 65535, got 0"},
		{"web:\n  port: 70000\n", "web.port: must be between 1 and 65535, got 70000"},
		{"web:\n  port: \"80\"\n", "web.port: expected an integer, got a string"},
		{"web:\n  bind: 0.0.0.0\n", "web.allowed_hosts: required when web.bind (0.0.0.0) is not a loopback address: list the host names browsers use to reach leo"},
		{"web:\n  bind: 192.168.1.5\n  enabled: true\n", "web.allowed_hosts: required when web.bind (192.168.1.5) is not a loopback address: list the host names browsers use to reach leo"},
		{"web:\n  bind: 127.0.0.1:8370\n", `web.bind: "127.0.0.1:8370" includes a port; put the address in web.bind and the port in web.port`},
		{"web:\n  bind: http://x\n", `web.bind: "http://x" is not an IP address or host name`},
		{"web:\n  bind: 0.0.0.0\n  allowed_hosts: [\"https://leo.example.com/\"]\n", `web.allowed_hosts: "https://leo.example.com/" is not a host name (write host or host:port, without a scheme or path)`},
		{"web:\n  allowed_hosts: [\"leo.example.com:99999\"]\n", `web.allowed_hosts: "leo.example.com:99999" has an invalid port`},
		{"web:\n  enabled: 1\n", "web.enabled: expected true or false, got an integer"},
	}
	for _, tc := range cases {
		c := parseTestYAML(t, tc.yaml)
		wantFinding(t, c, tc.want)
	}
	for _, ok := range []string{
		"web:\n  enabled: true\n",
		"web:\n  enabled: true\n  bind: localhost\n  port: 9000\n",
		"web:\n  bind: \"::1\"\n",
		"web:\n  enabled: true\n  bind: 0.0.0.0\n  allowed_hosts: [leo.example.com, \"box.lan:8370\"]\n",
	} {
		wantClean(t, parseTestYAML(t, ok))
	}
	c := parseTestYAML(t, "web:\n  enabled: true\n  bind: 0.0.0.0\n  port: 9000\n  allowed_hosts: [x.example]\n")
	if !c.WebEnabled() || c.WebAddr() != "0.0.0.0:9000" || c.WebLocalURL() != "http://127.0.0.1:9000" {
		t.Errorf("web: %v %s %s", c.WebEnabled(), c.WebAddr(), c.WebLocalURL())
	}
	c = parseTestYAML(t, "")
	if c.WebEnabled() || c.WebAddr() != "127.0.0.1:8370" {
		t.Errorf("default web: %v %s", c.WebEnabled(), c.WebAddr())
	}
}

func TestValidateScheduler(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"scheduler:\n  max_concurrent_runs: 0\n", "scheduler.max_concurrent_runs: must be at least 1, got 0"},
		{"scheduler:\n  history_keep: -5\n", "scheduler.history_keep: must be at least 1, got -5"},
		{"scheduler:\n  logs_keep: 0\n", "scheduler.logs_keep: must be at least 1, got 0"},
		{"scheduler:\n  logs_keep: many\n", "scheduler.logs_keep: expected an integer, got a string"},
		{"scheduler:\n  history_keep: 2.5\n", "scheduler.history_keep: expected an integer, got a number"},
		{"scheduler: [4]\n", "scheduler: expected a mapping, got a list"},
	}
	for _, tc := range cases {
		c := parseTestYAML(t, tc.yaml)
		f := wantFinding(t, c, tc.want)
		line := 2 // the field's key
		if f.Path == "scheduler" {
			line = 1
		}
		if f.Line != line {
			t.Errorf("%q: finding at line %d, want %d", tc.want, f.Line, line)
		}
	}

	c := parseTestYAML(t, "")
	if c.MaxConcurrentRuns() != 4 || c.HistoryKeep() != 500 || c.LogsKeep() != 50 {
		t.Errorf("defaults: %d %d %d, want 4 500 50", c.MaxConcurrentRuns(), c.HistoryKeep(), c.LogsKeep())
	}
	c = parseTestYAML(t, "scheduler:\n  max_concurrent_runs: 1\n  history_keep: 10\n  logs_keep: 3\n")
	wantClean(t, c)
	if c.MaxConcurrentRuns() != 1 || c.HistoryKeep() != 10 || c.LogsKeep() != 3 {
		t.Errorf("set: %d %d %d, want 1 10 3", c.MaxConcurrentRuns(), c.HistoryKeep(), c.LogsKeep())
	}
	// An empty section is every default.
	c = parseTestYAML(t, "scheduler:\n")
	wantClean(t, c)
	if c.MaxConcurrentRuns() != 4 {
		t.Errorf("empty section: max_concurrent_runs %d", c.MaxConcurrentRuns())
	}
}

func TestMaxTurnsIgnoredIsAWarning(t *testing.T) {
	c := parseTestYAML(t, "templates:\n  a:\n    harness: codex\n    max_turns: 10\n  b:\n    harness: opencode\n    max_turns: 10\n  c:\n    max_turns: 10\n")
	a := wantFinding(t, c, "templates.a.max_turns: the codex harness has no turn limit; max_turns is ignored")
	wantFinding(t, c, "templates.b.max_turns: the opencode harness has no turn limit; max_turns is ignored")
	if a.Severity != SeverityWarning {
		t.Errorf("severity %q", a.Severity)
	}
	if len(c.Findings()) != 2 {
		t.Errorf("findings: %q", messages(c.Findings()))
	}
	if err := c.Validate(); err != nil {
		t.Errorf("warnings must not fail Validate: %v", err)
	}
}

func TestDefaultsMaxTurnsAndWorkspace(t *testing.T) {
	c := parseTestYAML(t, "defaults:\n  harness: codex\n  max_turns: -2\n")
	wantFinding(t, c, "defaults.max_turns: must be 0 (no limit) or more, got -2")
	if w := wantFinding(t, c, "defaults.max_turns: the codex harness has no turn limit; max_turns is ignored"); w.Severity != SeverityWarning {
		t.Errorf("severity %q", w.Severity)
	}
	wantClean(t, parseTestYAML(t, "defaults:\n  max_turns: 5\n"))

	// A defaults.workspace that cannot be resolved is reported once, on
	// defaults.workspace, however many scopes inherit it.
	t.Setenv("HOME", "")
	h := newTestHome(t)
	h.env["HOME"] = ""
	c = h.parse(t, "defaults:\n  workspace: ~/agents\ntemplates:\n  a: {}\n  b: {}\n")
	want := []string{"defaults.workspace: cannot find the home directory: set HOME or LEO_HOME"}
	if got := errorMessages(c); !slices.Equal(got, want) {
		t.Errorf("errors %q, want %q", got, want)
	}
}

func TestParseErrorsCarryPosition(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"templates:\n  a: [1\n", "leo.yaml:2:"},
		{"a: 1\na: 2\n", `leo.yaml:2:1: mapping key "a" already defined at [1:1]`},
		{"- a\n- b\n", "leo.yaml:1:1: the top level must be a mapping (defaults:, templates:, tasks:, scheduler:, web:)"},
		{"a: 1\n---\nb: 2\n", "leo.yaml:2:1: more than one YAML document; leo.yaml holds exactly one"},
		{"a: *nope\n", `leo.yaml:1:5: could not find alias "nope"`},
	}
	for _, tc := range cases {
		h := newTestHome(t)
		_, err := Parse([]byte(tc.yaml), h.Path)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: err = %v", tc.yaml, err)
			continue
		}
		if got := strings.TrimPrefix(err.Error(), filepath.Dir(h.Path)+"/"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: error %q, want prefix %q", tc.yaml, got, tc.want)
		}
	}
}

func TestFindingsCarryPosition(t *testing.T) {
	c := parseTestYAML(t, "defaults:\n  model: sonnet\ntemplates:\n  foo:\n    harness: codex\n    channels: [x]\n")
	f := wantFinding(t, c, "templates.foo.channels: the codex harness does not support channel plugins; use leo's MCP tools for messaging")
	if f.Line != 6 || f.Column != 5 || f.Path != "templates.foo.channels" {
		t.Errorf("finding = %+v", f)
	}
}

// Anchors, aliases and merge keys work: they are plain YAML.
func TestYAMLAnchorsAndMergeKeys(t *testing.T) {
	c := parseTestYAML(t, `
x-common: &common
  harness: codex
  model: gpt-5.3-codex
templates:
  a:
    <<: *common
    harness_options: {sandbox: read-only}
  b: *common
`)
	wantClean(t, c)
	for _, n := range []string{"a", "b"} {
		r, err := c.ResolveTemplate(n)
		if err != nil || r.HarnessName != "codex" || r.Model != "gpt-5.3-codex" {
			t.Errorf("%s: %+v %v", n, r, err)
		}
	}
}

func TestEmptyConfigIsValid(t *testing.T) {
	for _, y := range []string{"", "# nothing\n", "templates:\ntasks:\n", "templates: {}\n"} {
		wantClean(t, parseTestYAML(t, y))
	}
}

func TestTopLevelNotAMappingPosition(t *testing.T) {
	h := newTestHome(t)
	_, err := Parse([]byte("# leo\n- a\n"), h.Path)
	if err == nil || err.Error() != h.Path+":2:1: the top level must be a mapping (defaults:, templates:, tasks:, scheduler:, web:)" {
		t.Errorf("err = %v", err)
	}
}

func TestPersistentTaskWithTemplateWarnsAboutUnusedFields(t *testing.T) {
	h := homeWithPrompt(t)
	c := h.parse(t, `
templates:
  a: {}
tasks:
  t:
    runtime: persistent
    template: a
    prompt_file: p.md
    model: opus
    env: {X: "1"}
`)
	for _, field := range []string{"env", "model"} {
		f := wantFinding(t, c, "tasks.t."+field+": ignored: the task delivers into the agent of templates.a, which runs with that template's settings")
		if f.Severity != SeverityWarning {
			t.Errorf("%s: severity %s", field, f.Severity)
		}
	}
	if len(c.Findings()) != 2 || c.Validate() != nil {
		t.Errorf("findings: %q", messages(c.Findings()))
	}
}

// A large config is checked on several goroutines; the findings are the
// same, complete and in the same order every time.
func TestFindingsOnLargeConfigAreDeterministic(t *testing.T) {
	h := newTestHome(t)
	var y strings.Builder
	y.WriteString("templates:\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&y, "  t%d:\n    harness: codex\n    channels: [x]\n", i)
	}
	y.WriteString("tasks:\n")
	for i := 0; i < 60; i++ {
		if i%2 == 0 {
			h.file(t, fmt.Sprintf("workspace/p%d.md", i), "go\n")
		}
		fmt.Fprintf(&y, "  k%d:\n    prompt_file: p%d.md\n", i, i)
	}
	c := h.parse(t, y.String())
	first := c.Findings()
	if len(first) != 60+30 {
		t.Fatalf("%d findings", len(first))
	}
	for range 5 {
		if again := c.Findings(); !reflect.DeepEqual(again, first) {
			t.Fatal("findings differ between runs")
		}
	}
}
