package claude

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
		if kind == api.PromptQuestion {
			if _, _, err := (Claude{}).AnswerKeys(harness.Prompt{Kind: kind, Text: "?", Choices: []string{"Red", "Type something."}}, api.AnswerApprove, ""); !errors.Is(err, harness.ErrNotOffered) {
				t.Errorf("approve of a question: %v", err)
			}
			continue
		}
		if _, _, err := (Claude{}).AnswerKeys(harness.Prompt{Kind: kind, Text: "?", Choices: []string{"Yes", "No"}}, api.AnswerApprove, ""); !errors.Is(err, harness.ErrNotOffered) {
			t.Errorf("approve of a %s: %v", kind, err)
		}
	}
}

// A typed answer to the captured question: an option's label presses its
// number (claude takes it at once); any other text goes into the
// own-answer row: its number, the text, Enter — the keys the capture
// pressed, after which the model got that text as the answer. A row a
// person typed into offers no typed answer; nor does a multi-line text.
func TestAnswerKeysOfAQuestion(t *testing.T) {
	for _, v := range []string{"2.1.197", "2.1.332"} {
		read := func(scenario string) harness.Prompt {
			data, err := os.ReadFile(filepath.Join(harnesstest.ScreensDir("claude"), scenario+"_120x40_v"+v+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			s := Claude{}.Screen().Classify(string(data))
			if s.Prompt == nil {
				t.Fatalf("%s %s: no prompt", scenario, v)
			}
			return *s.Prompt
		}
		p := read("question")
		presses, choice, err := Claude{}.AnswerKeys(p, api.AnswerText, " Blue ")
		if err != nil || choice != "Blue" || len(presses) != 1 || !slices.Equal(presses[0].Keys, []string{"2"}) {
			t.Errorf("%s: Blue: %+v %q %v", v, presses, choice, err)
		}
		presses, choice, err = Claude{}.AnswerKeys(p, api.AnswerText, "green please")
		want := []harness.Press{{Keys: []string{"3"}}, {Literal: "green please"}, {Keys: []string{"Enter"}}}
		if err != nil || choice != "Type something." || !reflect.DeepEqual(presses, want) {
			t.Errorf("%s: own answer: %+v %q %v", v, presses, choice, err)
		}
		if _, _, err := (Claude{}).AnswerKeys(p, api.AnswerText, "two\nlines"); !errors.Is(err, harness.ErrNotOffered) {
			t.Errorf("%s: a multi-line answer: %v", v, err)
		}
		for _, a := range []string{api.AnswerApprove, api.AnswerAlways, api.AnswerDeny} {
			if _, _, err := (Claude{}).AnswerKeys(p, a, ""); !errors.Is(err, harness.ErrNotOffered) {
				t.Errorf("%s: %s of a question: %v", v, a, err)
			}
		}
		if _, _, err := (Claude{}).AnswerKeys(read("question-typing"), api.AnswerText, "blue-green"); !errors.Is(err, harness.ErrNotOffered) {
			t.Errorf("%s: typed over a person's draft: %v", v, err)
		}
	}
}
