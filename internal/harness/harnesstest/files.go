package harnesstest

import (
	"os"
	"testing"
	"time"
)

// ReadFile returns the content of path, failing the test when it cannot be
// read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// NotRewritten runs f, which must leave the file at path alone: the file's
// modification time is moved an hour back first, and after f both it and
// the file's bytes must be as they were.
func NotRewritten(t testing.TB, path string, f func() error) {
	t.Helper()
	before := ReadFile(t, path)
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	if err := f(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(past) || ReadFile(t, path) != before {
		t.Fatalf("%s was rewritten", path)
	}
}
