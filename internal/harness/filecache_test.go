package harness

import "testing"

// The cache keeps at most Max files, dropping the least recently used.
func TestFileCacheDropsTheLeastRecentlyUsed(t *testing.T) {
	c := &FileCache[int]{Max: 2}
	*c.State("a") = 1
	*c.State("b") = 2
	c.State("a")      // a is now the more recent
	*c.State("c") = 3 // drops b
	if *c.State("a") != 1 {
		t.Fatal("a was dropped; b was the least recently used")
	}
	if *c.State("b") != 0 {
		t.Fatal("b kept past the bound")
	}
	c.Forget()
	if *c.State("a") != 0 {
		t.Fatal("Forget kept a")
	}
}
