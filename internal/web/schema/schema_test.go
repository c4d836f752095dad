package schema

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/all" // registers the adapters
	"github.com/blackpaw-studio/leo/internal/harness/claude"
)

func lookup(t *testing.T, name string) harness.Harness {
	t.Helper()
	h, ok := harness.Lookup(name)
	if !ok {
		t.Fatalf("no harness %s", name)
	}
	return h
}

func TestTryForHarnessesIsInheritThenTheRegisteredNames(t *testing.T) {
	got, ok := TryFor(SourceHarnesses)
	want := []Choice{{Value: "", Label: "inherit"}}
	for _, n := range harness.Names() {
		want = append(want, Choice{Value: n, Label: n})
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("TryFor = %+v, want %+v", got, want)
	}
	if _, ok := TryFor("nope"); ok {
		t.Fatal("an unknown source resolved")
	}
}

func byKey(cs []Control) map[string]Control {
	out := map[string]Control{}
	for _, c := range cs {
		out[c.Key] = c
	}
	return out
}

func selected(c Control) Choice {
	for _, ch := range c.Choices {
		if ch.Selected {
			return ch
		}
	}
	return Choice{}
}

// One control per OptionType, in schema order, with the scope's own
// values and the inherited ones as placeholders.
func TestControlsPerOptionType(t *testing.T) {
	h := lookup(t, "claude")
	cs := Controls(OptionsInput{
		Harness:   h,
		Own:       map[string]any{"permission_mode": "plan", "allowed_tools": []any{"Read", "Edit"}},
		Inherited: map[string]any{"permission_mode": "default", "bypass_permissions": false, "agent": "leo", "disallowed_tools": []any{"WebFetch"}, "append_system_prompt": "be brief", "remote_control": false},
		Template:  true,
		Source: func(source string) ([]string, bool) {
			return []string{"leo", "reviewer"}, source == SourceAgents
		},
	})
	var keys []string
	for _, c := range cs {
		keys = append(keys, c.Key)
	}
	var schemaKeys []string
	for _, f := range h.OptionsSchema() {
		schemaKeys = append(schemaKeys, f.Key)
	}
	if !reflect.DeepEqual(keys, schemaKeys) {
		t.Fatalf("keys %q, want the schema's %q", keys, schemaKeys)
	}
	m := byKey(cs)
	pm := m["permission_mode"]
	if pm.Kind != KindEnum || pm.Choices[0].Label != "inherit (default)" || selected(pm).Value != "plan" || pm.Name != "opt.permission_mode" || pm.ID != "opt-permission_mode" {
		t.Errorf("permission_mode: %+v", pm)
	}
	bp := m["bypass_permissions"]
	if bp.Kind != KindBool || len(bp.Choices) != 3 || bp.Choices[0].Label != "inherit (off)" || bp.Choices[1].Value != "on" || bp.Choices[2].Value != "off" || selected(bp).Value != "" {
		t.Errorf("bypass_permissions: %+v", bp)
	}
	// remote_control is template-own: a template inherits its template
	// default, never the defaults' value.
	if rc := m["remote_control"]; rc.Choices[0].Label != "inherit (on)" {
		t.Errorf("remote_control: %+v", rc)
	}
	if a := m["agent"]; a.Kind != KindString || a.ListID != "opt-agent-options" || !reflect.DeepEqual(a.Suggestions, []string{"leo", "reviewer"}) || a.Placeholder != "inherit: leo" {
		t.Errorf("agent: %+v", a)
	}
	if at := m["allowed_tools"]; at.Kind != KindList || at.Value != "Read, Edit" || at.Placeholder != "" {
		t.Errorf("allowed_tools: %+v", at)
	}
	if dt := m["disallowed_tools"]; dt.Placeholder != "inherit: WebFetch" {
		t.Errorf("disallowed_tools: %+v", dt)
	}
	if sp := m["append_system_prompt"]; sp.Kind != KindText || sp.Placeholder != "inherit: be brief" {
		t.Errorf("append_system_prompt: %+v", sp)
	}

	// No inheritance (another harness than the defaults', or the defaults
	// form): plain "inherit", no placeholders; an unresolvable source is a
	// plain input.
	for _, c := range Controls(OptionsInput{Harness: h, Source: func(string) ([]string, bool) { return nil, false }}) {
		if c.Placeholder != "" || c.ListID != "" || (c.Choices != nil && c.Choices[0].Label != "inherit") {
			t.Errorf("%s: %+v", c.Key, c)
		}
	}
}

func TestControlsYAMLMap(t *testing.T) {
	cs := Controls(OptionsInput{Harness: lookup(t, "opencode"),
		Own: map[string]any{"permission": map[string]any{"edit": "ask", "bash": map[string]any{"*": "ask"}}}})
	if len(cs) != 1 || cs[0].Kind != KindYAMLMap || cs[0].Rows != 4 || cs[0].Key != "permission" {
		t.Fatalf("controls %+v", cs)
	}
	back, err := ApplyHarnessOptions(lookup(t, "opencode"), url.Values{"opt.permission": {cs[0].Value}})
	if err != nil || !reflect.DeepEqual(back["permission"], map[string]any{"edit": "ask", "bash": map[string]any{"*": "ask"}}) {
		t.Fatalf("round trip of %q: %#v %v", cs[0].Value, back, err)
	}
}

func TestApplyHarnessOptions(t *testing.T) {
	h := lookup(t, "claude")
	got, err := ApplyHarnessOptions(h, url.Values{
		"opt.permission_mode":      {"acceptEdits"},
		"opt.bypass_permissions":   {"off"},
		"opt.remote_control":       {""}, // inherit: unset
		"opt.agent":                {"  leo "},
		"opt.allowed_tools":        {"Read, Edit ,, Bash(git *)"},
		"opt.disallowed_tools":     {" , "},
		"opt.append_system_prompt": {"line 1\r\nline 2: # not a comment\r\n"},
		"opt.unknown":              {"ignored"},
	})
	want := map[string]any{
		"permission_mode": "acceptEdits", "bypass_permissions": false, "agent": "leo",
		"allowed_tools": []string{"Read", "Edit", "Bash(git *)"}, "append_system_prompt": "line 1\nline 2: # not a comment\n",
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, %v\nwant %#v", got, err, want)
	}
	if _, err := h.DecodeOptions(got); err != nil {
		t.Fatalf("the adapter rejects what the form made: %v", err)
	}
	if _, err := ApplyHarnessOptions(h, url.Values{"opt.remote_control": {"maybe"}}); err == nil ||
		err.Error() != `harness_options.remote_control: expected inherit, on or off, got "maybe"` {
		t.Fatalf("err = %v", err)
	}
	_, err = ApplyHarnessOptions(lookup(t, "opencode"), url.Values{"opt.permission": {"edit: [unclosed"}})
	if err == nil || !strings.HasPrefix(err.Error(), "harness_options.permission: not a YAML mapping: ") {
		t.Fatalf("err = %v", err)
	}
	if got, err := ApplyHarnessOptions(lookup(t, "opencode"), url.Values{"opt.permission": {"{}"}}); err != nil || len(got) != 0 {
		t.Fatalf("an empty map is set: %#v %v", got, err)
	}
}

// The model input: claude's valid models as suggestions; a format hint for
// the free-form harnesses (docs/configuration/harnesses.md, word for word).
func TestModelSuggestionsAndPlaceholder(t *testing.T) {
	if got := ModelSuggestions("claude"); !reflect.DeepEqual(got, claude.ValidModels()) {
		t.Errorf("claude suggestions %q", got)
	}
	for name, want := range map[string]string{"claude": "", "codex": "e.g. gpt-5.3-codex", "opencode": "provider/model, e.g. anthropic/claude-sonnet-5", "nope": ""} {
		if got := ModelPlaceholder(name); got != want {
			t.Errorf("ModelPlaceholder(%s) = %q, want %q", name, got, want)
		}
		if name != "claude" && ModelSuggestions(name) != nil {
			t.Errorf("%s has model suggestions", name)
		}
	}
}
