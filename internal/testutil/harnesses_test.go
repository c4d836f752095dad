package testutil

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The per-harness facts tests use come from the adapters: pinned here
// against what docs/configuration/harnesses.md says each CLI takes.
func TestHarnessFactsComeFromTheAdapters(t *testing.T) {
	for _, c := range []struct {
		name        string
		resume, pin []string
	}{
		{"claude", []string{"--resume", "X"}, []string{"--session-id", "X"}},
		{"codex", []string{"resume", "X"}, nil},
		{"opencode", []string{"-s", "X"}, nil},
		{"pi", []string{"--session", "X"}, nil},
	} {
		if got := ResumeArgs(c.name, "X"); !slices.Equal(got, c.resume) {
			t.Errorf("ResumeArgs(%s) = %q, want %q", c.name, got, c.resume)
		}
		if got := PinArgs(c.name, "X"); !slices.Equal(got, c.pin) {
			t.Errorf("PinArgs(%s) = %q, want %q", c.name, got, c.pin)
		}
		if !IsResume(c.name, append(append([]string{c.name}, FreshArgs(c.name)...), ResumeArgs(c.name, "other-id")...)) {
			t.Errorf("IsResume(%s) misses a resume", c.name)
		}
		if IsResume(c.name, append([]string{c.name}, FreshArgs(c.name)...)) {
			t.Errorf("IsResume(%s) takes a fresh launch for a resume", c.name)
		}
	}
	if !slices.Equal(Harnesses(), []string{"claude", "codex", "opencode", "pi"}) {
		t.Errorf("Harnesses() = %q", Harnesses())
	}
}

// The fake harness directory answers to every registered harness binary.
func TestFakeHarnessDirHoldsEveryRegisteredBinary(t *testing.T) {
	dir := FakeHarnessDir(t)
	for _, name := range FakeHarnessNames() {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
