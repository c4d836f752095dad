package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

// The fast decoder and goccy/go-yaml (which explains errors and locates
// findings) read leo configs the same way.
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
		_, fast, err := decodeFast([]byte(in))
		if err != nil {
			t.Errorf("%s: fast decoder: %v", name, err)
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
