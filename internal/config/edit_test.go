package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// editHome is a home whose workspace holds the prompt files p.md and ü.md.
func editHome(t *testing.T, yaml string) *testHome {
	t.Helper()
	h := newTestHome(t)
	h.file(t, "workspace/p.md", "hi\n")
	h.file(t, "workspace/ü€.md", "hi\n")
	h.file(t, "leo.yaml", yaml)
	return h
}

func (h *testHome) read(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(h.Path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const editYAML = `# my leo config — keep this comment
defaults:
  harness: claude   # the usual one

tasks:
  # the morning one
  morning:
    schedule: "0 7 * * 1-5"   # weekdays
    prompt_file: p.md
    enabled: true # on for now
  nightly:
    # no enabled key: on by default
    schedule: '0 3 * * *'
    prompt_file: p.md

  flow: {schedule: "*/15 * * * *", prompt_file: "ü€.md", enabled: TRUE}
  flowbare: {prompt_file: p.md}
  empty-value:
    prompt_file: p.md
    enabled:
web:
  enabled: true   # not a task's enabled
`

func TestSetTaskEnabledChangesOnlyThatValue(t *testing.T) {
	cases := []struct {
		task    string
		enabled bool
		old     string // the text replaced
		new     string
	}{
		{"morning", false, "    enabled: true # on for now\n", "    enabled: false # on for now\n"},
		{"nightly", false, "  nightly:\n    # no enabled key: on by default\n    schedule:",
			"  nightly:\n    # no enabled key: on by default\n    enabled: false\n    schedule:"},
		{"flow", false, `"ü€.md", enabled: TRUE}`, `"ü€.md", enabled: false}`},
		{"flowbare", false, "flowbare: {prompt_file: p.md}", "flowbare: {enabled: false, prompt_file: p.md}"},
		{"empty-value", false, "    enabled:\nweb:", "    enabled: false\nweb:"},
	}
	for _, tc := range cases {
		t.Run(tc.task, func(t *testing.T) {
			h := editHome(t, editYAML)
			if err := SetTaskEnabled(h.Path, tc.task, tc.enabled, WithGetenv(h.getenv)); err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(editYAML, tc.old, tc.new, 1)
			if want == editYAML {
				t.Fatalf("bad case: %q not in the file", tc.old)
			}
			if got := h.read(t); got != want {
				t.Fatalf("file after the edit:\n%s\nwant:\n%s", got, want)
			}
			c, err := LoadValid(h.Path, WithGetenv(h.getenv))
			if err != nil {
				t.Fatal(err)
			}
			for name := range c.Tasks { // every task starts enabled
				if r, _ := c.ResolveTask(name); name != tc.task && !r.Enabled {
					t.Errorf("tasks.%s was disabled too", name)
				}
			}
			if r, _ := c.ResolveTask(tc.task); r.Enabled != tc.enabled {
				t.Errorf("tasks.%s enabled = %v, want %v", tc.task, r.Enabled, tc.enabled)
			}
			if !c.WebEnabled() {
				t.Error("web.enabled changed")
			}
			info, err := os.Stat(h.Path)
			if err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, %v", info.Mode(), err)
			}

			// And back: enabling writes true where false now is.
			if err := SetTaskEnabled(h.Path, tc.task, !tc.enabled, WithGetenv(h.getenv)); err != nil {
				t.Fatal(err)
			}
			if c, _ := Load(h.Path, WithGetenv(h.getenv)); c.Tasks[tc.task].Enabled == nil || *c.Tasks[tc.task].Enabled != !tc.enabled {
				t.Errorf("enable again: %v", c.Tasks[tc.task].Enabled)
			}
		})
	}
}

func TestSetTaskEnabledNoChangeLeavesTheFile(t *testing.T) {
	h := editHome(t, editYAML)
	before, _ := os.Stat(h.Path)
	// Unset means enabled; true is true: nothing to write.
	for _, task := range []string{"nightly", "morning", "flowbare"} {
		if err := SetTaskEnabled(h.Path, task, true, WithGetenv(h.getenv)); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := os.Stat(h.Path)
	if h.read(t) != editYAML || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("a no-op edit rewrote the file")
	}
}

func TestSetTaskEnabledUnknownTask(t *testing.T) {
	h := editHome(t, editYAML)
	err := SetTaskEnabled(h.Path, "ghost", false, WithGetenv(h.getenv))
	if !errors.Is(err, ErrUnknownScope) {
		t.Fatalf("err = %v, want ErrUnknownScope", err)
	}
	if want := "tasks.ghost: not in the config (tasks: empty-value, flow, flowbare, morning, nightly)"; err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if h.read(t) != editYAML {
		t.Fatal("file changed")
	}
}

// A config that would be invalid after the edit is not written: the file
// stays byte for byte.
func TestSetTaskEnabledRefusesAnInvalidResult(t *testing.T) {
	bad := strings.Replace(editYAML, "  harness: claude", "  harness: nope", 1)
	h := editHome(t, bad)
	err := SetTaskEnabled(h.Path, "morning", false, WithGetenv(h.getenv))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), `defaults.harness "nope" is not a registered harness`) {
		t.Fatalf("err = %v, want the validation error", err)
	}
	if h.read(t) != bad {
		t.Fatal("file changed")
	}
}

// Shapes leo does not rewrite are refused with the field named, and the
// file stays as it was.
func TestSetTaskEnabledRefusesSharedOrOddShapes(t *testing.T) {
	cases := map[string]struct{ yaml, task, want string }{
		"anchor shared with another task": {
			"tasks:\n  a: &base\n    prompt_file: p.md\n  b:\n    <<: *base\n", "a",
			"tasks.a.enabled: leo cannot edit this part of the file; change it by hand (the task's mapping is shared with tasks.b)"},
		"alias": {
			"tasks:\n  a: &base\n    prompt_file: p.md\n  b: *base\n", "b",
			"tasks.b.enabled: leo cannot edit this part of the file; change it by hand (tasks.b is not a mapping written in place (an alias or a tag))"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := editHome(t, tc.yaml)
			err := SetTaskEnabled(h.Path, tc.task, false, WithGetenv(h.getenv))
			if !errors.Is(err, ErrCannotEdit) || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant    %s", err, tc.want)
			}
			if h.read(t) != tc.yaml {
				t.Fatal("file changed")
			}
		})
	}
}

// A value written with a tag (here one the decoder rejects) is rewritten
// as a plain value: the config is valid afterwards.
func TestSetTaskEnabledRewritesATaggedValue(t *testing.T) {
	h := editHome(t, "tasks:\n  a:\n    prompt_file: p.md\n    enabled: !!str true # tagged\n")
	if err := SetTaskEnabled(h.Path, "a", false, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
	if got, want := h.read(t), "tasks:\n  a:\n    prompt_file: p.md\n    enabled: false\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Merged settings: a task whose enabled comes from a merged map gets its
// own key, which wins over the merge.
func TestSetTaskEnabledOverridesAMergedValue(t *testing.T) {
	yaml := "x-common: &common\n  enabled: true\n  prompt_file: p.md\ntasks:\n  a:\n    <<: *common\n    schedule: \"0 7 * * *\"\n"
	h := editHome(t, yaml)
	if err := SetTaskEnabled(h.Path, "a", false, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(yaml, "  a:\n    <<:", "  a:\n    enabled: false\n    <<:", 1)
	if got := h.read(t); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSetTaskEnabledKeepsCRLF(t *testing.T) {
	yaml := strings.ReplaceAll("tasks:\n  a:\n    prompt_file: p.md\n", "\n", "\r\n")
	h := editHome(t, yaml)
	if err := SetTaskEnabled(h.Path, "a", false, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
	if got, want := h.read(t), "tasks:\r\n  a:\r\n    enabled: false\r\n    prompt_file: p.md\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// goccy/go-yaml's positions in a CRLF file with comments are a line off:
// the edit still lands on the task's own line, both ways, and every other
// byte stays.
func TestSetTaskEnabledCRLFWithComments(t *testing.T) {
	lf := "# leo\n# more\ntasks:\n  z:\n    enabled: true # z's\n    prompt_file: p.md\n  a:\n    prompt_file: p.md # a's\n    enabled: true\n  b:\n    # first\n    prompt_file: p.md\n"
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	h := editHome(t, crlf(lf))
	for _, step := range []struct {
		task    string
		enabled bool
		want    string
	}{
		{"a", false, strings.Replace(lf, "    enabled: true\n  b:", "    enabled: false\n  b:", 1)},
		{"b", false, strings.Replace(strings.Replace(lf, "    enabled: true\n  b:", "    enabled: false\n  b:", 1),
			"    # first\n    prompt_file", "    # first\n    enabled: false\n    prompt_file", 1)},
		{"z", false, strings.Replace(strings.Replace(strings.Replace(lf, "    enabled: true\n  b:", "    enabled: false\n  b:", 1),
			"    # first\n    prompt_file", "    # first\n    enabled: false\n    prompt_file", 1), "enabled: true # z's", "enabled: false # z's", 1)},
	} {
		if err := SetTaskEnabled(h.Path, step.task, step.enabled, WithGetenv(h.getenv)); err != nil {
			t.Fatalf("tasks.%s enabled=%v: %v", step.task, step.enabled, err)
		}
		if got := h.read(t); got != crlf(step.want) {
			t.Fatalf("after tasks.%s enabled=%v:\ngot  %q\nwant %q", step.task, step.enabled, got, crlf(step.want))
		}
	}
}

// A leo.yaml kept elsewhere and linked in stays a link; the file it points
// to is edited.
func TestSetTaskEnabledThroughSymlink(t *testing.T) {
	h := editHome(t, "")
	target := filepath.Join(t.TempDir(), "dotfiles-leo.yaml")
	if err := os.WriteFile(target, []byte(editYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, h.Path); err != nil {
		t.Fatal(err)
	}
	if err := SetTaskEnabled(h.Path, "morning", false, WithGetenv(h.getenv)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(h.Path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("leo.yaml is no longer a symlink: %v %v", fi.Mode(), err)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(editYAML, "enabled: true # on for now", "enabled: false # on for now", 1); string(got) != want {
		t.Fatalf("the linked file:\n%s\nwant:\n%s", got, want)
	}
}

// Edits from many goroutines are serialised: none is lost to another's
// read-modify-write.
func TestSetTaskEnabledConcurrentEditsAllLand(t *testing.T) {
	var b strings.Builder
	b.WriteString("tasks:\n")
	const n = 12
	for i := range n {
		fmt.Fprintf(&b, "  t%d:\n    prompt_file: p.md\n", i)
	}
	h := editHome(t, b.String())
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- SetTaskEnabled(h.Path, fmt.Sprintf("t%d", i), false, WithGetenv(h.getenv))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadValid(h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	for name := range c.Tasks {
		if r, _ := c.ResolveTask(name); r.Enabled {
			t.Errorf("tasks.%s still enabled: an edit was lost", name)
		}
	}
}
