// Package config is leo's configuration layer: the types of leo.yaml, the
// loader, the harness cascade that resolves each template and task into a
// plain launch spec, the one Validate used by the CLI, the daemon and web
// saves, the atomic Save, and the MCP bridge every launch gets. It runs no
// programs; the only files it touches are leo.yaml itself, task prompt files
// during validation, and (read only) the API token file for the bridge.
package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Built-in defaults of fields a scope leaves unset.
const (
	DefaultTaskTimeout = "30m"
	DefaultQueueMax    = 5
	DefaultWebBind     = "127.0.0.1"
	DefaultWebPort     = 8370

	// The scheduler section's defaults.
	DefaultMaxConcurrentRuns = 4
	DefaultHistoryKeep       = 500
	DefaultLogsKeep          = 50

	RuntimeOneshot    = "oneshot"
	RuntimePersistent = "persistent"
)

// HarnessDocs is where every harness-related error points the user.
const HarnessDocs = "docs/configuration/harnesses.md"

// Config is one parsed leo.yaml. It is immutable after Parse and safe for
// concurrent use. Fields hold what the file says (nil or "" when a key is
// unset); the Resolve methods apply the cascade and the built-in defaults.
type Config struct {
	// Path is the file the config was read from (may be empty for Parse).
	Path string
	// Home is the directory relative workspaces resolve against: the
	// directory holding leo.yaml.
	Home string

	Defaults  Defaults
	Templates map[string]*Template
	Tasks     map[string]*Task
	Web       Web
	Scheduler Scheduler
	// Worktrees is the worktrees: section (worktree.go).
	Worktrees Worktrees
	// Notify is the top-level notify: list, which every scope without a
	// list of its own uses.
	Notify []Notifier

	getenv   func(string) string
	pos      posIndex  // where each key is in the file, to locate findings
	findings []Finding // problems found while reading the file's shape

	defaultsOnce sync.Once
	defaultsOpts harness.Options // decoded defaults.harness_options
}

// Defaults is the root of the cascade: templates and tasks inherit from it.
type Defaults struct {
	Harness        string
	Model          string
	MaxTurns       *int
	HarnessOptions map[string]any
	Env            map[string]string
	Workspace      string
}

// Settings are what templates and tasks are launched with; both scopes
// have all of them and resolve them the same way.
type Settings struct {
	Workspace        string
	Harness          string
	Model            string
	MaxTurns         *int
	HarnessOptions   map[string]any
	Channels         []string
	DevChannels      []string
	Env              map[string]string
	IdleSuspendAfter string
	QueueMax         *int
	// OnLimit is what a usage limit's reset does about the turn the limit
	// cut (OnLimit* values; "" is OnLimitWait).
	OnLimit string
	// Notify is the scope's own notify: list, used instead of the top
	// level's when NotifySet (an empty list turns notifications off).
	Notify    []Notifier
	NotifySet bool
	// Worktree: each agent (template) or run (one-shot task) gets its own
	// git worktree on its own branch (worktree.go).
	Worktree *bool
}

// Template is a blueprint of agents (templates.<name>): only Settings.
type Template struct {
	Settings
}

// Task is a scheduled prompt (tasks.<name>).
type Task struct {
	Settings
	Schedule     string
	Timezone     string
	PromptFile   string
	Timeout      string
	Retries      *int
	Enabled      *bool
	CatchUp      *bool
	NotifyOnFail bool
	Runtime      string
	Template     string
}

// Web is the web UI and HTTP API section.
type Web struct {
	Enabled      bool
	Bind         string // "" means DefaultWebBind
	Port         *int   // nil means DefaultWebPort
	AllowedHosts []string
}

// Scheduler is the daemon-wide scheduler section; nil fields take the
// defaults (see the accessors).
type Scheduler struct {
	MaxConcurrentRuns *int // headless runs at once, daemon-wide
	HistoryKeep       *int // history records kept per task
	LogsKeep          *int // run logs kept per task
}

// MaxConcurrentRunsOrDefault is scheduler.max_concurrent_runs with the default applied.
func (s Scheduler) MaxConcurrentRunsOrDefault() int {
	return intOr(s.MaxConcurrentRuns, DefaultMaxConcurrentRuns)
}

// HistoryKeepOrDefault is scheduler.history_keep with the default applied.
func (s Scheduler) HistoryKeepOrDefault() int { return intOr(s.HistoryKeep, DefaultHistoryKeep) }

// LogsKeepOrDefault is scheduler.logs_keep with the default applied.
func (s Scheduler) LogsKeepOrDefault() int { return intOr(s.LogsKeep, DefaultLogsKeep) }

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// BindAddr is the configured bind address with the default applied.
func (w Web) BindAddr() string {
	if w.Bind == "" {
		return DefaultWebBind
	}
	return w.Bind
}

// PortNumber is the configured port with the default applied.
func (w Web) PortNumber() int {
	if w.Port == nil {
		return DefaultWebPort
	}
	return *w.Port
}

// Option tunes Parse, Load and Save.
type Option func(*options)

type options struct {
	getenv func(string) string
	create bool // EditScope: add a missing template or task (CreateScope)
}

// WithGetenv replaces os.Getenv as the source of leo's own environment: it
// feeds ${VAR} expansion in env: values and ~ expansion (HOME). Tests use it.
func WithGetenv(getenv func(string) string) Option {
	return func(o *options) { o.getenv = getenv }
}

func buildOptions(opts []Option) options {
	o := options{getenv: os.Getenv}
	for _, fn := range opts {
		fn(&o)
	}
	if o.getenv == nil {
		o.getenv = os.Getenv
	}
	return o
}

// ParseError is a leo.yaml that is not YAML, or not a mapping at the top.
// It carries the file position.
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *ParseError) Error() string {
	file := e.File
	if file == "" {
		file = "leo.yaml"
	}
	if e.Line > 0 && e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", file, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", file, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", file, e.Msg)
}

// Load reads and parses the config file at path. A missing file is an error
// wrapping fs.ErrNotExist.
func Load(path string, opts ...Option) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, opts...)
}

// LoadValid loads path and validates it; warnings do not fail it.
func LoadValid(path string, opts ...Option) (*Config, error) {
	c, err := Load(path, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse reads a leo.yaml held in memory; path names it in errors and its
// directory is the config's home. Only YAML syntax errors and a top level
// that is not a mapping fail Parse; every other problem (wrong types, removed
// sections, bad values) is a finding reported by Validate, so all of them are
// shown at once.
func Parse(data []byte, path string, opts ...Option) (*Config, error) {
	c, _, err := parse(data, path, buildOptions(opts))
	return c, err
}

// parse is Parse that also returns the document tree (nil for an empty
// file), which a scope edit compares before and after.
func parse(data []byte, path string, o options) (*Config, *node, error) {
	c := &Config{
		Path:      path,
		Templates: map[string]*Template{},
		Tasks:     map[string]*Task{},
		getenv:    o.getenv,
	}
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, nil, err
		}
		c.Path = abs
		c.Home = filepath.Dir(abs)
	} else if wd, err := os.Getwd(); err == nil {
		c.Home = wd
	}

	root, err := parseYAML(data, path)
	if err != nil {
		return nil, nil, err
	}
	if isNull(root) {
		return c, root, nil // an empty file is an empty config
	}
	if root.Kind != mappingNode {
		return nil, nil, &ParseError{File: path, Line: root.Line, Column: root.Column,
			Msg: "the top level must be a mapping (defaults:, templates:, tasks:, scheduler:, web:)"}
	}
	d := &decoder{}
	d.config(c, root)
	c.findings = d.findings
	c.pos = indexPositions(root)
	return c, root, nil
}

// TemplateNames lists the templates, sorted.
func (c *Config) TemplateNames() []string { return slices.Sorted(maps.Keys(c.Templates)) }

// TaskNames lists the tasks, sorted.
func (c *Config) TaskNames() []string { return slices.Sorted(maps.Keys(c.Tasks)) }

// MaxConcurrentRuns is how many headless runs the daemon runs at once
// (scheduler.max_concurrent_runs, default 4).
func (c *Config) MaxConcurrentRuns() int { return c.Scheduler.MaxConcurrentRunsOrDefault() }

// HistoryKeep is how many history records are kept per task
// (scheduler.history_keep, default 500).
func (c *Config) HistoryKeep() int { return c.Scheduler.HistoryKeepOrDefault() }

// LogsKeep is how many run logs are kept per task (scheduler.logs_keep,
// default 50).
func (c *Config) LogsKeep() int { return c.Scheduler.LogsKeepOrDefault() }

// WebEnabled reports whether the web UI and HTTP API are on. The MCP bridge
// additionally needs a readable, non-empty state/api.token; checking that is
// the caller's job.
func (c *Config) WebEnabled() bool { return c.Web.Enabled }

// WebAddr is host:port the HTTP server listens on.
func (c *Config) WebAddr() string {
	return joinHostPort(c.Web.BindAddr(), c.Web.PortNumber())
}

// WebLocalURL is the base URL a local client (the MCP server, a hook) uses to
// reach the HTTP server: a wildcard bind is reached over loopback.
func (c *Config) WebLocalURL() string {
	host := c.Web.BindAddr()
	if isWildcard(host) {
		host = "127.0.0.1"
	}
	return "http://" + joinHostPort(host, c.Web.PortNumber())
}

// on_limit: values (docs/agents.md, "Usage limits").
const (
	// OnLimitWait delivers the held queue at the reset, nothing more.
	OnLimitWait = "wait"
	// OnLimitContinue sends "continue" first, as a person would.
	OnLimitContinue = "continue"
	// OnLimitFail fails the held messages with the limit's words.
	OnLimitFail = "fail"
)
