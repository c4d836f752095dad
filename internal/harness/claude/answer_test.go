package claude

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// The keys of each answer, read off every captured permission prompt:
// 2.1.197 offers Yes / Yes, and always allow … / No; 2.1.332 adds "switch
// to auto mode" before No, which no answer picks.
func TestAnswerKeysFromCapturedPrompts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("claude"), "permission-bash_*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured permission prompts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := Claude{}.Screen().Classify(string(data))
			if s.Prompt == nil {
				t.Fatalf("no prompt read off %s", f)
			}
			deny := "3"
			if strings.Contains(f, "v2.1.332") {
				deny = "4"
			}
			for answer, want := range map[string]struct{ key, choice string }{
				api.AnswerApprove: {"1", "Yes"},
				api.AnswerAlways:  {"2", "Yes, and always allow"},
				api.AnswerDeny:    {deny, "No"},
			} {
				presses, choice, err := Claude{}.AnswerKeys(*s.Prompt, answer, "")
				if err != nil {
					t.Fatalf("%s: %v", answer, err)
				}
				if len(presses) != 1 || !slices.Equal(presses[0].Keys, []string{want.key}) || !strings.HasPrefix(choice, want.choice) {
					t.Errorf("%s: presses %+v choice %q, want key %s on %q (choices %q)", answer, presses, choice, want.key, want.choice, s.Prompt.Choices)
				}
			}
			if _, _, err := (Claude{}).AnswerKeys(*s.Prompt, api.AnswerText, "x"); !errors.Is(err, harness.ErrNotOffered) {
				t.Errorf("a typed answer to a permission prompt: %v, want ErrNotOffered", err)
			}
		})
	}
}

// leo never widens a permission: no always choice, no always answer; a
// question or a dialog gets no keys at all.
func TestAnswerKeysOfferNoMoreThanThePrompt(t *testing.T) {
	yesNo := harness.Prompt{Kind: api.PromptPermission, Text: "Bash command: rm x\nDo you want to proceed?", Choices: []string{"Yes", "Yes, and switch to auto mode", "No"}}
	if _, _, err := (Claude{}).AnswerKeys(yesNo, api.AnswerAlways, ""); !errors.Is(err, harness.ErrNotOffered) {
		t.Errorf("always on a prompt without an always choice: %v", err)
	}
	if p, c, err := (Claude{}).AnswerKeys(yesNo, api.AnswerDeny, ""); err != nil || c != "No" || p[0].Keys[0] != "3" {
		t.Errorf("deny: %+v %q %v", p, c, err)
	}
	for _, kind := range []string{api.PromptQuestion, api.PromptDialog} {
		if _, _, err := (Claude{}).AnswerKeys(harness.Prompt{Kind: kind, Text: "?", Choices: []string{"Yes", "No"}}, api.AnswerApprove, ""); !errors.Is(err, harness.ErrNotOffered) {
			t.Errorf("approve of a %s: %v", kind, err)
		}
	}
}
