package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// normalize maps generic values onto one shape: string map keys and int64
// integers.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int:
		return int64(x)
	case uint64:
		if x <= 1<<63-1 {
			return int64(x)
		}
	}
	return v
}

// The tree leo builds from goccy's syntax tree (aliases, merges and tags
// applied by leo) reads configs exactly as goccy's own decoder does.
func TestTreeAgreesWithGoccyDecoder(t *testing.T) {
	inputs := map[string]string{}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = string(data)
	}
	inputs["default"] = string(DefaultConfig())
	inputs["anchors"] = "x: &c {harness: codex, model: gpt-5}\ntemplates:\n  a:\n    <<: *c\n    model: o3\n  b: *c\n"
	// Not compared: `<<: [*a, *b]` with a key in both. The YAML merge spec
	// lets the first map listed win (leo does, see entries); goccy's decoder
	// lets the last one win.
	inputs["redefined anchor"] = "a: &x 1\nb: *x\nc: &x 2\nd: *x\n"
	inputs["scalars"] = "a: true\nb: 12\nc: -3\nd: 1.5\ne: ~\nf: \"0 7 * * *\"\ng: 'x'\nh: |\n  line\n  two\ni: >\n  folded\n  text\nj: [1, two, {k: v}]\n"
	inputs["strings that look like other things"] = "a: yes\nb: off\nc: 1.0.0\nd: \"08\"\ne: 2001-12-14\n"
	inputs["tags"] = "a: !!str 123\nb: !!str true\nc: !!int 7\nd: !!float 2\n"
	var big strings.Builder
	big.WriteString("templates:\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&big, "  t%d:\n    harness: opencode\n    harness_options:\n      permission:\n        bash: {\"git *\": allow, \"*\": ask}\n    env: {A: \"${B}\", N: %d}\n", i, i)
	}
	inputs["nested"] = big.String()

	for name, in := range inputs {
		root, err := parseYAML([]byte(in), "leo.yaml")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		ours, err := genericValue(root)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var theirs any
		if err := yaml.Unmarshal([]byte(in), &theirs); err != nil {
			t.Errorf("%s: goccy decoder: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(normalize(ours), normalize(theirs)) {
			t.Errorf("%s: reads differ\nleo:   %#v\ngoccy: %#v", name, normalize(ours), normalize(theirs))
		}
	}
}

// A small file can name a huge value through nested aliases: reading it is
// refused, not expanded.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("defaults:\n  harness: opencode\n  harness_options:\n    permission: {bash: *a8}\n")
	h := newTestHome(t)
	c, err := Parse([]byte(b.String()), h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	wantFinding(t, c, "defaults.harness_options: "+errValueTooLarge.Error())
}

// Merges of merges through shared aliases stay linear: every map is merged
// once (merging it again adds no key), so this file reads at once instead of
// walking 10^15 merges.
func TestNestedMergesAreReadOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("x0: &m0 {model: opus}\n")
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&b, "x%d: &m%d\n  <<: [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*m%d", i-1)
		}
		fmt.Fprintf(&b, "]\n  k%d: v\n", i)
	}
	b.WriteString("templates:\n  t:\n    <<: *m15\n")
	h := newTestHome(t)
	c, err := Parse([]byte(b.String()), h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Templates["t"].Model; got != "opus" {
		t.Fatalf("model %q, want opus merged from 15 levels down", got)
	}
	_ = c.Findings()
}

// An explicit core tag that does not fit its value is a parse error at the
// tag; any other tag is kept and named in findings.
func TestExplicitTags(t *testing.T) {
	_, err := Parse([]byte("defaults:\n  max_turns: !!int lots\n"), "/x/leo.yaml")
	if err == nil || err.Error() != `/x/leo.yaml:2:14: cannot read "lots" as !!int` {
		t.Fatalf("err = %v", err)
	}
	c := parseTestYAML(t, "defaults:\n  model: !custom sonnet\n  max_turns: !!float 3\n")
	wantFinding(t, c, "defaults.model: expected a string, got a value tagged !custom")
	if c.Defaults.MaxTurns == nil || *c.Defaults.MaxTurns != 3 {
		t.Fatalf("max_turns %v", c.Defaults.MaxTurns)
	}
}
