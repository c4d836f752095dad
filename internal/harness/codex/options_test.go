package codex

import (
	"reflect"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

func TestDecodeOptionsSpecTexts(t *testing.T) {
	harnesstest.DecodeErrors(t, Codex{}, map[string]harnesstest.DecodeError{
		"approval": {Raw: map[string]any{"approval": "never"},
			Want: `option "approval" is not supported: codex exec always runs non-interactively (approval policy "never")`},
		"append_system_prompt": {Raw: map[string]any{"append_system_prompt": "hi"},
			Want: `option "append_system_prompt" is not supported: codex has no append-system-prompt equivalent (use the workspace AGENTS.md)`},
		"unknown": {Raw: map[string]any{"permission_mode": "plan"},
			Want: `unknown option "permission_mode" (valid: sandbox)`},
		"enum": {Raw: map[string]any{"sandbox": "none"},
			Want: `option "sandbox": invalid value "none" (valid: read-only, workspace-write, danger-full-access)`},
	})
	for _, s := range []string{"read-only", "workspace-write", "danger-full-access"} {
		got, err := Codex{}.DecodeOptions(map[string]any{"sandbox": s})
		if err != nil || !reflect.DeepEqual(got, harness.Options{"sandbox": s}) {
			t.Errorf("sandbox %s: %v %v", s, got, err)
		}
	}
}

func TestValidateModel(t *testing.T) {
	harnesstest.Models(t, Codex{},
		[]string{"", "gpt-5.3-codex", "o3", "anything/goes"},
		[]string{"gpt 5", " o3", "o3\n", "a\tb"})
}
