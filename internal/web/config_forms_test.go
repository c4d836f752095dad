package web

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
)

const formsSecret = "sk-very-secret-env-value"

// formsYAML is a leo.yaml with comments, an env secret, templates on the
// defaults' harness and off it, and tasks. WS is replaced by a workspace.
const formsYAML = `# leo config — this comment stays
defaults:
  harness: claude   # the usual one
  model: sonnet
  harness_options:
    permission_mode: default   # careful
    agent: helper
    allowed_tools: [Read, Grep]
  env:
    API_KEY: ` + formsSecret + `

templates:
  # the assistant
  assistant:
    workspace: WS
    harness_options:
      permission_mode: acceptEdits   # edits ok
  review:
    harness: codex
    workspace: WS
    harness_options:
      sandbox: read-only

tasks:
  morning:
    schedule: "0 7 * * 1-5"   # weekdays
    prompt_file: p.md
    workspace: WS
  codex-nightly:
    harness: codex
    schedule: "0 3 * * *"
    prompt_file: p.md
    workspace: WS
`

// formsSite is a test site over formsYAML whose socket API answers
// POST /config/reload (counted) when the file is valid.
type formsSite struct {
	*testSite
	reloads atomic.Int32
}

func newFormsSite(t *testing.T) *formsSite {
	t.Helper()
	userHome, ws := t.TempDir(), t.TempDir()
	t.Setenv("HOME", userHome)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	writeTestFile(t, filepath.Join(ws, "p.md"), "prompt\n")
	// The agents leo finds: one of the user's, one of the project's.
	writeTestFile(t, filepath.Join(userHome, ".claude/agents/reviewer.md"), "---\nname: code-reviewer\n---\n")
	writeTestFile(t, filepath.Join(ws, ".claude/agents/leo.md"), "---\nname: leo\n---\n")

	fs := &formsSite{}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/config/reload" {
			http.Error(w, `{"code":"not_found","error":"no route"}`, http.StatusNotFound)
			return
		}
		fs.reloads.Add(1)
		// The forms read leo.yaml itself; the reload only has to find it valid.
		if _, err := config.LoadValid(fs.home.ConfigPath); err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "config_error", "error": err.Error()})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true})
	})
	fs.testSite = newTestSite(t, strings.ReplaceAll(formsYAML, "WS", ws), api)
	fs.login()
	return fs
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *formsSite) file() string {
	s.t.Helper()
	data, err := os.ReadFile(s.home.ConfigPath)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(data)
}

func (s *formsSite) get(path string) string {
	s.t.Helper()
	status, _, body := s.do("GET", path, nil, nil)
	if status != http.StatusOK {
		s.t.Fatalf("GET %s = %d\n%s", path, status, body)
	}
	s.noSecrets(path, body)
	return body
}

func (s *formsSite) noSecrets(what, body string) {
	s.t.Helper()
	if strings.Contains(body, formsSecret) || strings.Contains(body, s.token) {
		s.t.Fatalf("%s carries an env value or the token", what)
	}
}

// element returns the HTML of the element with this id (its tag through
// its closing tag, or just the tag for an input).
func element(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, ` id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no element #%s in\n%s", id, body)
	}
	start := strings.LastIndex(body[:i], "<")
	tag := strings.Fields(body[start+1 : i+1])[0]
	if tag == "input" {
		return body[start : start+strings.Index(body[start:], ">")+1]
	}
	end := strings.Index(body[start:], "</"+tag+">")
	return body[start : start+end+len(tag)+3]
}

func hasElement(body, id string) bool { return strings.Contains(body, ` id="`+id+`"`) }

var optionRE = regexp.MustCompile(`<option value="([^"]*)"( selected)?>([^<]*)</option>`)

type option struct {
	value, label string
	selected     bool
}

func options(el string) []option {
	var out []option
	for _, m := range optionRE.FindAllStringSubmatch(el, -1) {
		out = append(out, option{html.UnescapeString(m[1]), html.UnescapeString(m[3]), m[2] != ""})
	}
	return out
}

func values(opts []option) []string {
	var out []string
	for _, o := range opts {
		out = append(out, o.value)
	}
	return out
}

func attr(el, name string) string {
	m := regexp.MustCompile(`\b` + name + `="([^"]*)"`).FindStringSubmatch(el)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// The Harness dropdown: "inherit" first (value ""), then the registered
// names, on every form; htmx fetches the options sub-form on change.
func TestConfigFormsHarnessDropdown(t *testing.T) {
	s := newFormsSite(t)
	for _, path := range []string{"/web/config", "/web/config/templates/assistant", "/web/config/tasks/morning", "/web/config/templates/new"} {
		body := s.get(path)
		sel := element(t, body, "harness")
		opts := options(sel)
		if len(opts) == 0 || opts[0].value != "" || opts[0].label != "inherit" {
			t.Fatalf("%s: first option %+v", path, opts)
		}
		if want := append([]string{""}, harness.Names()...); !reflect.DeepEqual(values(opts), want) {
			t.Errorf("%s: options %q, want %q", path, values(opts), want)
		}
		if attr(sel, "hx-get") != "/web/partials/harness-options" || attr(sel, "hx-target") != "#harness-options" {
			t.Errorf("%s: dropdown not wired to the partial: %s", path, sel)
		}
		for _, id := range []string{"config-form", "harness-options", "model", "model-options", "save", "scope"} {
			if !hasElement(body, id) {
				t.Errorf("%s: no #%s", path, id)
			}
		}
	}
	// A scope with its own harness has it selected; one without has inherit.
	if opts := options(element(t, s.get("/web/config/templates/review"), "harness")); !opts[slicesIndex(values(opts), "codex")].selected {
		t.Errorf("review: codex not selected: %+v", opts)
	}
	if opts := options(element(t, s.get("/web/config/templates/assistant"), "harness")); !opts[0].selected {
		t.Errorf("assistant: inherit not selected: %+v", opts)
	}
}

func slicesIndex(list []string, v string) int {
	for i, e := range list {
		if e == v {
			return i
		}
	}
	return 0
}

// A control per OptionType (claude's seven options), the model input with
// claude's valid models, the agent option with the agents leo finds.
func TestConfigFormsControlPerOptionType(t *testing.T) {
	s := newFormsSite(t)
	body := s.get("/web/config/templates/assistant")
	pm := element(t, body, "opt-permission_mode")
	if !strings.HasPrefix(pm, "<select") || attr(pm, "name") != "opt.permission_mode" {
		t.Fatalf("permission_mode: %s", pm)
	}
	if got := options(pm); got[slicesIndex(values(got), "acceptEdits")].selected != true || len(got) != 7 {
		t.Errorf("permission_mode options %+v", got)
	}
	for _, key := range []string{"bypass_permissions", "remote_control"} {
		el := element(t, body, "opt-"+key)
		if got := values(options(el)); !strings.HasPrefix(el, "<select") || !reflect.DeepEqual(got, []string{"", "on", "off"}) {
			t.Errorf("%s: tri-state select wanted: %s", key, el)
		}
	}
	agent := element(t, body, "opt-agent")
	if !strings.HasPrefix(agent, "<input") || attr(agent, "list") != "opt-agent-options" {
		t.Errorf("agent: %s", agent)
	}
	if got := values(options(element(t, body, "opt-agent-options"))); !reflect.DeepEqual(got, []string{"code-reviewer", "leo"}) {
		t.Errorf("agents offered: %q", got)
	}
	for _, key := range []string{"allowed_tools", "disallowed_tools"} {
		if el := element(t, body, "opt-"+key); !strings.HasPrefix(el, "<input") || attr(el, "data-kind") != "list" {
			t.Errorf("%s: %s", key, el)
		}
	}
	if el := element(t, body, "opt-append_system_prompt"); !strings.HasPrefix(el, "<textarea") {
		t.Errorf("append_system_prompt: %s", el)
	}
	model := element(t, body, "model")
	if attr(model, "list") != "model-options" {
		t.Errorf("model: %s", model)
	}
	if got := values(options(element(t, body, "model-options"))); !reflect.DeepEqual(got, claude.ValidModels()) {
		t.Errorf("model suggestions %q, want %q", got, claude.ValidModels())
	}
}

// The partial: the options of the newly chosen harness, and the model
// input out of band with that harness's suggestions or format hint.
func TestConfigFormsHarnessOptionsPartial(t *testing.T) {
	s := newFormsSite(t)
	body := s.get("/web/partials/harness-options?scope=templates.assistant&harness=codex&model=gpt-5")
	if strings.Contains(body, "<html") || strings.Contains(body, "opt-permission_mode") {
		t.Fatalf("not codex's options alone:\n%s", body)
	}
	if got := values(options(element(t, body, "opt-sandbox"))); !reflect.DeepEqual(got, []string{"", "read-only", "workspace-write", "danger-full-access"}) {
		t.Errorf("sandbox: %q", got)
	}
	field := element(t, body, "model-field")
	if attr(field, "hx-swap-oob") != "true" {
		t.Errorf("model field not out of band: %s", field)
	}
	model := element(t, body, "model")
	if attr(model, "placeholder") != "e.g. gpt-5.3-codex" || attr(model, "value") != "gpt-5" {
		t.Errorf("codex model input: %s", model)
	}
	if got := options(element(t, body, "model-options")); len(got) != 0 {
		t.Errorf("codex has model suggestions: %+v", got)
	}

	body = s.get("/web/partials/harness-options?scope=templates.assistant&harness=opencode")
	perm := element(t, body, "opt-permission")
	if !strings.HasPrefix(perm, "<textarea") || attr(perm, "rows") != "4" || attr(perm, "class") != "mono" || attr(perm, "name") != "opt.permission" {
		t.Errorf("opencode permission: %s", perm)
	}
	if m := element(t, body, "model"); attr(m, "placeholder") != "provider/model, e.g. anthropic/claude-sonnet-5" {
		t.Errorf("opencode model: %s", m)
	}

	body = s.get("/web/partials/harness-options?scope=templates.review&harness=claude")
	if got := values(options(element(t, body, "model-options"))); !reflect.DeepEqual(got, claude.ValidModels()) {
		t.Errorf("claude suggestions %q", got)
	}
	// The stored options of a scope come back with its own harness.
	body = s.get("/web/partials/harness-options?scope=templates.review&harness=codex")
	if o := options(element(t, body, "opt-sandbox")); !o[1].selected {
		t.Errorf("review's own sandbox not shown: %+v", o)
	}

	for _, q := range []string{"scope=nope", "scope=templates.assistant&harness=nope"} {
		if status, _, _ := s.do("GET", "/web/partials/harness-options?"+q, nil, nil); status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, status)
		}
	}
}

// Inherited defaults show as placeholders only when the scope resolves to
// the defaults harness, recomputed for the harness chosen in the
// dropdown, and never on the defaults form.
func TestConfigFormsInheritedPlaceholders(t *testing.T) {
	s := newFormsSite(t)
	check := func(what, body string, want bool) {
		t.Helper()
		pm := options(element(t, body, "opt-permission_mode"))
		agent := element(t, body, "opt-agent")
		tools := element(t, body, "opt-allowed_tools")
		bp := options(element(t, body, "opt-bypass_permissions"))
		if want {
			if pm[0].label != "inherit (default)" || attr(agent, "placeholder") != "inherit: helper" ||
				attr(tools, "placeholder") != "inherit: Read, Grep" || bp[0].label != "inherit" {
				t.Errorf("%s: want placeholders: %q %s %s %q", what, pm[0].label, agent, tools, bp[0].label)
			}
			return
		}
		if pm[0].label != "inherit" || attr(agent, "placeholder") != "" || attr(tools, "placeholder") != "" {
			t.Errorf("%s: want no inherited values: %q %s %s", what, pm[0].label, agent, tools)
		}
	}
	// assistant inherits claude from defaults.
	check("assistant page", s.get("/web/config/templates/assistant"), true)
	check("task morning", s.get("/web/config/tasks/morning"), true)
	check("new template", s.get("/web/config/templates/new"), true)
	// review runs codex: switching it onto claude (the defaults harness)
	// lights the placeholders up; choosing inherit too.
	check("review → claude", s.get("/web/partials/harness-options?scope=templates.review&harness=claude"), true)
	check("review → inherit", s.get("/web/partials/harness-options?scope=templates.review&harness="), true)
	// The defaults form never shows inherited values.
	body := s.get("/web/config")
	form := element(t, body, "config-form")
	if strings.Contains(form, "inherit (") || strings.Contains(form, "inherit:") {
		t.Errorf("the defaults form shows inherited values:\n%s", form)
	}
	if o := options(element(t, form, "opt-permission_mode")); !o[slicesIndex(values(o), "default")].selected {
		t.Errorf("defaults' own permission_mode not shown: %+v", o)
	}
	check("defaults partial", s.get("/web/partials/harness-options?scope=defaults&harness=claude"), false)

	// Switching a scope away from the defaults harness drops them.
	body = s.get("/web/partials/harness-options?scope=templates.assistant&harness=codex")
	if strings.Contains(body, "inherit (") || strings.Contains(body, "inherit:") {
		t.Errorf("codex options show claude's inherited values:\n%s", body)
	}
	// The model placeholder follows the same rule.
	if m := element(t, s.get("/web/config/templates/assistant"), "model"); attr(m, "placeholder") != "inherit: sonnet" {
		t.Errorf("assistant model: %s", m)
	}
}

// The lists: a harness badge per row, dimmed when inherited.
func TestConfigFormsListsShowHarnessBadges(t *testing.T) {
	s := newFormsSite(t)
	body := s.get("/web/config")
	badge := regexp.MustCompile(`<a href="([^"]+)">([^<]+)</a></td>\s*<td><span class="badge( inherited)?"[^>]*>([^<]+)</span>`)
	got := map[string]string{}
	for _, m := range badge.FindAllStringSubmatch(body, -1) {
		got[m[2]] = m[4] + m[3]
	}
	want := map[string]string{"assistant": "claude inherited", "review": "codex", "morning": "claude inherited", "codex-nightly": "codex"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("badges %v, want %v", got, want)
	}
	if !hasElement(body, "templates") || !hasElement(body, "tasks") {
		t.Fatal("no lists")
	}
}

func formFor(fields map[string]string) url.Values {
	v := url.Values{}
	for k, val := range fields {
		v.Set(k, val)
	}
	return v
}

// A valid save: written with the file's comments, order and env kept, the
// daemon reloaded, a flash on the page the browser is sent to.
func TestConfigFormsSaveValid(t *testing.T) {
	s := newFormsSite(t)
	before := s.file()
	status, h, body := s.postForm("/web/config/templates/assistant", formFor(map[string]string{
		"scope": "templates.assistant", "harness": "", "model": "opus", "workspace": filepath.Dir(s.home.ConfigPath),
		"max_turns": "", "idle_suspend_after": "",
		"opt.permission_mode": "plan", "opt.bypass_permissions": "", "opt.remote_control": "off",
		"opt.agent": "leo", "opt.allowed_tools": "Read, Edit", "opt.disallowed_tools": "",
		"opt.append_system_prompt": "two\r\nlines: # kept",
	}))
	if status != http.StatusSeeOther || h.Get("Location") != "/web/config/templates/assistant" {
		t.Fatalf("save = %d %s\n%s", status, h.Get("Location"), body)
	}
	after := s.file()
	for _, keep := range []string{"# leo config — this comment stays\n", "  harness: claude   # the usual one\n",
		"    API_KEY: " + formsSecret + "\n", "  # the assistant\n", "      permission_mode: plan   # edits ok\n",
		"  review:\n    harness: codex\n", "    schedule: \"0 7 * * 1-5\"   # weekdays\n"} {
		if !strings.Contains(after, keep) {
			t.Errorf("lost %q:\n%s", keep, after)
		}
	}
	if after == before || s.reloads.Load() != 1 {
		t.Fatalf("reloads %d", s.reloads.Load())
	}
	c, err := config.LoadValid(s.home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.ResolveTemplate("assistant")
	if r.Model != "opus" || r.Options.String("permission_mode") != "plan" || r.Options.String("agent") != "leo" ||
		!reflect.DeepEqual(r.Options.Strings("allowed_tools"), []string{"Read", "Edit"}) ||
		r.Options.String("append_system_prompt") != "two\nlines: # kept" {
		t.Errorf("resolved %+v", r.Options)
	}
	if rc, set := r.Options.Bool("remote_control"); !set || rc {
		t.Errorf("remote_control %v %v", rc, set)
	}
	page := s.get("/web/config/templates/assistant")
	if !strings.Contains(page, `class="flash flash-ok"`) || !strings.Contains(page, "Saved templates.assistant") {
		t.Errorf("no flash after the save")
	}
	// Saving the same form again changes nothing.
	status, _, _ = s.postForm("/web/config/templates/assistant", formFor(map[string]string{"harness": "", "model": "opus",
		"opt.permission_mode": "plan", "opt.remote_control": "off", "opt.agent": "leo", "opt.allowed_tools": "Read,Edit",
		"opt.append_system_prompt": "two\nlines: # kept"}))
	if status != http.StatusSeeOther || s.file() != after {
		t.Errorf("a resave changed the file: %d", status)
	}
}

// Invalid saves: the adapter's (or Validate's) field-named error as a
// flash, the form shown again as posted, leo.yaml byte for byte the same,
// no reload.
func TestConfigFormsSaveInvalidLeavesTheFile(t *testing.T) {
	cases := []struct {
		name string
		path string
		form map[string]string
		want string
	}{
		{"bad option value", "/web/config/templates/assistant", map[string]string{"harness": "", "opt.permission_mode": "yolo"},
			`templates.assistant.harness_options: option "permission_mode": invalid value "yolo" (valid: acceptEdits, auto, bypassPermissions, default, dontAsk, plan)`},
		{"claude model", "/web/config/templates/assistant", map[string]string{"harness": "", "model": "gpt-5"},
			`templates.assistant.model: invalid model "gpt-5"`},
		{"opencode model", "/web/config/templates/review", map[string]string{"harness": "opencode", "model": "gpt-5"},
			`invalid model "gpt-5": opencode models are provider/model`},
		{"yaml", "/web/config/templates/review", map[string]string{"harness": "opencode", "opt.permission": "edit: [oops"},
			`templates.review.harness_options.permission: not a YAML mapping`},
		{"bool", "/web/config/templates/assistant", map[string]string{"harness": "", "opt.remote_control": "maybe"},
			`templates.assistant.harness_options.remote_control: expected inherit, on or off, got "maybe"`},
		{"cron", "/web/config/tasks/morning", map[string]string{"schedule": "every morning"}, `tasks.morning.schedule`},
		{"max_turns", "/web/config/defaults", map[string]string{"max_turns": "lots"}, `defaults.max_turns: expected an integer, got a string`},
		{"defaults harness", "/web/config/defaults", map[string]string{"harness": "nope"}, `defaults.harness "nope" is not a registered harness (available: ` + availableHarnesses + `)`},
		{"new template name", "/web/config/templates/new", map[string]string{"name": "bad name!", "harness": "codex"}, `invalid template name "bad name!"`},
		{"new template exists", "/web/config/templates/new", map[string]string{"name": "review", "harness": "codex"}, `templates.review: already in leo.yaml`},
		{"new template unnamed", "/web/config/templates/new", map[string]string{"name": " ", "harness": "codex"}, `a new template needs a name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFormsSite(t)
			before := s.file()
			status, _, body := s.postForm(tc.path, formFor(tc.form))
			if status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d\n%s", status, body)
			}
			flash := regexp.MustCompile(`(?s)<p class="flash flash-error"[^>]*>(.*?)</p>`).FindStringSubmatch(body)
			if flash == nil || !strings.Contains(html.UnescapeString(flash[1]), tc.want) {
				t.Fatalf("flash %q, want it to contain %q", flash, tc.want)
			}
			s.noSecrets("error page", body)
			if s.file() != before {
				t.Fatal("leo.yaml changed")
			}
			if s.reloads.Load() != 0 {
				t.Fatal("the daemon was reloaded")
			}
			if !hasElement(body, "config-form") {
				t.Fatal("the form is not shown again")
			}
			// The form keeps what was posted.
			if v := tc.form["model"]; v != "" && attr(element(t, body, "model"), "value") != v {
				t.Errorf("model not kept: %s", element(t, body, "model"))
			}
		})
	}
}

// A new template is created at the end of templates:, with its options.
func TestConfigFormsNewTemplate(t *testing.T) {
	s := newFormsSite(t)
	status, h, body := s.postForm("/web/config/templates/new", formFor(map[string]string{
		"name": "builder", "harness": "codex", "model": "gpt-5.3-codex", "workspace": "", "opt.sandbox": "workspace-write"}))
	if status != http.StatusSeeOther || h.Get("Location") != "/web/config/templates/builder" {
		t.Fatalf("create = %d %s\n%s", status, h.Get("Location"), body)
	}
	want := "      sandbox: read-only\n  builder:\n    harness: codex\n    model: gpt-5.3-codex\n    harness_options:\n      sandbox: workspace-write\n\ntasks:"
	if !strings.Contains(s.file(), want) {
		t.Fatalf("leo.yaml:\n%s\nwant it to contain:\n%s", s.file(), want)
	}
	if status, _, _ := s.do("GET", "/web/config/templates/builder", nil, nil); status != http.StatusOK {
		t.Fatalf("the new template's page: %d", status)
	}
	if status, _, _ := s.do("GET", "/web/config/templates/ghost", nil, nil); status != http.StatusNotFound {
		t.Fatalf("an unknown template's page: %d", status)
	}
}

// A task's form saves its own fields; the harness switch drops options of
// the old harness.
func TestConfigFormsTaskSave(t *testing.T) {
	s := newFormsSite(t)
	status, _, body := s.postForm("/web/config/tasks/codex-nightly", formFor(map[string]string{
		"harness": "", "model": "haiku", "schedule": "30 2 * * *", "enabled": "off", "catch_up": "", "timezone": "Europe/Berlin",
		"opt.permission_mode": "plan"}))
	if status != http.StatusSeeOther {
		t.Fatalf("save = %d\n%s", status, body)
	}
	c, err := config.LoadValid(s.home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.ResolveTask("codex-nightly")
	if r.HarnessName != "claude" || !r.HarnessInherited || r.Model != "haiku" || r.Schedule != "30 2 * * *" || r.Enabled ||
		r.Timezone != "Europe/Berlin" || r.Options.String("permission_mode") != "plan" {
		t.Fatalf("resolved %+v", r)
	}
}

// Saves are serialised: concurrent posts to different scopes all land.
func TestConfigFormsConcurrentSaves(t *testing.T) {
	s := newFormsSite(t)
	var wg sync.WaitGroup
	const n = 6
	codes := make(chan int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			form := formFor(map[string]string{"name": fmt.Sprintf("t%d", i), "harness": "codex", "opt.sandbox": "read-only",
				csrfField: s.csrf()})
			req, _ := http.NewRequest("POST", s.base+"/web/config/templates/new", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := s.client.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusSeeOther {
			t.Fatalf("a save answered %d", c)
		}
	}
	c, err := config.LoadValid(s.home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Templates) != n+2 {
		t.Fatalf("templates %v", c.TemplateNames())
	}
}

// The forms sit behind the login and the CSRF check like every page.
func TestConfigFormsNeedLoginAndCSRF(t *testing.T) {
	s := newFormsSite(t)
	before := s.file()
	status, _, _ := s.do("POST", "/web/config/defaults", strings.NewReader("model=opus"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if status != http.StatusForbidden || s.file() != before {
		t.Fatalf("a post without the CSRF value: %d", status)
	}
	s.client.Jar = nil
	for _, path := range []string{"/web/config", "/web/config/templates/assistant", "/web/partials/harness-options?scope=defaults"} {
		if status, _, _ := s.do("GET", path, nil, nil); status != http.StatusSeeOther {
			t.Errorf("%s without a login: %d", path, status)
		}
	}
}

// A new task goes through the same EditScope path as a template: created
// after the last task, comments kept, validated (a task without a prompt
// is refused and the file stays as it was).
func TestConfigFormsNewTask(t *testing.T) {
	s := newFormsSite(t)
	mustHave(t, "config page", s.get("/web/config"), `href="/web/config/tasks/new"`)
	page := s.get("/web/config/tasks/new")
	mustHave(t, "new task form", page, "New task", `name="name"`, `name="schedule"`, `name="prompt_file"`, `action="/web/config/tasks/new"`)
	before := s.file()
	status, _, body := s.postForm("/web/config/tasks/new", formFor(map[string]string{"name": "weekly", "harness": "", "schedule": "0 9 * * 1"}))
	if status != http.StatusUnprocessableEntity || s.file() != before {
		t.Fatalf("a task without a prompt = %d, file changed: %v\n%s", status, s.file() != before, body)
	}
	mustHave(t, "refused new task", html.UnescapeString(body), "tasks.weekly")
	status, h, body := s.postForm("/web/config/tasks/new", formFor(map[string]string{
		"name": "weekly", "harness": "", "schedule": "0 9 * * 1", "prompt_file": "p.md", "workspace": regexp.MustCompile(`workspace: (\S+)`).FindStringSubmatch(before)[1]}))
	if status != http.StatusSeeOther || h.Get("Location") != "/web/config/tasks/weekly" {
		t.Fatalf("create = %d %s\n%s", status, h.Get("Location"), body)
	}
	file := s.file()
	mustHave(t, "leo.yaml", file, "# leo config — this comment stays", `"0 7 * * 1-5"   # weekdays`, "  weekly:\n", `schedule: "0 9 * * 1"`, "API_KEY: "+formsSecret)
	if strings.Index(file, "weekly:") < strings.Index(file, "codex-nightly:") {
		t.Fatalf("the new task is not after the last one:\n%s", file)
	}
	if _, err := config.LoadValid(s.home.ConfigPath); err != nil {
		t.Fatal(err)
	}
	status, _, body = s.postForm("/web/config/tasks/new", formFor(map[string]string{"name": "morning", "harness": ""}))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "tasks.morning: already in leo.yaml") {
		t.Fatalf("a task that exists = %d\n%s", status, body)
	}
	if s.reloads.Load() != 1 {
		t.Fatalf("reloads = %d, want 1", s.reloads.Load())
	}
}

// The forms show each scope's notifiers read only, never a webhook URL,
// an argument or an env value, and a save leaves notify: as written.
func TestConfigFormsShowNotifiersWithoutSecrets(t *testing.T) {
	const hook = "https://hooks.example.com/services/T0/B0/form-Secret-51"
	const token = "form-token-Secret-52"
	s := newFormsSite(t)
	yaml := s.file() + `notify:
  - command: [notify-send, --urgency, "` + token + `"]
    env: {NTFY_TOKEN: ` + token + `}
    events: [needs_input, crash_loop]
`
	yaml = strings.Replace(yaml, "  review:\n", "    notify:\n      - {webhook: \""+hook+"\", events: [idle]}\n  review:\n", 1)
	yaml = strings.Replace(yaml, "  codex-nightly:\n", "    notify: []\n  codex-nightly:\n", 1)
	writeTestFile(t, s.home.ConfigPath, yaml)
	if _, err := config.LoadValid(s.home.ConfigPath); err != nil {
		t.Fatal(err)
	}
	secrets := func(what, body string) {
		t.Helper()
		for _, secret := range []string{hook, "hooks.example.com", "form-Secret-51", token} {
			if strings.Contains(body, secret) {
				t.Errorf("%s shows a secret (%s)", what, secret)
			}
		}
	}

	page := s.get("/web/config")
	secrets("the config page", page)
	top := html.UnescapeString(element(t, page, "notify"))
	for _, want := range []string{"<code>notify[0]</code>", "command notify-send (+2 args)", "needs_input, crash_loop", "NTFY_TOKEN"} {
		if !strings.Contains(top, want) {
			t.Errorf("the top-level list lacks %q:\n%s", want, top)
		}
	}
	own := html.UnescapeString(s.get("/web/config/templates/assistant"))
	secrets("templates.assistant", own)
	for _, want := range []string{"This scope's own <code>templates.assistant.notify:</code> list.", "<code>templates.assistant.notify[0]</code>", "webhook ***", "<td>idle</td>"} {
		if !strings.Contains(own, want) {
			t.Errorf("templates.assistant lacks %q", want)
		}
	}
	inherits := html.UnescapeString(s.get("/web/config/templates/review"))
	if !strings.Contains(inherits, "No list of its own: the top level's <code>notify:</code> applies.") || !strings.Contains(inherits, "<code>notify[0]</code>") {
		t.Errorf("templates.review does not show the top level's list")
	}
	if off := s.get("/web/config/tasks/morning"); !strings.Contains(off, "No notifiers: notifications are off here.") {
		t.Errorf("tasks.morning does not say its notifications are off")
	}

	status, _, body := s.postForm("/web/config/templates/assistant", formFor(map[string]string{
		"scope": "templates.assistant", "harness": "", "model": "opus"}))
	if status != http.StatusSeeOther {
		t.Fatalf("save = %d\n%s", status, body)
	}
	if after := s.file(); !strings.Contains(after, "    notify:\n      - {webhook: \""+hook+"\", events: [idle]}\n") ||
		!strings.Contains(after, "    env: {NTFY_TOKEN: "+token+"}\n") {
		t.Errorf("the save changed notify::\n%s", after)
	}
}

// availableHarnesses is how an unknown harness's error lists the
// registered ones.
var availableHarnesses = strings.Join(harness.Names(), ", ")
