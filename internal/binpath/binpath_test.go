package binpath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func install(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A program installed after the resolver was made is found on the next
// lookup: nothing is cached, so the daemon needs no restart.
func TestLookupFindsWhatWasInstalledLater(t *testing.T) {
	dir := t.TempDir()
	r := Resolver{Getenv: func(k string) string {
		if k == "PATH" {
			return dir
		}
		return ""
	}}
	_, err := r.Lookup("claude")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) || nf.Name != "claude" {
		t.Fatalf("missing claude: %v", err)
	}
	want := install(t, dir, "claude")
	if got, err := r.Lookup("claude"); err != nil || got != want {
		t.Fatalf("after install: %q, %v", got, err)
	}
}

func TestPathFirstWins(t *testing.T) {
	first, own := t.TempDir(), t.TempDir()
	install(t, own, "tmux")
	want := install(t, first, "tmux")
	r := Resolver{PathFirst: first, Getenv: func(k string) string { return map[string]string{"PATH": own}[k] }}
	if got, err := r.Lookup("tmux"); err != nil || got != want {
		t.Errorf("Lookup = %q, %v; want %q", got, err, want)
	}
	if sp := r.SearchPath(); sp != first+string(os.PathListSeparator)+own {
		t.Errorf("SearchPath = %q", sp)
	}
}

func TestNonExecutableIsNotFound(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codex"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Resolver{Getenv: func(string) string { return dir }}
	if _, err := r.Lookup("codex"); !errors.Is(err, ErrNotFound) {
		t.Errorf("non-executable file found: %v", err)
	}
	if _, err := r.Lookup(filepath.Join(dir, "codex")); !errors.Is(err, ErrNotFound) {
		t.Errorf("non-executable absolute path found: %v", err)
	}
}
