package pi

import (
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func TestValidateModel(t *testing.T) {
	for _, ok := range []string{"", "anthropic/claude-sonnet-4-5", "openai/gpt-4o:high", "ollama/llama3.1:8b", "leotest/leo-test-model"} {
		if err := (Pi{}).ValidateModel(ok); err != nil {
			t.Errorf("ValidateModel(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"sonnet", "/x", "openai/", "a b/c", "openai/:high"} {
		err := Pi{}.ValidateModel(bad)
		if err == nil || !strings.Contains(err.Error(), "provider/id") {
			t.Errorf("ValidateModel(%q) = %v", bad, err)
		}
	}
}

func TestOptionsReachArgv(t *testing.T) {
	opts, err := Pi{}.DecodeOptions(map[string]any{"thinking": "high", "tools": []any{"read", "grep"}, "append_system_prompt": "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	spec := harness.LaunchSpec{Workspace: "/w", Options: opts, Model: "openai/gpt-4o", Env: map[string]string{"HOME": "/h", AgentDirEnv: "", SessionDirEnv: ""},
		Bridge: &harness.MCPBridge{Command: "/opt/leo bin/leo"}}
	cmd, err := Pi{}.Interactive(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pi", "--model", "openai/gpt-4o", "--thinking", "high", "--tools", "read,grep", "--append-system-prompt", "Be brief.", "--append-system-prompt"}
	if !slices.Equal(cmd.Argv[:len(want)], want) {
		t.Fatalf("argv %q", cmd.Argv)
	}
	nudge := cmd.Argv[len(want)]
	if !strings.Contains(nudge, "'/opt/leo bin/leo' agent send") || !strings.Contains(nudge, "[message from ") {
		t.Errorf("nudge %q", nudge)
	}
	if _, err := (Pi{}).DecodeOptions(map[string]any{"thinking": "huge"}); err == nil {
		t.Error("thinking: huge accepted")
	}
	if _, err := (Pi{}).Interactive(harness.LaunchSpec{Workspace: "/w", SessionID: "../x", Resume: true}); err == nil {
		t.Error("a path as a session id accepted")
	}
	if _, err := (Pi{}).Interactive(harness.LaunchSpec{Workspace: "/w", SessionID: tuiID}); err == nil {
		t.Error("a chosen id for a fresh session accepted")
	}
}
