package apitoken

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureMintsOnceWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.token")
	tok, minted, err := Ensure(path)
	if err != nil || !minted || len(tok) != 64 {
		t.Fatalf("Ensure = %q, %v, %v; want a fresh 64-hex-digit token", tok, minted, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	again, minted, err := Ensure(path)
	if err != nil || minted || again != tok {
		t.Fatalf("second Ensure = %q, %v, %v; want the same token, not minted", again, minted, err)
	}
}

func TestEnsureMintsOverAnEmptyFileButKeepsAnUnusableOne(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, minted, err := Ensure(empty); err != nil || !minted {
		t.Fatalf("Ensure over an empty file = %v, %v; want minted", minted, err)
	}
	odd := filepath.Join(dir, "odd")
	secret := "two words-SECRET"
	if err := os.WriteFile(odd, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	_, minted, err := Ensure(odd)
	if err == nil || minted {
		t.Fatalf("Ensure over a token with a space = %v, %v; want an error and no mint", minted, err)
	}
	if strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), odd) {
		t.Fatalf("error %q must name the file and never carry its content", err)
	}
	if data, _ := os.ReadFile(odd); string(data) != secret {
		t.Fatalf("an unusable token file was changed: %q", data)
	}
}

func TestReadMissingIsNone(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, ErrNone) {
		t.Fatalf("Read(missing) = %v; want ErrNone", err)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", MaxBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); err == nil || errors.Is(err, ErrNone) {
		t.Fatalf("Read(oversized) = %v; want an error", err)
	}
}
