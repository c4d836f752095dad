package harnesstest

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// ScreensDir is the fixture directory of one harness, relative to an
// adapter package (internal/harness/<name>).
func ScreensDir(name string) string {
	return filepath.Join("..", "..", "..", "testdata", "screens", name)
}

// ScreenFixtures classifies every dir/*.txt and compares it with want
// (keyed by file name without .txt). A fixture without an expectation, or an
// expectation without a fixture, fails: the table and the files move
// together.
func ScreenFixtures(t *testing.T, r harness.ScreenReader, dir string, want map[string]harness.Screen) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			exp, ok := want[name]
			if !ok {
				t.Fatalf("fixture %s has no expectation in the table", f)
			}
			got := r.Classify(string(data))
			if !reflect.DeepEqual(normal(got), normal(exp)) {
				t.Fatalf("Classify(%s)\n got %+v\nwant %+v", f, got, exp)
			}
			CheckScreen(t, r, string(data))
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("expectation %q has no fixture %s.txt in %s", name, name, dir)
		}
	}
}

func normal(s harness.Screen) harness.Screen {
	if len(s.DialogKeys) == 0 {
		s.DialogKeys = nil
	}
	return s
}

// CheckScreen asserts what holds for any capture: Classify does not panic,
// the state is one of the four, a dialog names its answer, the input is
// trimmed, and visible input counts as landed.
func CheckScreen(t testing.TB, r harness.ScreenReader, capture string) {
	t.Helper()
	s := r.Classify(capture)
	switch s.State {
	case harness.ScreenStarting, harness.ScreenReady, harness.ScreenBusy, harness.ScreenDialog:
	default:
		t.Fatalf("Classify(%q) state %d is not a ScreenState", capture, s.State)
	}
	// A dialog has a name and either keys that answer it the way leo
	// wants or, for a prompt that is a person's to answer, the prompt
	// and no keys.
	if s.State == harness.ScreenDialog && (s.Dialog == "" || (len(s.DialogKeys) == 0) == (s.Prompt == nil)) {
		t.Fatalf("Classify(%q) is a dialog without a name, or without keys or a prompt (or with both): %+v", capture, s)
	}
	if s.Prompt != nil && (s.State != harness.ScreenDialog || s.Prompt.Kind == "" || strings.TrimSpace(s.Prompt.Text) == "") {
		t.Fatalf("Classify(%q) gives a prompt outside a dialog, or without a kind or text: %+v", capture, s)
	}
	if s.State != harness.ScreenDialog && len(s.DialogKeys) > 0 {
		t.Fatalf("Classify(%q) gives dialog keys outside a dialog: %+v", capture, s)
	}
	if s.Input != strings.TrimSpace(s.Input) {
		t.Fatalf("Classify(%q) input %q is not trimmed", capture, s.Input)
	}
	if s.State == harness.ScreenStarting && s.Input != "" {
		t.Fatalf("Classify(%q) reads input %q from a screen without an input line", capture, s.Input)
	}
	if strings.TrimSpace(s.Input) != "" && !r.Landed(s, s.Input) {
		t.Fatalf("Landed(%+v, its own input) = false", s)
	}
}

// FuzzSeeds returns the fixture captures of a harness, for f.Add.
func FuzzSeeds(t testing.TB, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	return out
}

// Landed checks r.Landed on ready screens: each pair is {the input shown,
// the text pasted}; the pairs of landed must count as landed, those of
// missed must not.
func Landed(t *testing.T, r harness.ScreenReader, landed, missed [][2]string) {
	t.Helper()
	for want, pairs := range map[bool][][2]string{true: landed, false: missed} {
		for _, p := range pairs {
			if got := r.Landed(harness.Screen{State: harness.ScreenReady, Input: p[0]}, p[1]); got != want {
				t.Errorf("Landed(input %q, pasted %q) = %v, want %v", p[0], p[1], got, want)
			}
		}
	}
}

// FuzzScreen fuzzes r.Classify, seeded with the fixtures in dir and extra,
// and holds every result to CheckScreen.
func FuzzScreen(f *testing.F, r harness.ScreenReader, dir string, extra ...string) {
	for _, s := range FuzzSeeds(f, dir) {
		f.Add(s)
	}
	for _, s := range extra {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, capture string) {
		CheckScreen(t, r, capture)
	})
}
