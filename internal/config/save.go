package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/google/renameio/v2"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// saveMu serializes saves within the process, so two web saves cannot
// interleave their validate-then-write steps.
var saveMu sync.Mutex

// Save validates data as the config at path and, only if it has no errors,
// replaces path atomically with mode 0600, creating a missing parent
// directory with mode 0700. On any error the existing file is left
// untouched, byte for byte. The error is a *ParseError or *ValidationError
// for a rejected config.
func Save(path string, data []byte, opts ...Option) error {
	saveMu.Lock()
	defer saveMu.Unlock()

	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	c, err := Parse(data, abs, opts...)
	if err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return err
	}
	return writeAtomic(abs, data)
}

// writeAtomic writes a temp file next to path with mode 0600 exactly, fsyncs
// it and renames it over path. Unlike statefile.Write it does not keep the
// mode of an existing file: leo.yaml may hold secrets in env:, so a file
// someone made group-readable is narrowed again when leo writes it.
//
// A leo.yaml that is a symlink (into a dotfiles repository) stays one: the
// file it points to is replaced, not the link.
func writeAtomic(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	f, err := renameio.NewPendingFile(path,
		renameio.WithTempDir(filepath.Dir(path)),
		renameio.WithStaticPermissions(0o600))
	if err != nil {
		return err
	}
	defer func() { _ = f.Cleanup() }()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}

// DefaultMaxTurns is the turn limit of the first leo.yaml.
const DefaultMaxTurns = 200

// FirstConfig is the one source of the first leo.yaml, which `leo setup`
// writes from its answers and a managed first start writes with every
// default: defaults on harnessName (the built-in harness when "") with
// model (left out when ""), the default turn limit (when the harness has
// one), an assistant template,
// no tasks, and the web section on 127.0.0.1:8370, enabled when web is
// true (agents' leo_* tools and hooks reach the daemon through it). The
// assistant template spells out the harness's template-own options with
// their template defaults (the schema says which), so the file shows them.
func FirstConfig(harnessName, model string, web bool) []byte {
	if harnessName == "" {
		harnessName = harness.Default
	}
	var b strings.Builder
	b.WriteString("# leo configuration — see docs/configuration/reference.md\ndefaults:\n")
	fmt.Fprintf(&b, "  harness: %s\n", yamlScalar(harnessName))
	if model != "" {
		fmt.Fprintf(&b, "  model: %s\n", yamlScalar(model))
	}
	h, known := harness.Lookup(harnessName)
	if known && honorsMaxTurns(h) {
		fmt.Fprintf(&b, "  max_turns: %d\n", DefaultMaxTurns)
	}
	b.WriteString("\ntemplates:\n")
	var own []string
	if known {
		for _, f := range h.OptionsSchema() {
			if f.TemplateOwn && f.TemplateDefault != nil {
				if v, ok := yamlValue(f.TemplateDefault); ok {
					own = append(own, fmt.Sprintf("      %s: %s\n", f.Key, v))
				}
			}
		}
	}
	if len(own) == 0 {
		b.WriteString("  assistant: {}\n")
	} else {
		b.WriteString("  assistant:\n    harness_options:\n")
		for _, line := range own {
			b.WriteString(line)
		}
	}
	b.WriteString("\ntasks: {}\n\nweb:\n")
	fmt.Fprintf(&b, "  enabled: %t\n  bind: %s\n  port: %d\n", web, DefaultWebBind, DefaultWebPort)
	return []byte(b.String())
}

// DefaultConfig is the first leo.yaml with every default (`leo setup
// --defaults`, a managed first start): the built-in harness, its built-in
// default model, and the web UI on loopback. Each call returns a fresh copy.
func DefaultConfig() []byte {
	model := ""
	if h, ok := harness.Lookup(harness.Default); ok {
		model = harness.DefaultModel(h)
	}
	return FirstConfig(harness.Default, model, true)
}

// yamlScalar writes s plain when that reads back as the same string (a
// letter, then letters, digits and -_./, and no word YAML reads as a bool,
// null or number), and double-quoted otherwise. strconv.Quote's escapes
// (\n, \t, \x00, \u2028, …) are all YAML escapes with the same meaning for
// valid UTF-8, which is all leo writes.
func yamlScalar(s string) string {
	plain := s != ""
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter || !(letter || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '/') {
			plain = false
			break
		}
	}
	if plain {
		switch strings.ToLower(s) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
			plain = false
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			plain = false
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

// yamlValue writes a template default of a scalar option type.
func yamlValue(v any) (string, bool) {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x), true
	case string:
		return yamlScalar(x), true
	}
	return "", false
}
