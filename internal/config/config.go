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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

	root, err := decodeYAML(data, path)
	if err != nil {
		return nil, err
	}
	c.data = bytes.Clone(data)
	if isNull(root) {
		return c, nil // an empty file is an empty config
	}
	if root.Kind != yamlv3.MappingNode {
		return nil, &ParseError{File: path, Line: root.Line, Column: root.Column,
			Msg: "the top level must be a mapping (defaults:, templates:, tasks:, web:)"}
	}
	d := &decoder{}
	d.config(c, root)
	c.findings = d.findings
	return c, nil
}

// decodeYAML parses the one YAML document in data and returns its root node
// (nil for an empty file), aliases still in place.
//
// Two YAML libraries share the work. go.yaml.in/yaml/v3 parses: it is about
// three times faster than goccy/go-yaml on a large leo.yaml, which is what
// keeps `leo validate` on 1,000 templates and 1,000 tasks within its budget.
// goccy/go-yaml explains: when a file is refused, goccy parses it again and
// its error, with line and column, is the one the user sees.
func decodeYAML(data []byte, path string) (*node, error) {
	root, err := parseFast(data)
	if err == nil {
		return root, nil
	}
	if _, _, _, perr := parseYAML(data, path); perr != nil {
		return nil, perr
	}
	return nil, fastError(path, err) // goccy accepted what yaml.v3 did not
}

// parseFast parses with go.yaml.in/yaml/v3 and rejects what a decoder would:
// a second document, duplicate keys, unknown aliases.
func parseFast(data []byte) (*node, error) {
	if len(data) >= splitThreshold {
		if root, ok := parseSplit(data); ok {
			return root, nil
		}
	}
	return parseWhole(data)
}

func parseWhole(data []byte) (root *node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("cannot parse YAML: %v", r)
		}
	}()
	root, err = parseDocument(data)
	if err != nil || root == nil {
		return nil, err
	}
	if k := duplicateKey(root, 0); k != nil {
		return nil, fmt.Errorf("line %d: mapping key %q already defined", k.Line, k.Value)
	}
	return root, nil
}

// parseDocument parses the single document in data; nil for an empty one.
func parseDocument(data []byte) (*node, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errMultiDoc
	}
	if len(doc.Content) != 1 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// splitThreshold is the size from which a file is parsed in parts.
var splitThreshold = 128 << 10

// parseSplit parses a large leo.yaml in parallel: the text before
// `templates:`, the templates section and the tasks section are parsed as
// separate documents on separate cores and joined into one mapping. It only
// succeeds when each part is a mapping on its own and nothing crosses a cut
// (an alias to an anchor in another part makes that part fail to parse);
// otherwise the caller parses the whole file, which also produces the
// error the user sees.
func parseSplit(data []byte) (root *node, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			root, ok = nil, false
		}
	}()
	if bytes.HasPrefix(data, []byte("%")) || bytes.HasPrefix(data, []byte("---")) ||
		bytes.Contains(data, []byte("\n---")) || bytes.Contains(data, []byte("\n...")) {
		return nil, false // directives or document markers: keep it simple
	}
	var cuts []int
	for _, key := range []string{"templates:", "tasks:"} {
		at := sectionStart(data, key)
		if at < 0 {
			continue
		}
		cuts = append(cuts, at)
	}
	if len(cuts) == 0 {
		return nil, false
	}
	slices.Sort(cuts)
	bounds := append(append([]int{0}, cuts...), len(data))
	parts := make([]*node, len(bounds)-1)
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("%v", r)
				}
			}()
			parts[i], errs[i] = parseDocument(data[bounds[i]:bounds[i+1]])
		}()
	}
	wg.Wait()
	joined := &node{Kind: yamlv3.MappingNode, Tag: "!!map", Line: 1, Column: 1}
	for i, p := range parts {
		if errs[i] != nil {
			return nil, false
		}
		if p == nil {
			continue
		}
		// Only plain block mappings at the left margin join into one.
		if p.Kind != yamlv3.MappingNode || p.Style != 0 || p.Column != 1 || p.Tag != "!!map" || p.Anchor != "" {
			return nil, false
		}
		joined.Content = append(joined.Content, p.Content...)
	}
	if len(joined.Content) == 0 || duplicateKey(joined, 0) != nil {
		return nil, false
	}
	return joined, true
}

// sectionStart finds the one line that starts with key (a top-level key
// followed by a space, a comment or the end of the line); -1 when there is
// none or more than one.
func sectionStart(data []byte, key string) int {
	found := -1
	for off := 0; off < len(data); {
		line := data[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		if bytes.HasPrefix(line, []byte(key)) {
			rest := line[len(key):]
			if len(rest) == 0 || rest[0] == ' ' || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '\t' {
				if found >= 0 {
					return -1
				}
				found = off
			}
		}
		off += len(line)
	}
	return found
}

var errMultiDoc = errors.New("more than one YAML document; leo.yaml holds exactly one")

// duplicateKey finds a key written twice in one mapping anywhere in the
// document (YAML forbids it; decoders reject it).
func duplicateKey(n *node, depth int) *node {
	if n == nil || depth > 10000 {
		return nil
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		keys := n.Content
		for i := 0; i+1 < len(keys); i += 2 {
			k := keys[i]
			if k.Kind == yamlv3.ScalarNode && !isMergeKey(k) {
				if len(keys) <= 32 {
					for j := 0; j < i; j += 2 {
						if keys[j].Kind == yamlv3.ScalarNode && keys[j].Value == k.Value && !isMergeKey(keys[j]) {
							return k
						}
					}
				}
			}
			if dup := duplicateKey(keys[i+1], depth+1); dup != nil {
				return dup
			}
		}
		if len(keys) > 32 {
			seen := make(map[string]bool, len(keys)/2)
			for i := 0; i+1 < len(keys); i += 2 {
				k := keys[i]
				if k.Kind != yamlv3.ScalarNode || isMergeKey(k) {
					continue
				}
				if seen[k.Value] {
					return k
				}
				seen[k.Value] = true
			}
		}
	case yamlv3.SequenceNode, yamlv3.DocumentNode:
		for _, c := range n.Content {
			if dup := duplicateKey(c, depth+1); dup != nil {
				return dup
			}
		}
	}
	return nil
}

// fastError turns a yaml.v3 error ("yaml: line 3: …") into a ParseError.
func fastError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	pe := &ParseError{File: path, Msg: msg}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				pe.Line, pe.Msg = n, tail
			}
		}
	}
	return pe
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
func (c *Config) TemplateNames() []string { return slices.Sorted(maps.Keys(c.Templates)) }

// TaskNames lists the tasks, sorted.
func (c *Config) TaskNames() []string { return slices.Sorted(maps.Keys(c.Tasks)) }

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
