package opencode

import (
	"reflect"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestDecodeOptionsSpecTexts(t *testing.T) {
	harnesstest.DecodeErrors(t, Opencode{}, map[string]harnesstest.DecodeError{
		"append_system_prompt": {Raw: map[string]any{"append_system_prompt": "hi"},
			Want: `option "append_system_prompt" is not supported: opencode has no append-system-prompt equivalent (use AGENTS.md or the instructions config)`},
		"unknown": {Raw: map[string]any{"sandbox": "read-only"},
			Want: `unknown option "sandbox" (valid: permission)`},
		"type": {Raw: map[string]any{"permission": "allow"},
			Want: `option "permission": expected a map, got string`},
	})
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
	harnesstest.Models(t, Opencode{},
		[]string{"", "anthropic/claude-sonnet-4-5", "openrouter/meta/llama"},
		[]string{"sonnet", "/x", "x/", "anthropic/claude sonnet", " a/b"})
}
