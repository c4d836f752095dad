package statefile

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// A write leaves nothing beside the file or in $TMPDIR. (That its temp is
// made beside the file, where RemoveTemps finds what a crash left, is
// proven end to end by e2e/fault with TMPDIR on another filesystem.)
func TestWriteLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	path := filepath.Join(dir, "agents.json")
	if err := WriteJSON(path, map[string]int{"a": 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 1 || got[0] != "agents.json" {
		t.Fatalf("dir holds %v after a write, want only agents.json", got)
	}
	if got := names(t, tmp); len(got) != 0 {
		t.Fatalf("TMPDIR holds %v after a write, want nothing", got)
	}
	var v map[string]int
	if found, err := ReadJSON(path, &v); !found || err != nil || v["a"] != 1 {
		t.Fatalf("read back %v found=%v err=%v", v, found, err)
	}
}

// RemoveTemps deletes exactly the temp files interrupted writes of the
// path leave (".agents.json<digits>"), nothing else.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.json")
	for _, n := range []string{"agents.json", ".agents.json123", ".agents.json9876543210", ".agents.jsonx1",
		".agents.json", "agents.json.corrupt-20260101T000000", ".other.json42", "task-history.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := RemoveTemps(path)
	if err != nil || n != 2 {
		t.Fatalf("RemoveTemps = %d, %v; want 2, nil", n, err)
	}
	want := []string{".agents.json", ".agents.jsonx1", ".other.json42", "agents.json", "agents.json.corrupt-20260101T000000", "task-history.json"}
	if got := names(t, dir); !equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if n, err := RemoveTemps(filepath.Join(t.TempDir(), "missing", "agents.json")); n != 0 || err != nil {
		t.Fatalf("missing dir: %d, %v", n, err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
