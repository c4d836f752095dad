package codex

import (
	"reflect"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func TestRegistered(t *testing.T) {
	h, ok := harness.Lookup("codex")
	if !ok {
		t.Fatal("codex is not registered")
	}
	if h.Binary() != "codex" || h.SupportsChannels() {
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
		"approval": {map[string]any{"approval": "never"},
			`option "approval" is not supported: codex exec always runs non-interactively (approval policy "never")`},
		"append_system_prompt": {map[string]any{"append_system_prompt": "hi"},
			`option "append_system_prompt" is not supported: codex has no append-system-prompt equivalent (use the workspace AGENTS.md)`},
		"unknown": {map[string]any{"permission_mode": "plan"},
			`unknown option "permission_mode" (valid: sandbox)`},
		"enum": {map[string]any{"sandbox": "none"},
			`option "sandbox": invalid value "none" (valid: read-only, workspace-write, danger-full-access)`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Codex{}.DecodeOptions(c.raw)
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
	for _, s := range []string{"read-only", "workspace-write", "danger-full-access"} {
		got, err := Codex{}.DecodeOptions(map[string]any{"sandbox": s})
		if err != nil || !reflect.DeepEqual(got, harness.Options{"sandbox": s}) {
			t.Errorf("sandbox %s: %v %v", s, got, err)
		}
	}
}

func TestValidateModel(t *testing.T) {
	for _, m := range []string{"", "gpt-5.3-codex", "o3", "anything/goes"} {
		if err := (Codex{}).ValidateModel(m); err != nil {
			t.Errorf("ValidateModel(%q) = %v", m, err)
		}
	}
	for _, m := range []string{"gpt 5", " o3", "o3\n", "a\tb"} {
		if err := (Codex{}).ValidateModel(m); err == nil {
			t.Errorf("ValidateModel(%q) accepted", m)
		}
	}
}
