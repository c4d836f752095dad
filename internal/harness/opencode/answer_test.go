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
			api.AnswerText:    {none: true},
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
