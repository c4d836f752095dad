package config

import (
	"reflect"
	"testing"

	"github.com/goccy/go-yaml"
	"pgregory.net/rapid"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// genOptions draws a valid harness_options map for h from its own schema, so
// the properties hold for any registered adapter.
func genOptions(t *rapid.T, h harness.Harness, label string) map[string]any {
	out := map[string]any{}
	for _, f := range h.OptionsSchema() {
		if !rapid.Bool().Draw(t, label+"."+f.Key+"?") {
			continue
		}
		var v any
		switch f.Type {
		case harness.OptionBool:
			v = rapid.Bool().Draw(t, label+"."+f.Key)
		case harness.OptionEnum:
			v = rapid.SampledFrom(f.EnumValues).Draw(t, label+"."+f.Key)
		case harness.OptionString, harness.OptionText:
			v = rapid.StringMatching(`[a-z][a-z ]{0,8}`).Draw(t, label+"."+f.Key)
		case harness.OptionStringList:
			v = rapid.SliceOfN(rapid.StringMatching(`[A-Z][a-z]{0,6}`), 0, 3).Draw(t, label+"."+f.Key)
		case harness.OptionYAMLMap:
			v = rapid.MapOfN(rapid.StringMatching(`[a-z]{1,5}`), rapid.SampledFrom([]string{"ask", "allow", "deny"}), 1, 3).Draw(t, label+"."+f.Key)
		default:
			t.Fatalf("no generator for %s", f.Type)
		}
		out[f.Key] = v
	}
	return out
}

// genModel draws a model the adapter accepts ("" included).
func genModel(t *rapid.T, h harness.Harness, label string) string {
	var ok []string
	for _, m := range []string{"", "sonnet", "opus", "haiku", "gpt-5.3-codex", "anthropic/claude-sonnet-4-5", "openai/gpt-5"} {
		if h.ValidateModel(m) == nil {
			ok = append(ok, m)
		}
	}
	return rapid.SampledFrom(ok).Draw(t, label)
}

func orDefault(name string) string {
	if name == "" {
		return harness.Default
	}
	return name
}

// canonical makes drawn values comparable with decoded ones.
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]string:
		out := map[string]any{}
		for k, e := range x {
			out[k] = e
		}
		return out
	case []string:
		if x == nil {
			return []string{}
		}
	}
	return v
}

// withDrawn sets the harness, harness_options and model keys of a scope's
// YAML map to what was drawn, leaving out what was drawn empty.
func withDrawn(scope map[string]any, harnessName string, opts map[string]any, model string) map[string]any {
	if harnessName != "" {
		scope["harness"] = harnessName
	}
	if len(opts) > 0 {
		scope["harness_options"] = opts
	}
	if model != "" {
		scope["model"] = model
	}
	return scope
}

func TestPropertyMergeRules(t *testing.T) {
	names := append([]string{""}, harness.Names()...)
	rapid.Check(t, func(t *rapid.T) {
		dName := rapid.SampledFrom(names).Draw(t, "defaults.harness")
		sName := rapid.SampledFrom(names).Draw(t, "scope.harness")
		isTemplate := rapid.Bool().Draw(t, "template")
		dh, _ := harness.Lookup(orDefault(dName))
		resolved := orDefault(sName)
		if sName == "" {
			resolved = orDefault(dName)
		}
		sh, _ := harness.Lookup(resolved)

		dOpts := genOptions(t, dh, "defaults")
		sOpts := genOptions(t, sh, "scope")
		dModel := genModel(t, dh, "defaults.model")
		sModel := genModel(t, sh, "scope.model")

		defaults := withDrawn(map[string]any{}, dName, dOpts, dModel)
		scope := withDrawn(map[string]any{"prompt_file": "p.md"}, sName, sOpts, sModel)
		section := "tasks"
		if isTemplate {
			section = "templates"
		}
		data, err := yaml.Marshal(map[string]any{"defaults": defaults, section: map[string]any{"s": scope}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(data, "/nonexistent/leo.yaml", WithGetenv(func(string) string { return "/nonexistent" }))
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, data)
		}
		var r *Resolved
		if isTemplate {
			r, err = c.ResolveTemplate("s")
		} else {
			r, err = c.ResolveTask("s")
		}
		if err != nil {
			t.Fatalf("resolve: %v\n%s", err, data)
		}

		// The harness cascade: scope → defaults → claude.
		if r.HarnessName != resolved || r.HarnessInherited != (sName == "") {
			t.Fatalf("harness %s (inherited %v), want %s", r.HarnessName, r.HarnessInherited, resolved)
		}
		sameHarness := resolved == orDefault(dName)

		// Every key the scope sets wins, whole.
		for k, v := range sOpts {
			if !reflect.DeepEqual(canonical(r.Options[k]), canonical(v)) || r.OptionsInherited[k] {
				t.Fatalf("own %s = %#v, resolved %#v (inherited %v)", k, v, r.Options[k], r.OptionsInherited[k])
			}
		}
		// templateOwn: a key the schema keeps out of a template's inheritance.
		templateOwn := func(k string) (harness.OptionField, bool) {
			f, ok := field(sh.OptionsSchema(), k)
			return f, ok && isTemplate && f.TemplateOwn
		}
		for k, v := range r.Options {
			if _, own := sOpts[k]; own {
				continue
			}
			f, tplOwn := templateOwn(k)
			switch {
			case tplOwn:
				// Never from defaults; unset means the schema's template default.
				if f.TemplateDefault == nil || !reflect.DeepEqual(v, f.TemplateDefault) || !r.OptionsInherited[k] {
					t.Fatalf("template-own %s = %#v, want the template default %#v", k, v, f.TemplateDefault)
				}
			case !sameHarness:
				t.Fatalf("%s leaked from the %s defaults into a %s scope", k, orDefault(dName), resolved)
			default:
				dv, ok := dOpts[k]
				if !ok || !reflect.DeepEqual(canonical(v), canonical(dv)) || !r.OptionsInherited[k] {
					t.Fatalf("inherited %s = %#v, defaults have %#v", k, v, dv)
				}
			}
		}
		if sameHarness {
			for k := range dOpts {
				if _, tplOwn := templateOwn(k); tplOwn {
					continue
				}
				if _, ok := r.Options[k]; !ok {
					t.Fatalf("defaults key %s not inherited", k)
				}
			}
		}
		for _, f := range sh.OptionsSchema() {
			if _, tplOwn := templateOwn(f.Key); tplOwn && f.TemplateDefault != nil {
				if _, ok := r.Options[f.Key]; !ok {
					t.Fatalf("template-own %s missing", f.Key)
				}
			}
		}

		// Cross-harness model cascade: own, then (same harness only)
		// defaults.model, then the harness's built-in default.
		wantModel := sModel
		if wantModel == "" && sameHarness {
			wantModel = dModel
		}
		if wantModel == "" && sameHarness {
			wantModel = harness.DefaultModel(sh)
		}
		if r.Model != wantModel {
			t.Fatalf("model %q, want %q", r.Model, wantModel)
		}
		if isTemplate {
			if got := c.TemplateModel("s"); got != wantModel {
				t.Fatalf("TemplateModel %q, want %q", got, wantModel)
			}
		} else if got := c.TaskModel("s"); got != wantModel {
			t.Fatalf("TaskModel %q, want %q", got, wantModel)
		}
	})
}

// Env merges key by key too, and expansion only reads leo's environment.
func TestPropertyEnvMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringMatching(`[A-Z][A-Z0-9_]{0,6}`)
		val := rapid.StringMatching(`[a-z0-9/:.]{0,10}`)
		dEnv := rapid.MapOfN(key, val, 0, 4).Draw(t, "defaults.env")
		sEnv := rapid.MapOfN(key, val, 0, 4).Draw(t, "scope.env")
		data, err := yaml.Marshal(map[string]any{
			"defaults":  map[string]any{"env": dEnv},
			"templates": map[string]any{"s": map[string]any{"env": sEnv}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(data, "/nonexistent/leo.yaml", WithGetenv(func(string) string { return "" }))
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.ResolveTemplate("s")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for k, v := range dEnv {
			want[k] = v
		}
		for k, v := range sEnv {
			want[k] = v
		}
		if !reflect.DeepEqual(r.Env, want) || len(r.EnvKeys) != len(want) {
			t.Fatalf("env %v, want %v", r.Env, want)
		}
	})
}
