package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/web/schema"
)

// The config forms (docs/configuration/harnesses.md "Web UI"):
//
//	GET  /web/config                        defaults form, templates and tasks lists
//	POST /web/config/defaults               save the defaults
//	GET  /web/config/templates/new          form of a new template
//	POST /web/config/templates/new          create it (field "name")
//	GET  /web/config/templates/{name}       a template's form
//	POST /web/config/templates/{name}       save it
//	GET  /web/config/tasks/new              form of a new task
//	POST /web/config/tasks/new              create it (field "name")
//	GET  /web/config/tasks/{name}           a task's form
//	POST /web/config/tasks/{name}           save it
//	GET  /web/partials/harness-options?scope=…&harness=…[&model=…]
//	                                        the options sub-form of the chosen harness,
//	                                        plus the model input out of band
//
// The forms read leo.yaml itself, not the running config: they edit the
// file, and a file the daemon refused to load is still shown as written.
// Every save goes through validateAndSave: config.EditScope with the same
// Validate the CLI and daemon use, then a reload of the daemon.
func (s *Server) configRoutes(mux *http.ServeMux, auth func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("GET /web/config", auth(s.handleConfigPage))
	mux.HandleFunc("POST /web/config/defaults", auth(func(w http.ResponseWriter, r *http.Request) {
		s.handleScopeSave(w, r, config.DefaultsScope(), false)
	}))
	for _, section := range []string{config.SectionTemplates, config.SectionTasks} {
		// "new" before {name}: the more specific pattern wins, so a
		// scope named "new" is edited by hand.
		mux.HandleFunc("GET /web/config/"+section+"/new", auth(func(w http.ResponseWriter, r *http.Request) {
			s.handleScopePage(w, r, config.ScopePath{Section: section}, true)
		}))
		mux.HandleFunc("POST /web/config/"+section+"/new", auth(func(w http.ResponseWriter, r *http.Request) {
			s.handleScopeSave(w, r, config.ScopePath{Section: section, Name: strings.TrimSpace(r.PostFormValue("name"))}, true)
		}))
		mux.HandleFunc("GET /web/config/"+section+"/{name}", auth(func(w http.ResponseWriter, r *http.Request) {
			s.handleScopePage(w, r, config.ScopePath{Section: section, Name: r.PathValue("name")}, false)
		}))
		mux.HandleFunc("POST /web/config/"+section+"/{name}", auth(func(w http.ResponseWriter, r *http.Request) {
			s.handleScopeSave(w, r, config.ScopePath{Section: section, Name: r.PathValue("name")}, false)
		}))
	}
	mux.HandleFunc("GET /web/partials/harness-options", auth(s.handleHarnessOptionsPartial))
}

// loadFile reads leo.yaml for the forms.
func (s *Server) loadFile() (*config.Config, error) {
	return config.Load(s.opts.Home.ConfigPath)
}

// scopeFields are the plain fields each form shows besides harness, model
// and harness_options, in order. Keys a form does not show (env, channels,
// …) are never touched by its save.
func scopeFields(section string) []fieldSpec {
	common := []fieldSpec{
		{Key: "workspace", Label: "Workspace", Help: "directory the agent runs in (~ and relative paths allowed)"},
		{Key: "max_turns", Label: "Max turns", Kind: "number", Help: "turn limit (ignored by harnesses without one)"},
	}
	switch section {
	case config.SectionDefaults:
		return common
	case config.SectionTemplates:
		return append(common, fieldSpec{Key: "idle_suspend_after", Label: "Idle suspend after", Help: "e.g. 2h; empty: never"})
	}
	return append(common,
		fieldSpec{Key: "schedule", Label: "Schedule", Help: "cron: minute hour day-of-month month day-of-week"},
		fieldSpec{Key: "timezone", Label: "Timezone", Help: "e.g. Europe/Berlin; empty: the daemon's"},
		fieldSpec{Key: "prompt_file", Label: "Prompt file", Help: "relative to the task workspace"},
		fieldSpec{Key: "timeout", Label: "Timeout", Help: "e.g. 30m"},
		fieldSpec{Key: "retries", Label: "Retries", Kind: "number"},
		fieldSpec{Key: "enabled", Label: "Enabled", Kind: "bool"},
		fieldSpec{Key: "catch_up", Label: "Catch up", Kind: "bool", Help: "run once after missed firings"},
		fieldSpec{Key: "runtime", Label: "Runtime", Kind: "select", Choices: []string{config.RuntimeOneshot, config.RuntimePersistent}},
		fieldSpec{Key: "template", Label: "Template", Help: "persistent tasks: the template whose agent receives the prompt"},
	)
}

type fieldSpec struct {
	Key, Label, Kind, Help string
	Choices                []string
}

// formField is one plain field as a page shows it.
type formField struct {
	fieldSpec
	ID      string
	Value   string
	Options []schema.Choice // bool and select kinds
}

// scopeForm is the data of a defaults, template or task form.
type scopeForm struct {
	CSRF     string // the form's hidden csrf field ({{template "csrf" .}})
	Scope    string // "defaults", "templates.x", "tasks.x"; "templates" for a new one
	Section  string
	Name     string
	New      bool
	Action   string
	Harness  []schema.Choice
	Model    modelField
	Fields   []formField
	Options  optionsView
	Inherits bool // the scope inherits defaults.harness_options
	// Notify shows the scope's notifiers (templates and tasks only).
	Notify *notifyView
}

// notifyView is a notify: list as the forms show it: read only, never a
// URL, an argument or an env value (docs/notifications.md). The forms'
// saves never touch notify:, like env:.
type notifyView struct {
	Path string // "notify", "templates.x.notify"
	// Own: the scope sets its own list (else it has the top level's).
	Own  bool
	Rows []notifyRow
}

type notifyRow struct {
	Name    string
	Targets string // "command notify-send", "webhook ***", both
	Events  string
	EnvKeys string
}

// notifyFor is the notify view of a scope ("" section: the top level).
func notifyFor(c *config.Config, section, name string) *notifyView {
	v := &notifyView{Path: "notify"}
	if section != "" {
		v.Path = section + "." + name + ".notify"
		switch section {
		case config.SectionTemplates:
			t, ok := c.Templates[name]
			v.Own = ok && t.NotifySet
		case config.SectionTasks:
			t, ok := c.Tasks[name]
			v.Own = ok && t.NotifySet
		}
	}
	for _, n := range c.Notifiers(section, name) {
		var targets []string
		if len(n.Command) > 0 {
			targets = append(targets, fmt.Sprintf("command %s (+%d args)", n.Command[0], len(n.Command)-1))
		}
		if n.Webhook != "" {
			targets = append(targets, "webhook ***")
		}
		v.Rows = append(v.Rows, notifyRow{Name: n.Name, Targets: strings.Join(targets, ", "),
			Events: strings.Join(n.Events, ", "), EnvKeys: strings.Join(n.EnvKeys, ", ")})
	}
	return v
}

type modelField struct {
	Value       string
	Placeholder string
	Suggestions []string
	OOB         bool
}

type optionsView struct {
	Harness  string // the resolved harness the controls are for
	Controls []schema.Control
}

// formValues are a form's values as text: from the file (a page) or from
// a post (a page shown again with its error).
type formValues struct {
	harness string
	model   string
	fields  map[string]string
	options map[string]any // own harness_options (nil: none)
	optsFor string         // the harness those options belong to
}

// fileValues reads a scope's values from the file's config (zero for a
// scope it does not have).
func fileValues(c *config.Config, scope config.ScopePath) formValues {
	v := formValues{fields: map[string]string{}}
	var st *config.Settings
	switch scope.Section {
	case config.SectionDefaults:
		d := c.Defaults
		v.harness, v.model, v.options = d.Harness, d.Model, d.HarnessOptions
		v.fields["workspace"], v.fields["max_turns"] = d.Workspace, intText(d.MaxTurns)
		v.optsFor = c.DefaultsHarnessName()
		return v
	case config.SectionTemplates:
		if t, ok := c.Templates[scope.Name]; ok {
			st = &t.Settings
			v.fields["idle_suspend_after"] = t.IdleSuspendAfter
		}
	case config.SectionTasks:
		if t, ok := c.Tasks[scope.Name]; ok {
			st = &t.Settings
			f := v.fields
			f["schedule"], f["timezone"], f["prompt_file"], f["timeout"] = t.Schedule, t.Timezone, t.PromptFile, t.Timeout
			f["retries"], f["enabled"], f["catch_up"] = intText(t.Retries), boolText(t.Enabled), boolText(t.CatchUp)
			f["runtime"], f["template"] = t.Runtime, t.Template
		}
	}
	if st != nil {
		v.harness, v.model, v.options = st.Harness, st.Model, st.HarnessOptions
		v.fields["workspace"], v.fields["max_turns"] = st.Workspace, intText(st.MaxTurns)
	}
	v.optsFor = c.ScopeHarnessName(v.harness)
	return v
}

func intText(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func boolText(p *bool) string {
	switch {
	case p == nil:
		return ""
	case *p:
		return "on"
	}
	return "off"
}

// resolvedHarness is the harness a scope runs with sel chosen in its
// dropdown: the cascade scope → defaults.harness → the built-in default;
// the defaults form itself falls back to the built-in default.
func resolvedHarness(c *config.Config, scope config.ScopePath, sel string) string {
	if sel != "" {
		return sel
	}
	if scope.Section == config.SectionDefaults {
		return harness.Default
	}
	return c.DefaultsHarnessName()
}

// buildForm is the form of scope with values v.
func (s *Server) buildForm(r *http.Request, c *config.Config, scope config.ScopePath, isNew bool, v formValues) scopeForm {
	choices, _ := schema.TryFor(schema.SourceHarnesses)
	f := scopeForm{
		CSRF: s.csrfValue(r), Scope: scope.String(), Section: scope.Section, Name: scope.Name, New: isNew,
		Harness: schema.Select(choices, v.harness),
	}
	switch {
	case scope.Section == config.SectionDefaults:
		f.Action = "/web/config/defaults"
	case isNew:
		f.Scope, f.Action = scope.Section, "/web/config/"+scope.Section+"/new"
	default:
		f.Action = "/web/config/" + scope.Section + "/" + url.PathEscape(scope.Name)
	}
	for _, spec := range scopeFields(scope.Section) {
		ff := formField{fieldSpec: spec, ID: "field-" + spec.Key, Value: v.fields[spec.Key]}
		switch spec.Kind {
		case "bool":
			ff.Options = schema.Select([]schema.Choice{{Value: "", Label: "inherit"}, {Value: "on", Label: "on"}, {Value: "off", Label: "off"}}, ff.Value)
		case "select":
			opts := []schema.Choice{{Value: "", Label: "inherit"}}
			for _, ch := range spec.Choices {
				opts = append(opts, schema.Choice{Value: ch, Label: ch})
			}
			ff.Options = schema.Select(opts, ff.Value)
		}
		f.Fields = append(f.Fields, ff)
	}
	f.Model, f.Options, f.Inherits = s.harnessParts(c, scope, v)
	if scope.Section != config.SectionDefaults {
		f.Notify = notifyFor(c, scope.Section, scope.Name)
	}
	return f
}

// harnessParts builds what depends on the chosen harness: the model input
// and the options sub-form. Inherited values are shown only when the
// scope resolves to the defaults harness, and never on the defaults form.
func (s *Server) harnessParts(c *config.Config, scope config.ScopePath, v formValues) (modelField, optionsView, bool) {
	name := resolvedHarness(c, scope, v.harness)
	h, known := harness.Lookup(name)
	inherits := scope.Section != config.SectionDefaults && name == c.DefaultsHarnessName()

	m := modelField{Value: v.model, Suggestions: schema.ModelSuggestions(name), Placeholder: schema.ModelPlaceholder(name)}
	if inherits && v.model == "" {
		if model := c.InheritedModel(name); model != "" {
			m.Placeholder = "inherit: " + model
		}
	}
	view := optionsView{Harness: name}
	if !known {
		return m, view, inherits
	}
	in := schema.OptionsInput{Harness: h, Template: scope.Section == config.SectionTemplates}
	if v.optsFor == name {
		in.Own = v.options
	}
	if inherits {
		in.Inherited = c.Defaults.HarnessOptions
	}
	workspace := scopeWorkspace(c, scope)
	in.Source = func(source string) ([]string, bool) {
		return harness.OptionSource(h, source, harness.SourceQuery{Workspace: workspace})
	}
	view.Controls = schema.Controls(in)
	return m, view, inherits
}

// scopeWorkspace is the workspace a scope resolves to ("" when it cannot
// be resolved), where the "agents" source looks for project agents.
func scopeWorkspace(c *config.Config, scope config.ScopePath) string {
	var r *config.Resolved
	switch scope.Section {
	case config.SectionTemplates:
		r, _ = c.ResolveTemplate(scope.Name)
	case config.SectionTasks:
		r, _ = c.ResolveTask(scope.Name)
	}
	if r != nil {
		return r.Workspace
	}
	return ""
}

// configPage is /web/config.
type configPage struct {
	Defaults  scopeForm
	Notify    *notifyView // the top-level notify: list
	Templates []scopeRow
	Tasks     []scopeRow
}

// scopeRow is a row of the templates or tasks list: its resolved harness
// as a badge, dimmed when inherited.
type scopeRow struct {
	Name             string
	Link             string
	Harness          string
	HarnessInherited bool
	Model            string
	Schedule         string
	Enabled          string
}

func (s *Server) handleConfigPage(w http.ResponseWriter, r *http.Request) {
	c, err := s.loadFile()
	if err != nil {
		s.unreadable(w, r, err)
		return
	}
	s.render(w, r, "config", s.configPageData(r, c, fileValues(c, config.DefaultsScope())))
}

// unreadable answers a page when leo.yaml cannot be read or parsed.
func (s *Server) unreadable(w http.ResponseWriter, r *http.Request, err error) {
	w.WriteHeader(http.StatusInternalServerError)
	s.renderFlash(w, r, "config", configPage{}, &flash{Kind: "error", Text: "leo cannot read leo.yaml: " + err.Error()})
}

func (s *Server) configPageData(r *http.Request, c *config.Config, defaults formValues) configPage {
	p := configPage{Defaults: s.buildForm(r, c, config.DefaultsScope(), false, defaults), Notify: notifyFor(c, "", "")}
	for _, name := range c.TemplateNames() {
		t := c.Templates[name]
		p.Templates = append(p.Templates, scopeRow{Name: name, Link: "/web/config/templates/" + url.PathEscape(name),
			Harness: c.ScopeHarnessName(t.Harness), HarnessInherited: t.Harness == "", Model: c.TemplateModel(name)})
	}
	for _, name := range c.TaskNames() {
		t := c.Tasks[name]
		enabled := "on"
		if t.Enabled != nil && !*t.Enabled {
			enabled = "off"
		}
		p.Tasks = append(p.Tasks, scopeRow{Name: name, Link: "/web/config/tasks/" + url.PathEscape(name),
			Harness: c.ScopeHarnessName(t.Harness), HarnessInherited: t.Harness == "", Model: c.TaskModel(name),
			Schedule: t.Schedule, Enabled: enabled})
	}
	return p
}

func (s *Server) handleScopePage(w http.ResponseWriter, r *http.Request, scope config.ScopePath, isNew bool) {
	c, err := s.loadFile()
	if err != nil {
		s.unreadable(w, r, err)
		return
	}
	if !isNew && !scopeExists(c, scope) {
		w.WriteHeader(http.StatusNotFound)
		s.renderFlash(w, r, "config", s.configPageData(r, c, fileValues(c, config.DefaultsScope())),
			&flash{Kind: "error", Text: scope.String() + ": not in leo.yaml"})
		return
	}
	s.render(w, r, "config_scope", s.buildForm(r, c, scope, isNew, fileValues(c, scope)))
}

func scopeExists(c *config.Config, scope config.ScopePath) bool {
	switch scope.Section {
	case config.SectionTemplates:
		_, ok := c.Templates[scope.Name]
		return ok
	case config.SectionTasks:
		_, ok := c.Tasks[scope.Name]
		return ok
	}
	return true
}

// postedValues reads a posted form's values as text, and the options of
// the chosen harness from their controls.
func postedValues(c *config.Config, scope config.ScopePath, form url.Values) (formValues, error) {
	v := formValues{harness: form.Get("harness"), model: strings.TrimSpace(form.Get("model")), fields: map[string]string{}}
	for _, spec := range scopeFields(scope.Section) {
		v.fields[spec.Key] = strings.TrimSpace(form.Get(spec.Key))
	}
	v.optsFor = resolvedHarness(c, scope, v.harness)
	if h, ok := harness.Lookup(v.optsFor); ok {
		opts, err := schema.ApplyHarnessOptions(h, form)
		v.options = opts
		if err != nil {
			return v, fmt.Errorf("%s.%w", scope, err)
		}
	}
	return v, nil
}

// changes turns posted values into the scope edit. Only keys whose field
// was posted change; an empty field (or "inherit") removes the key. A
// number field that is not a number is written as text, so Validate names
// the field ("expected an integer").
func changes(scope config.ScopePath, form url.Values, v formValues) []config.FieldChange {
	var out []config.FieldChange
	for _, key := range []string{"harness", "model"} {
		if _, posted := form[key]; posted {
			value := v.harness
			if key == "model" {
				value = v.model
			}
			out = append(out, config.SetField(key, value))
		}
	}
	for _, spec := range scopeFields(scope.Section) {
		if _, posted := form[spec.Key]; !posted {
			continue
		}
		var value any = v.fields[spec.Key]
		switch {
		case spec.Kind == "number":
			if n, err := strconv.Atoi(v.fields[spec.Key]); err == nil {
				value = n
			}
		case spec.Kind == "bool" && value == "on":
			value = true
		case spec.Kind == "bool" && value == "off":
			value = false
		}
		out = append(out, config.SetField(spec.Key, value))
	}
	// The options sub-form is the chosen harness's: it replaces the
	// scope's harness_options (options never carry across harnesses).
	if _, posted := form["harness"]; posted {
		opts := map[string]any{}
		for k, val := range v.options {
			opts[k] = val
		}
		out = append(out, config.SetField("harness_options", opts))
	}
	return out
}

func (s *Server) handleScopeSave(w http.ResponseWriter, r *http.Request, scope config.ScopePath, isNew bool) {
	c, err := s.loadFile()
	if err != nil {
		s.unreadable(w, r, err)
		return
	}
	if !isNew && !scopeExists(c, scope) {
		http.Error(w, scope.String()+": not in leo.yaml", http.StatusNotFound)
		return
	}
	v, err := postedValues(c, scope, r.PostForm)
	if err == nil {
		switch {
		case isNew && scope.Name == "":
			err = fmt.Errorf("%s: a new %s needs a name", scope.Section, strings.TrimSuffix(scope.Section, "s"))
		case isNew && scopeExists(c, scope):
			err = fmt.Errorf("%s: already in leo.yaml; edit it instead", scope)
		}
	}
	var note string
	if err == nil {
		note, err = s.validateAndSave(r.Context(), scope, changes(scope, r.PostForm, v), isNew)
	}
	if err != nil {
		// The form again, as posted, with the error: nothing reached disk.
		w.WriteHeader(http.StatusUnprocessableEntity)
		fl := &flash{Kind: "error", Text: err.Error()}
		if scope.Section == config.SectionDefaults {
			s.renderFlash(w, r, "config", s.configPageData(r, c, v), fl)
			return
		}
		name := scope.Name
		if isNew {
			scope.Name = ""
		}
		form := s.buildForm(r, c, scope, isNew, v)
		form.Name = name
		s.renderFlash(w, r, "config_scope", form, fl)
		return
	}
	setFlash(w, "ok", "Saved "+scope.String()+" to leo.yaml."+note)
	target := "/web/config"
	if scope.Section != config.SectionDefaults {
		target = "/web/config/" + scope.Section + "/" + url.PathEscape(scope.Name)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// validateAndSave is the one way a form reaches leo.yaml: config.EditScope
// validates the whole resulting config with the CLI's and the daemon's
// Validate and writes it atomically (saves are serialised there), or
// leaves the file as it was and returns the field-named error. The daemon
// then reloads; a failed reload is noted, not an error (the file is saved).
func (s *Server) validateAndSave(ctx context.Context, scope config.ScopePath, changes []config.FieldChange, create bool) (string, error) {
	var opts []config.Option
	if create {
		opts = append(opts, config.CreateScope())
	}
	if err := config.EditScope(s.opts.Home.ConfigPath, scope, changes, opts...); err != nil {
		return "", err
	}
	if _, err := s.client.ReloadConfig(ctx); err != nil {
		s.opts.Log.Warn("reload after a config save", "scope", scope.String(), "err", err)
		return " The daemon did not reload it: " + err.Error(), nil
	}
	return "", nil
}

// harnessPartial is the sub-form swapped in when the dropdown changes.
type harnessPartial struct {
	Options optionsView
	Model   modelField
}

// handleHarnessOptionsPartial renders the options of the newly chosen
// harness for a scope (its own values when that is the harness its file
// entry runs, inherited placeholders recomputed for this harness) and the
// model input out of band.
func (s *Server) handleHarnessOptionsPartial(w http.ResponseWriter, r *http.Request) {
	c, err := s.loadFile()
	if err != nil {
		http.Error(w, "leo cannot read leo.yaml: "+err.Error(), http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	scope, ok := parseScope(q.Get("scope"))
	if !ok {
		http.Error(w, "scope: expected defaults, templates[.<name>] or tasks.<name>", http.StatusBadRequest)
		return
	}
	v := fileValues(c, scope)
	v.harness = q.Get("harness")
	if _, known := harness.Lookup(v.harness); v.harness != "" && !known {
		http.Error(w, fmt.Sprintf("harness %q is not registered", clip(v.harness)), http.StatusBadRequest)
		return
	}
	if q.Has("model") {
		v.model = q.Get("model")
	}
	m, opts, _ := s.harnessParts(c, scope, v)
	m.OOB = true
	s.partial(w, "harness_options_partial", harnessPartial{Options: opts, Model: m})
}

// parseScope reads the scope parameter: "defaults", "templates" (a new
// template), "templates.<name>", "tasks.<name>".
func parseScope(text string) (config.ScopePath, bool) {
	if text == config.SectionDefaults {
		return config.DefaultsScope(), true
	}
	section, name, _ := strings.Cut(text, ".")
	switch section {
	case config.SectionTemplates:
		return config.ScopePath{Section: section, Name: name}, true
	case config.SectionTasks:
		return config.ScopePath{Section: section, Name: name}, true
	}
	return config.ScopePath{}, false
}
