package opencode

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// The keys of each answer, read off the captured prompts of 1.18.33: the
// first stage (dialog-permission_*), the second stage of "Allow always"
// (dialog-permission-always_*), and a question, which takes none.
func TestAnswerKeysFromCapturedPrompts(t *testing.T) {
	type want struct {
		keys   [][]string
		choice string
		none   bool
	}
	cases := map[string]map[string]want{
		"dialog-permission_*": {
			api.AnswerApprove: {keys: [][]string{{"Enter"}}, choice: "Allow once"},
			api.AnswerAlways:  {keys: [][]string{{"Right"}, {"Enter"}, {"Enter"}}, choice: "Allow always"},
			api.AnswerDeny:    {keys: [][]string{{"Escape"}}, choice: "Reject"},
			api.AnswerText:    {none: true},
		},
		"dialog-permission-always_*": {
			api.AnswerApprove: {none: true},
			api.AnswerAlways:  {keys: [][]string{{"Enter"}}, choice: "Confirm"},
			api.AnswerDeny:    {keys: [][]string{{"Escape"}, {"Escape"}}, choice: "Reject"},
		},
		"dialog-question_*": {
			api.AnswerApprove: {none: true},
			api.AnswerDeny:    {none: true},
		},
	}
	for glob, answers := range cases {
		files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("opencode"), glob+".txt"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no captures %s: %v", glob, err)
		}
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				s := Opencode{}.Screen().Classify(string(data))
				if s.Prompt == nil {
					t.Fatalf("no prompt read off %s", f)
				}
				for answer, w := range answers {
					presses, choice, err := Opencode{}.AnswerKeys(*s.Prompt, answer, "x")
					if w.none {
						if !errors.Is(err, harness.ErrNotOffered) {
							t.Errorf("%s of %q: %+v %v, want ErrNotOffered", answer, s.Prompt.Choices, presses, err)
						}
						continue
					}
					var keys [][]string
					for _, p := range presses {
						keys = append(keys, p.Keys)
					}
					if err != nil || choice != w.choice || !slices.EqualFunc(keys, w.keys, slices.Equal) {
						t.Errorf("%s: keys %q choice %q %v, want %q %q", answer, keys, choice, err, w.keys, w.choice)
					}
				}
			})
		}
	}
}

// A question's typed answer: an option's label picks it (Down to it,
// Enter); other text goes into "Type your own answer" (Down to it, Enter,
// the text typed as it is, Enter); a question without that option takes
// only its labels. Proven on 1.18.33 by e2e/real's "answer a question".
func TestAnswerKeysOfAQuestion(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(harnesstest.ScreensDir("opencode"), "dialog-question_*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured questions: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := Opencode{}.Screen().Classify(string(data)).Prompt
		if p == nil || !slices.Equal(p.Choices, []string{"alpha.txt", "beta.txt", "Type your own answer"}) {
			t.Fatalf("%s: prompt %+v", f, p)
		}
		presses, choice, err := Opencode{}.AnswerKeys(*p, api.AnswerText, " beta.txt ")
		if err != nil || choice != "beta.txt" || len(presses) != 2 || presses[0].Keys[0] != "Down" || presses[1].Keys[0] != "Enter" {
			t.Errorf("%s: beta.txt: %+v %q %v", f, presses, choice, err)
		}
		presses, choice, err = Opencode{}.AnswerKeys(*p, api.AnswerText, "gamma.txt")
		want := []harness.Press{{Keys: []string{"Down"}}, {Keys: []string{"Down"}}, {Keys: []string{"Enter"}}, {Literal: "gamma.txt"}, {Keys: []string{"Enter"}}}
		if err != nil || choice != "Type your own answer" || !slices.EqualFunc(presses, want, func(a, b harness.Press) bool { return a.Literal == b.Literal && slices.Equal(a.Keys, b.Keys) }) {
			t.Errorf("%s: gamma.txt: %+v %q %v", f, presses, choice, err)
		}
		if _, _, err := (Opencode{}).AnswerKeys(*p, api.AnswerText, "two\nlines"); !errors.Is(err, harness.ErrNotOffered) {
			t.Errorf("a two-line answer: %v", err)
		}
	}
	closed := harness.Prompt{Kind: api.PromptQuestion, Text: "Pick one", Choices: []string{"red", "blue"}}
	if _, _, err := (Opencode{}).AnswerKeys(closed, api.AnswerText, "green"); !errors.Is(err, harness.ErrNotOffered) {
		t.Errorf("own text where none is taken: %v", err)
	}
	if p, c, err := (Opencode{}).AnswerKeys(closed, api.AnswerText, "blue"); err != nil || c != "blue" || len(p) != 2 {
		t.Errorf("blue: %+v %q %v", p, c, err)
	}
}
