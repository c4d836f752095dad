// Package config is leo's configuration layer: the types of leo.yaml, the
// loader, the harness cascade that resolves each template and task into a
// plain launch spec, the one Validate used by the CLI, the daemon and web
// saves, and the atomic Save. It runs no programs; the only files it touches
// are leo.yaml itself and, during validation, task prompt files.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Built-in defaults of fields a scope leaves unset.
const (
	DefaultTaskTimeout = "30m"
	DefaultQueueMax    = 5
	DefaultWebBind     = "127.0.0.1"
	DefaultWebPort     = 8370

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

	getenv   func(string) string
	data     []byte    // the file's bytes, re-parsed only to locate findings
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

// Template is a blueprint of agents (templates.<name>).
type Template struct {
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
}

// Task is a scheduled prompt (tasks.<name>).
type Task struct {
	Schedule         string
	Timezone         string
	PromptFile       string
	Workspace        string
	Harness          string
	Model            string
	MaxTurns         *int
	HarnessOptions   map[string]any
	Channels         []string
	DevChannels      []string
	Env              map[string]string
	Timeout          string
	Retries          *int
	Enabled          *bool
	NotifyOnFail     bool
	Runtime          string
	Template         string
	QueueMax         *int
	IdleSuspendAfter string
}

// Web is the web UI and HTTP API section.
type Web struct {
	Enabled      bool
	Bind         string // "" means DefaultWebBind
	Port         *int   // nil means DefaultWebPort
	AllowedHosts []string
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
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", file, e.Line, e.Column, e.Msg)
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
	o := buildOptions(opts)
	c := &Config{
		Path:      path,
		Templates: map[string]*Template{},
		Tasks:     map[string]*Task{},
		getenv:    o.getenv,
	}
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		c.Path = abs
		c.Home = filepath.Dir(abs)
	} else if wd, err := os.Getwd(); err == nil {
		c.Home = wd
	}

	doc, raw, err := decodeYAML(data, path)
	if err != nil {
		return nil, err
	}
	c.data = bytes.Clone(data)
	if raw == nil {
		return c, nil // an empty file is an empty config
	}
	top, ok := asStringMap(raw)
	if !ok {
		pe := &ParseError{File: path, Line: 1, Column: 1,
			Msg: "the top level must be a mapping (defaults:, templates:, tasks:, web:)"}
		if _, body, _, err := parseYAML(data, path); err == nil && body != nil {
			if tk := body.GetToken(); tk != nil && tk.Position != nil {
				pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
			}
		}
		return nil, pe
	}
	d := &decoder{src: doc}
	d.config(c, top)
	c.findings = d.findings
	return c, nil
}

// decodeYAML returns the generic value of the one YAML document in data
// (nil for an empty file), with aliases and merge keys resolved.
//
// Two YAML libraries share the work. go.yaml.in/yaml/v3 decodes: it is
// about three times faster than goccy/go-yaml on a large leo.yaml, which is
// what keeps `leo validate` on 1,000 templates and 1,000 tasks within its
// budget. goccy/go-yaml reports: when the fast decoder refuses the file,
// goccy parses it again and its error, with line and column, is the one the
// user sees; findings are located through goccy's syntax tree as well.
func decodeYAML(data []byte, path string) (*yamlv3.Node, any, error) {
	doc, raw, err := decodeFast(data)
	if err == nil {
		return doc, raw, nil
	}
	_, body, raw, perr := parseYAML(data, path)
	if perr != nil {
		return nil, nil, perr
	}
	if body == nil {
		return nil, nil, nil
	}
	return nil, raw, nil // goccy accepted what the fast decoder did not
}

var errMultiDoc = errors.New("more than one YAML document")

// decodeFast decodes with go.yaml.in/yaml/v3 and also returns the document
// node, from which env: values are read as written (see decoder.env).
func decodeFast(data []byte) (doc *yamlv3.Node, raw any, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, raw, err = nil, nil, fmt.Errorf("cannot parse YAML: %v", r)
		}
	}()
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	doc = &yamlv3.Node{}
	if err := dec.Decode(doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	var next yamlv3.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, nil, errMultiDoc
	}
	if err := doc.Decode(&raw); err != nil {
		return nil, nil, err
	}
	return doc, raw, nil
}

// asStringMap accepts a YAML mapping with any scalar keys.
func asStringMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[fmt.Sprint(k)] = e
		}
		return out, true
	}
	return nil, false
}

// parseYAML parses data with goccy/go-yaml into its syntax tree and generic
// value; it is the slow path that explains errors and locates findings.
func parseYAML(data []byte, path string) (file *ast.File, body ast.Node, raw any, err error) {
	// The YAML library is third-party code fed with user input; a panic in
	// it must become an error, never take the daemon down.
	defer func() {
		if r := recover(); r != nil {
			file, body, raw = nil, nil, nil
			err = &ParseError{File: path, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}
		}
	}()
	file, err = parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, nil, yamlError(path, err)
	}
	if len(file.Docs) > 1 {
		return nil, nil, nil, &ParseError{File: path, Line: docLine(file.Docs[1]), Column: 1,
			Msg: "more than one YAML document; leo.yaml holds exactly one"}
	}
	if len(file.Docs) == 1 {
		body = file.Docs[0].Body
	}
	if body == nil {
		return file, nil, nil, nil
	}
	if err := yaml.NodeToValue(body, &raw); err != nil {
		return nil, nil, nil, yamlError(path, err)
	}
	return file, body, raw, nil
}

func docLine(doc *ast.DocumentNode) int {
	if doc == nil {
		return 0
	}
	if doc.Start != nil && doc.Start.Position != nil {
		return doc.Start.Position.Line
	}
	if tk := doc.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// yamlError turns a go-yaml error into a ParseError with the position.
func yamlError(path string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe := &ParseError{File: path, Msg: ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
		}
		return pe
	}
	return &ParseError{File: path, Msg: err.Error()}
}

// TemplateNames lists the templates, sorted.
func (c *Config) TemplateNames() []string { return sortedKeys(c.Templates) }

// TaskNames lists the tasks, sorted.
func (c *Config) TaskNames() []string { return sortedKeys(c.Tasks) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

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
