package opencode

import (
	"reflect"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func TestRegistered(t *testing.T) {
	h, ok := harness.Lookup("opencode")
	if !ok {
		t.Fatal("opencode is not registered")
	}
	if h.Binary() != "opencode" || h.SupportsChannels() {
		t.Fatalf("Binary=%q SupportsChannels=%v", h.Binary(), h.SupportsChannels())
	}
	for _, k := range []harness.Kind{harness.KindTask, harness.KindAgent, harness.KindPersistent} {
		if !h.SupportsKind(k) {
			t.Errorf("SupportsKind(%s) = false", k)
		}
	}
}

func TestDecodeOptionsSpecTexts(t *testing.T) {
	cases := map[string]struct {
		raw  map[string]any
		want string
	}{
		"append_system_prompt": {map[string]any{"append_system_prompt": "hi"},
			`option "append_system_prompt" is not supported: opencode has no append-system-prompt equivalent (use AGENTS.md or the instructions config)`},
		"unknown": {map[string]any{"sandbox": "read-only"},
			`unknown option "sandbox" (valid: permission)`},
		"type": {map[string]any{"permission": "allow"},
			`option "permission": expected a map, got string`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Opencode{}.DecodeOptions(c.raw)
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestDecodeOptionsSeedExample(t *testing.T) {
	got, err := Opencode{}.DecodeOptions(map[string]any{
		"permission": map[string]any{"bash": "ask", "edit": "allow"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := harness.Options{"permission": map[string]any{"bash": "ask", "edit": "allow"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func TestValidateModel(t *testing.T) {
	for _, m := range []string{"", "anthropic/claude-sonnet-4-5", "openrouter/meta/llama"} {
		if err := (Opencode{}).ValidateModel(m); err != nil {
			t.Errorf("ValidateModel(%q) = %v", m, err)
		}
	}
	for _, m := range []string{"sonnet", "/x", "x/", "anthropic/claude sonnet", " a/b"} {
		if err := (Opencode{}).ValidateModel(m); err == nil {
			t.Errorf("ValidateModel(%q) accepted", m)
		}
	}
}
