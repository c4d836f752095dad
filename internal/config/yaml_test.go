package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	"pgregory.net/rapid"
)

// normalize maps both decoders' generic values onto one shape: string map
// keys and int64 integers.
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

// yaml.v3 (which parses) and goccy/go-yaml (which explains errors) read
// leo configs the same way.
func TestFastDecoderAgreesWithGoccy(t *testing.T) {
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
	inputs["scalars"] = "a: true\nb: 12\nc: -3\nd: 1.5\ne: ~\nf: \"0 7 * * *\"\ng: 'x'\nh: |\n  line\n  two\ni: >\n  folded\n  text\nj: [1, two, {k: v}]\n"
	inputs["strings that look like other things"] = "a: yes\nb: off\nc: 1.0.0\nd: \"08\"\ne: 1_000\n"
	var big strings.Builder
	big.WriteString("templates:\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&big, "  t%d:\n    harness: opencode\n    harness_options:\n      permission:\n        bash: {\"git *\": allow, \"*\": ask}\n    env: {A: \"${B}\", N: %d}\n", i, i)
	}
	inputs["nested"] = big.String()

	for name, in := range inputs {
		root, err := parseFast([]byte(in))
		if err != nil {
			t.Errorf("%s: yaml.v3: %v", name, err)
			continue
		}
		var fast any
		if err := root.Decode(&fast); err != nil {
			t.Errorf("%s: yaml.v3 decode: %v", name, err)
			continue
		}
		_, _, slow, err := parseYAML([]byte(in), "leo.yaml")
		if err != nil {
			t.Errorf("%s: goccy: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(normalize(fast), normalize(slow)) {
			t.Errorf("%s: decoders disagree\nfast: %#v\ngoccy: %#v", name, normalize(fast), normalize(slow))
		}
	}
}

// fatalT is what checkSplit needs of *testing.T and *rapid.T.
type fatalT interface {
	Helper()
	Fatalf(format string, args ...any)
}

// sameTree compares two parsed trees, ignoring positions (the parts of a
// split parse count lines from their own start) and comments.
func sameTree(a, b *node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Style != b.Style ||
		a.Anchor != b.Anchor || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yamlv3.AliasNode {
		return (a.Alias == nil) == (b.Alias == nil) && (a.Alias == nil || a.Alias.Anchor == b.Alias.Anchor)
	}
	for i := range a.Content {
		if !sameTree(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// checkSplit asserts the split parse, when it accepts data, reads exactly
// what the whole-file parse reads.
func checkSplit(t fatalT, data []byte) bool {
	t.Helper()
	split, ok := parseSplit(data)
	if !ok {
		return false
	}
	whole, err := parseWhole(data)
	if err != nil {
		t.Fatalf("split parse accepted what the whole parse refuses (%v):\n%s", err, data)
	}
	if !sameTree(split, whole) {
		t.Fatalf("split and whole parses differ:\n%s", data)
	}
	return true
}

func TestSplitParseMatchesWholeParse(t *testing.T) {
	accepted := map[string]string{
		"sections":            "defaults:\n  model: sonnet\ntemplates:\n  a: {harness: codex}\ntasks:\n  t:\n    schedule: 0 7 * * *\nweb:\n  enabled: true\n",
		"tasks first":         "# c\ntasks:\n  t: {}\nweb: {port: 1}\ntemplates: # trailing comment\n  a:\n    env:\n      X: |\n        line\n",
		"crlf":                "templates:\r\n  a: {}\r\ntasks:\r\n  b: {}\r\n",
		"a section is a list": "templates:\n- a\ntasks: {}\n",
	}
	for name, y := range accepted {
		if !checkSplit(t, []byte(y)) {
			t.Errorf("%s: split parse refused", name)
		}
	}
	refused := map[string]string{
		"anchor across parts":      "x: &a {harness: codex}\ntemplates:\n  a: *a\n",
		"duplicate section":        "templates: {}\ntasks: {}\ntemplates: {}\n",
		"flow across the cut":      "web: {a: 1,\ntemplates: 2}\n",
		"no sections":              "defaults: {}\n",
		"document marker":          "templates: {}\n---\ntasks: {}\n",
		"trailing document marker": "templates: x\ntasks: {}\n---\n",
	}
	for name, y := range refused {
		if checkSplit(t, []byte(y)) {
			t.Errorf("%s: split parse accepted", name)
		}
	}
}

// Random leo-shaped files: whenever the split parse accepts one, it reads it
// exactly as the whole-file parse does.
func TestPropertySplitParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pieces := []string{
			"defaults:\n  model: sonnet\n",
			"templates:\n  a:\n    env: {X: \"1\"}\n  b: {harness: codex}\n",
			"tasks:\n  t:\n    schedule: 0 7 * * *\n    prompt_file: p.md\n",
			"web:\n  enabled: true\n",
			"# comment\n",
			"x-anchor: &shared {model: opus}\n",
			"templates:\n  c: *shared\n",
			"tasks: {u: {timeout: 5m}}\n",
			"note: |\n  templates: not a key\n  tasks: nor this\n",
			"web: {a: 1,\n  b: 2}\n",
			"tasks:\n  v:\n    env:\n      <<: {A: b}\n",
			"templates: [x]\n",
			"\n",
		}
		n := rapid.IntRange(1, 6).Draw(t, "n")
		var b strings.Builder
		for range n {
			b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
		}
		checkSplit(t, []byte(b.String()))
	})
}
