package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

// ErrUnknownScope is wrapped by ResolveTemplate/ResolveTask for a name that
// is not in the config.
var ErrUnknownScope = errors.New("not in the config")

// Resolved is one template or task after the cascade: plain data a launcher
// can use without reading YAML again.
type Resolved struct {
	// Scope is "templates.<name>" or "tasks.<name>".
	Scope string
	Name  string

	Harness          harness.Harness
	HarnessName      string
	HarnessInherited bool // the scope names no harness of its own

	Model          string
	ModelInherited bool // Model came from defaults.model or the harness's built-in default
	MaxTurns       int

	// Options is the decoded, merged harness_options; OptionsInherited marks
	// the keys that came from defaults.harness_options (or, for a template's
	// template-own option left unset, from the schema's template default).
	Options          harness.Options
	OptionsInherited map[string]bool

	Channels    []string
	DevChannels []string
	// Env holds expanded values: secrets. Show EnvKeys in listings, never Env.
	Env     map[string]string
	EnvKeys []string

	Workspace string
	// Worktree: the scope's worktree: true (a template's agents, a
	// one-shot task's runs each get their own git worktree).
	Worktree         bool
	IdleSuspendAfter time.Duration // 0: never suspended
	QueueMax         int
	// OnLimit is the scope's on_limit (config.OnLimit*; OnLimitWait
	// when unset).
	OnLimit string

	// Task-only fields.
	Schedule     string
	Timezone     string
	PromptFile   string // absolute
	Timeout      time.Duration
	Retries      int
	Enabled      bool
	CatchUp      bool // run once after missed firings (default true)
	NotifyOnFail bool
	Runtime      string
	Template     string
}

// LaunchSpec turns the resolved scope into the adapter's launch spec. The
// caller adds SessionID/Resume, Prompt and Bridge.
func (r *Resolved) LaunchSpec() harness.LaunchSpec {
	spec := harness.LaunchSpec{
		Name:      r.Name,
		Workspace: r.Workspace,
		Model:     r.Model,
		MaxTurns:  r.MaxTurns,
		Options:   r.Options.Clone(),
		Env:       make(map[string]string, len(r.Env)),
	}
	for k, v := range r.Env {
		spec.Env[k] = v
	}
	if r.Harness != nil && r.Harness.SupportsChannels() {
		spec.Channels = append([]string(nil), r.Channels...)
		spec.DevChannels = append([]string(nil), r.DevChannels...)
	}
	return spec
}

// ResolveTemplate applies the cascade to templates.<name>. It fails when the
// scope cannot be resolved (unknown harness, invalid harness_options, model
// or duration); the error is a *ValidationError naming each field.
func (c *Config) ResolveTemplate(name string) (*Resolved, error) {
	t, ok := c.Templates[name]
	if !ok {
		return nil, fmt.Errorf("templates.%s: %w", name, ErrUnknownScope)
	}
	r, fs := c.resolveTemplate(name, t)
	return r, asError(fs)
}

// ResolveTask applies the cascade to tasks.<name>; see ResolveTemplate.
func (c *Config) ResolveTask(name string) (*Resolved, error) {
	t, ok := c.Tasks[name]
	if !ok {
		return nil, fmt.Errorf("tasks.%s: %w", name, ErrUnknownScope)
	}
	r, fs := c.resolveTask(name, t)
	return r, asError(fs)
}

// TaskModel is the model a task runs with. An unset model falls through to
// defaults.model, then to the harness's built-in default model (claude has
// one, codex and opencode none), only when the task resolves to the same
// harness as defaults: model names are harness-specific, so a claude default
// must never reach a codex or opencode task. "" means "let the harness
// choose".
func (c *Config) TaskModel(name string) string {
	if t, ok := c.Tasks[name]; ok {
		return c.model(t.Settings)
	}
	return ""
}

// TemplateModel is TaskModel's rule for templates.
func (c *Config) TemplateModel(name string) string {
	if t, ok := c.Templates[name]; ok {
		return c.model(t.Settings)
	}
	return ""
}

func (c *Config) model(s Settings) string {
	m, _ := c.cascadeModel(s.Model, c.ScopeHarnessName(s.Harness))
	return m
}

// DefaultsHarnessName is defaults.harness, or the built-in default.
func (c *Config) DefaultsHarnessName() string {
	if c.Defaults.Harness != "" {
		return c.Defaults.Harness
	}
	return harness.Default
}

// ScopeHarnessName is the harness a scope whose own harness: is own runs.
func (c *Config) ScopeHarnessName(own string) string {
	if own != "" {
		return own
	}
	return c.DefaultsHarnessName()
}

// InheritedModel is the model a scope on harnessName that sets none runs:
// defaults.model or the harness's built-in default when harnessName is the
// defaults' harness, else "" (the harness chooses). The config forms show
// it as the model's placeholder.
func (c *Config) InheritedModel(harnessName string) string {
	m, _ := c.cascadeModel("", harnessName)
	return m
}

// cascadeModel is docs/configuration/harnesses.md's model cascade: the scope's own model,
// else — only when the scope runs the defaults' harness — defaults.model,
// else that harness's built-in default; else "" (the harness chooses).
func (c *Config) cascadeModel(own, harnessName string) (model string, inherited bool) {
	if own != "" {
		return own, false
	}
	if harnessName != c.DefaultsHarnessName() {
		return "", false
	}
	if c.Defaults.Model != "" {
		return c.Defaults.Model, true
	}
	if h, ok := harness.Lookup(harnessName); ok {
		if m := harness.DefaultModel(h); m != "" {
			return m, true
		}
	}
	return "", false
}

// HarnessesInUse lists the resolved harness of defaults and of every
// template and task, sorted and without repeats (e.g. opencode's managed
// AGENTS.md block is only written when opencode is configured somewhere).
func (c *Config) HarnessesInUse() []string {
	seen := map[string]bool{c.DefaultsHarnessName(): true}
	for _, t := range c.Templates {
		seen[c.ScopeHarnessName(t.Harness)] = true
	}
	for _, t := range c.Tasks {
		seen[c.ScopeHarnessName(t.Harness)] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// resolver collects the findings of one resolution.
type resolver struct {
	c        *Config
	findings []Finding
}

func (rv *resolver) add(sev, path, posPath, msg string) {
	rv.findings = append(rv.findings, Finding{Severity: sev, Path: path, Message: msg, posPath: posPath})
}

func (rv *resolver) errorf(path, format string, args ...any) {
	rv.add(SeverityError, path, path, path+": "+fmt.Sprintf(format, args...))
}

func (rv *resolver) warnf(path, format string, args ...any) {
	rv.add(SeverityWarning, path, path, path+": "+fmt.Sprintf(format, args...))
}

// lookupHarness finds the adapter of a scope. A bad own name is reported on
// the scope; a bad inherited name is reported once, on defaults.
func (rv *resolver) lookupHarness(scope, own string) (harness.Harness, string) {
	name := rv.c.ScopeHarnessName(own)
	h, ok := harness.Lookup(name)
	if ok {
		return h, name
	}
	where := "defaults.harness"
	if own != "" {
		where = scope + ".harness"
	}
	rv.add(SeverityError, where, where, unregisteredHarness(where, name))
	return nil, name
}

func unregisteredHarness(field, name string) string {
	return fmt.Sprintf("%s %q is not a registered harness (available: %s)",
		field, name, strings.Join(harness.Names(), ", "))
}

// decodeOptions runs the adapter's strict decoder; each problem becomes its
// own finding on <scope>.harness_options.
func (rv *resolver) decodeOptions(scope string, h harness.Harness, raw map[string]any) (harness.Options, bool) {
	if len(raw) == 0 {
		return harness.Options{}, true
	}
	opts, err := h.DecodeOptions(raw)
	if err == nil {
		if opts == nil {
			opts = harness.Options{}
		}
		return opts, true
	}
	path := scope + ".harness_options"
	var many harness.OptionErrors
	var one *harness.OptionError
	switch {
	case errors.As(err, &many):
		for _, e := range many {
			rv.add(SeverityError, path, path+"."+e.Key, path+": "+e.Msg)
		}
	case errors.As(err, &one):
		rv.add(SeverityError, path, path+"."+one.Key, path+": "+one.Msg)
	default:
		rv.add(SeverityError, path, path, path+": "+err.Error())
	}
	return nil, false
}

// defaultsOptions decodes defaults.harness_options with the defaults
// harness, once per Config. Its findings are reported once, by
// validateDefaults; callers must not modify the map.
func (rv *resolver) defaultsOptions() harness.Options {
	c := rv.c
	c.defaultsOnce.Do(func() {
		h, ok := harness.Lookup(c.DefaultsHarnessName())
		if !ok {
			return
		}
		inner := &resolver{c: c}
		c.defaultsOpts, _ = inner.decodeOptions("defaults", h, c.Defaults.HarnessOptions)
	})
	return c.defaultsOpts
}

// common resolves the settings templates and tasks share.
func (rv *resolver) common(r *Resolved, s Settings, template bool) {
	c := rv.c
	r.HarnessInherited = s.Harness == ""
	r.Harness, r.HarnessName = rv.lookupHarness(r.Scope, s.Harness)
	if h := r.Harness; h != nil {
		if own, ok := rv.decodeOptions(r.Scope, h, s.HarnessOptions); ok {
			r.Options, r.OptionsInherited = rv.mergeOptions(h, r.HarnessName, own, template)
		}
		if s.Model != "" {
			if err := h.ValidateModel(s.Model); err != nil {
				rv.errorf(r.Scope+".model", "%v", err)
			}
		}
		if !h.SupportsChannels() {
			if len(s.Channels) > 0 {
				rv.errorf(r.Scope+".channels", channelsUnsupported, r.HarnessName)
			}
			if len(s.DevChannels) > 0 {
				rv.errorf(r.Scope+".dev_channels", channelsUnsupported, r.HarnessName)
			}
		}
	}
	if r.Options == nil { // unknown harness, or options it refused
		r.Options, r.OptionsInherited = harness.Options{}, map[string]bool{}
	}

	r.Model, r.ModelInherited = c.cascadeModel(s.Model, r.HarnessName)

	rv.checkMaxTurns(r.Scope+".max_turns", s.MaxTurns, r.Harness)
	switch {
	case s.MaxTurns != nil:
		r.MaxTurns = *s.MaxTurns
	case c.Defaults.MaxTurns != nil:
		r.MaxTurns = *c.Defaults.MaxTurns
	}

	r.Channels = append([]string(nil), s.Channels...)
	r.DevChannels = append([]string(nil), s.DevChannels...)
	r.Env, r.EnvKeys = c.mergeEnv(s.Env)
	r.Workspace = rv.workspace(r.Scope, s.Workspace, template)
	r.Worktree = s.Worktree != nil && *s.Worktree

	if s.IdleSuspendAfter != "" {
		r.IdleSuspendAfter = rv.positiveDuration(r.Scope+".idle_suspend_after", s.IdleSuspendAfter)
	}
	r.QueueMax = DefaultQueueMax
	if s.QueueMax != nil {
		r.QueueMax = *s.QueueMax
		if *s.QueueMax < 1 {
			rv.errorf(r.Scope+".queue_max", "must be at least 1, got %d", *s.QueueMax)
		}
	}
	r.OnLimit = OnLimitWait
	switch s.OnLimit {
	case "":
	case OnLimitWait, OnLimitContinue, OnLimitFail:
		r.OnLimit = s.OnLimit
	default:
		rv.errorf(r.Scope+".on_limit", "invalid value %q (valid: %s, %s, %s)", s.OnLimit, OnLimitWait, OnLimitContinue, OnLimitFail)
	}
}

// mergeOptions layers a scope's own decoded options over
// defaults.harness_options, one top-level key at a time, when the scope runs
// the defaults' harness (options never leak across harnesses). It also
// returns which keys were inherited. On a template, an option the schema
// marks template-own never inherits, and takes its template default when
// the template leaves it unset.
func (rv *resolver) mergeOptions(h harness.Harness, name string, own harness.Options, template bool) (harness.Options, map[string]bool) {
	merged, inherited := harness.Options{}, map[string]bool{}
	var schema []harness.OptionField
	if template {
		schema = h.OptionsSchema()
	}
	if name == rv.c.DefaultsHarnessName() {
		for k, v := range rv.defaultsOptions() {
			if f, ok := field(schema, k); ok && f.TemplateOwn {
				continue
			}
			merged[k] = copyValue(v) // the decoded defaults are shared
			inherited[k] = true
		}
	}
	for k, v := range own {
		merged[k] = v
		delete(inherited, k)
	}
	for _, f := range schema {
		if _, set := merged[f.Key]; !set && f.TemplateOwn && f.TemplateDefault != nil {
			merged[f.Key] = copyValue(f.TemplateDefault)
			inherited[f.Key] = true
		}
	}
	return merged, inherited
}

// field finds key in a schema (nil for none).
func field(schema []harness.OptionField, key string) (harness.OptionField, bool) {
	for _, f := range schema {
		if f.Key == key {
			return f, true
		}
	}
	return harness.OptionField{}, false
}

// checkMaxTurns checks a max_turns a scope sets: it cannot be negative, and
// one the harness ignores (h nil: unknown harness, reported elsewhere) is
// worth a warning.
func (rv *resolver) checkMaxTurns(path string, n *int, h harness.Harness) {
	if n == nil {
		return
	}
	if *n < 0 {
		rv.errorf(path, "must be 0 (no limit) or more, got %d", *n)
	}
	if *n != 0 && h != nil && !honorsMaxTurns(h) {
		rv.warnf(path, "the %s harness has no turn limit; max_turns is ignored", h.Name())
	}
}

// workspace is a scope's absolute workspace: its own, else
// defaults.workspace, else <home>/agents for a template and <home>/workspace
// for a task. A bad value is reported on the field it came from.
func (rv *resolver) workspace(scope, own string, template bool) string {
	c := rv.c
	ws := own
	if ws == "" {
		ws = c.Defaults.Workspace
	}
	if ws == "" {
		if template {
			ws = filepath.Join(c.Home, "agents")
		} else {
			ws = filepath.Join(c.Home, "workspace")
		}
	}
	abs, err := c.absPath(ws)
	if err != nil {
		field := "defaults.workspace"
		if own != "" {
			field = scope + ".workspace"
		}
		rv.errorf(field, "%v", err)
	}
	return abs
}

// copyValue copies the list and map values of decoded options.
func copyValue(v any) any {
	switch x := v.(type) {
	case []string:
		return append([]string(nil), x...)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	}
	return v
}

const channelsUnsupported = "the %s harness does not support channel plugins; use leo's MCP tools for messaging"

// honorsMaxTurns asks the adapter whether max_turns reaches the harness;
// one that does not say is taken to honour it.
func honorsMaxTurns(h harness.Harness) bool {
	tl, ok := h.(harness.TurnLimiter)
	return !ok || tl.HonorsMaxTurns()
}

func (rv *resolver) positiveDuration(path, text string) time.Duration {
	d, err := time.ParseDuration(text)
	if err != nil {
		rv.errorf(path, "invalid duration %q (use a number with a unit: 90s, 30m, 2h)", text)
		return 0
	}
	if d <= 0 {
		rv.errorf(path, "must be a positive duration, got %q", text)
		return 0
	}
	return d
}

func (c *Config) resolveTemplate(name string, t *Template) (*Resolved, []Finding) {
	rv := &resolver{c: c}
	r := &Resolved{Scope: "templates." + name, Name: name}
	rv.common(r, t.Settings, true)
	if r.Harness != nil && !r.Harness.SupportsKind(harness.KindAgent) {
		rv.errorf(r.Scope+".harness", "the %s harness cannot run ephemeral agents yet (only scheduled tasks) — see %s", r.HarnessName, HarnessDocs)
	}
	return r, rv.findings
}

func (c *Config) resolveTask(name string, t *Task) (*Resolved, []Finding) {
	rv := &resolver{c: c}
	r := &Resolved{Scope: "tasks." + name, Name: name}
	rv.common(r, t.Settings, false)
	r.Schedule = t.Schedule
	r.Timezone = t.Timezone
	if t.PromptFile != "" {
		p, err := c.expandTilde(t.PromptFile)
		if err != nil {
			rv.errorf(r.Scope+".prompt_file", "%v", err)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.Workspace, p)
		}
		r.PromptFile = filepath.Clean(p)
	}
	timeout := t.Timeout
	if timeout == "" {
		timeout = DefaultTaskTimeout
	}
	r.Timeout = rv.positiveDuration(r.Scope+".timeout", timeout)
	if t.Retries != nil {
		r.Retries = *t.Retries
		if *t.Retries < 0 {
			rv.errorf(r.Scope+".retries", "must be 0 or more, got %d", *t.Retries)
		}
	}
	r.Enabled = t.Enabled == nil || *t.Enabled
	r.CatchUp = t.CatchUp == nil || *t.CatchUp
	r.NotifyOnFail = t.NotifyOnFail
	r.Template = t.Template
	switch t.Runtime {
	case "", RuntimeOneshot:
		r.Runtime = RuntimeOneshot
	case RuntimePersistent:
		r.Runtime = RuntimePersistent
	default:
		r.Runtime = t.Runtime
		rv.errorf(r.Scope+".runtime", "invalid value %q (valid: %s, %s)", t.Runtime, RuntimeOneshot, RuntimePersistent)
	}
	rv.checkTaskKind(r)
	rv.checkTaskWorktree(r)
	return r, rv.findings
}

// checkTaskKind asks the adapter that will actually run the task whether it
// can: the task's own harness for a one-shot run or an implicit persistent
// target, the target template's harness otherwise.
func (rv *resolver) checkTaskKind(r *Resolved) {
	switch r.Runtime {
	case RuntimeOneshot:
		if r.Harness != nil && !r.Harness.SupportsKind(harness.KindTask) {
			rv.errorf(r.Scope+".harness", "the %s harness cannot run scheduled tasks yet (scheduled tasks run it headless) — see %s", r.HarnessName, HarnessDocs)
		}
	case RuntimePersistent:
		if r.Template == "" {
			if r.Harness != nil && !r.Harness.SupportsKind(harness.KindPersistent) {
				rv.errorf(r.Scope+".harness", persistentUnsupported, r.HarnessName, HarnessDocs)
			}
			return
		}
		t, ok := rv.c.Templates[r.Template]
		if !ok {
			return // reported by Validate
		}
		if h, ok := harness.Lookup(rv.c.ScopeHarnessName(t.Harness)); ok && !h.SupportsKind(harness.KindPersistent) {
			rv.errorf(r.Scope+".template", "templates.%s uses the %s harness, which cannot run persistent tasks yet (persistent tasks deliver into agents) — see %s", r.Template, h.Name(), HarnessDocs)
		}
	}
}

const persistentUnsupported = "the %s harness cannot run persistent tasks yet (persistent tasks deliver into agents) — see %s"

// mergeEnv layers the scope's env over defaults.env (key by key) and expands
// ${VAR} and $VAR from leo's own environment; $$ is a literal $.
func (c *Config) mergeEnv(own map[string]string) (map[string]string, []string) {
	out := make(map[string]string, len(c.Defaults.Env)+len(own))
	for k, v := range c.Defaults.Env {
		out[k] = c.expandEnv(v)
	}
	for k, v := range own {
		out[k] = c.expandEnv(v)
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return out, keys
}

func (c *Config) expandEnv(v string) string {
	if !strings.Contains(v, "$") {
		return v
	}
	return os.Expand(v, func(name string) string {
		if name == "$" {
			return "$"
		}
		return c.env(name)
	})
}

func (c *Config) env(name string) string {
	if c.getenv == nil {
		return os.Getenv(name)
	}
	return c.getenv(name)
}

func (c *Config) expandTilde(p string) (string, error) {
	return home.Expand(p, c.env)
}

// absPath expands ~ and makes a relative path absolute against the home.
func (c *Config) absPath(p string) (string, error) {
	p, err := c.expandTilde(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Home, p)
	}
	return filepath.Clean(p), nil
}
