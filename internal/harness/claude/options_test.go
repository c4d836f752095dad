package claude

import (
	"reflect"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestSchemaIsTheSevenOptions(t *testing.T) {
	var keys []string
	types := map[string]harness.OptionType{}
	for _, f := range (Claude{}).OptionsSchema() {
		keys = append(keys, f.Key)
		types[f.Key] = f.Type
	}
	want := []string{"permission_mode", "bypass_permissions", "remote_control", "agent", "allowed_tools", "disallowed_tools", "append_system_prompt"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	wantTypes := map[string]harness.OptionType{
		"permission_mode": harness.OptionEnum, "bypass_permissions": harness.OptionBool,
		"remote_control": harness.OptionBool, "agent": harness.OptionString,
		"allowed_tools": harness.OptionStringList, "disallowed_tools": harness.OptionStringList,
		"append_system_prompt": harness.OptionText,
	}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Fatalf("types %v", types)
	}
	for _, f := range (Claude{}).OptionsSchema() {
		if f.Key == "agent" && f.Source != "agents" {
			t.Fatalf("agent Source = %q, want agents", f.Source)
		}
		if f.Key == "permission_mode" && !reflect.DeepEqual(f.EnumValues, []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}) {
			t.Fatalf("permission modes %v", f.EnumValues)
		}
	}
}

func TestDecodeOptionsSpecTexts(t *testing.T) {
	harnesstest.DecodeErrors(t, Claude{}, map[string]harnesstest.DecodeError{
		"unknown": {Raw: map[string]any{"foo": "x"},
			Want: `unknown option "foo" (valid: agent, allowed_tools, append_system_prompt, bypass_permissions, disallowed_tools, permission_mode, remote_control)`},
		"enum": {Raw: map[string]any{"permission_mode": "yolo"},
			Want: `option "permission_mode": invalid value "yolo" (valid: acceptEdits, auto, bypassPermissions, default, dontAsk, plan)`},
		"type": {Raw: map[string]any{"allowed_tools": "Read"},
			Want: `option "allowed_tools": expected a list of strings, got string`},
	})
}

func TestDecodeOptionsSeedExample(t *testing.T) {
	got, err := Claude{}.DecodeOptions(map[string]any{
		"permission_mode":  "acceptEdits",
		"remote_control":   true,
		"agent":            "leo",
		"allowed_tools":    []any{"Read", "Edit", "Bash"},
		"disallowed_tools": []any{"WebFetch"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := harness.Options{
		"permission_mode": "acceptEdits", "remote_control": true, "agent": "leo",
		"allowed_tools": []string{"Read", "Edit", "Bash"}, "disallowed_tools": []string{"WebFetch"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func TestValidateModel(t *testing.T) {
	harnesstest.Models(t, Claude{},
		[]string{"", "sonnet", "opus", "haiku", "sonnet[1m]", "opus[1m]"},
		[]string{"gpt-5", "Sonnet", "claude-sonnet-4-5", " sonnet", "haiku[1m]"})
	if !reflect.DeepEqual(ValidModels(), []string{"sonnet", "opus", "haiku", "sonnet[1m]", "opus[1m]"}) {
		t.Fatalf("ValidModels = %v", ValidModels())
	}
	ValidModels()[0] = "mutated"
	if ValidModels()[0] != "sonnet" {
		t.Fatal("ValidModels exposes its backing array")
	}
}
