package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServiceLogRotatesBySizeAndKeepsThree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service.log")
	const max, keep = 1000, 3
	f, err := openRotatingFile(path, max, keep)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// 100-byte records: 10 fit a file, so 60 records make 6 files' worth.
	for i := range 60 {
		rec := fmt.Sprintf("record %03d %s\n", i, strings.Repeat("x", 100-len("record 000 \n")))
		if n, err := f.Write([]byte(rec)); err != nil || n != len(rec) {
			t.Fatalf("write %d: %d %v", i, n, err)
		}
	}
	for _, name := range []string{path, path + ".1", path + ".2", path + ".3"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Size() > max {
			t.Errorf("%s is %d bytes, over the %d limit", name, fi.Size(), max)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(path + ".4"); !os.IsNotExist(err) {
		t.Fatalf("%s.4 exists: only %d rotated files are kept", path, keep)
	}
	cur, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(cur), "record 050 ") || !strings.Contains(string(cur), "record 059 ") {
		t.Fatalf("current log does not hold the newest records:\n%s", cur)
	}
	prev, _ := os.ReadFile(path + ".1")
	if !strings.HasPrefix(string(prev), "record 040 ") {
		t.Fatalf("service.log.1 does not hold the records just before:\n%s", prev)
	}
	oldest, _ := os.ReadFile(path + ".3")
	if !strings.HasPrefix(string(oldest), "record 020 ") {
		t.Fatalf("service.log.3 is not the oldest kept:\n%s", oldest)
	}
}

func TestServiceLogAppendsAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service.log")
	for i := range 2 {
		f, err := openRotatingFile(path, 1<<20, 3)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "run %d\n", i)
		f.Close()
	}
	data, _ := os.ReadFile(path)
	if string(data) != "run 0\nrun 1\n" {
		t.Fatalf("log after two runs: %q", data)
	}
	// A reopened file counts its existing size towards the limit.
	f, err := openRotatingFile(path, int64(len(data))+3, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "run 2\n")
	if old, _ := os.ReadFile(path + ".1"); string(old) != string(data) {
		t.Fatalf("rotation on reopen: .1 = %q", old)
	}
}
