package harness

import (
	"io/fs"
	"sync"
	"syscall"
)

// FileCache keeps an adapter's per-file reading state (how far a
// transcript or rollout was read, what it held), so that a record asked
// about many times a second is read once and then only where it grew. It
// is bounded: past Max files the least recently used entry is dropped, and
// that file is simply read again the next time. Safe for concurrent use;
// the state itself is the caller's to lock.
type FileCache[S any] struct {
	Max int

	mu    sync.Mutex
	files map[string]*S
	used  map[string]uint64
	seq   uint64
}

// State returns path's entry, creating an empty one.
func (c *FileCache[S]) State(path string) *S {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files, c.used = map[string]*S{}, map[string]uint64{}
	}
	c.seq++
	s := c.files[path]
	if s == nil {
		if len(c.files) >= max(c.Max, 1) {
			var oldest string
			var at uint64
			for p, u := range c.used {
				if oldest == "" || u < at {
					oldest, at = p, u
				}
			}
			delete(c.files, oldest)
			delete(c.used, oldest)
		}
		s = new(S)
		c.files[path] = s
	}
	c.used[path] = c.seq
	return s
}

// Forget empties the cache (benchmarks of a first read).
func (c *FileCache[S]) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files, c.used = nil, nil
}

// FileKey identifies the file behind info (device and inode), so a file
// replaced under the same name is told apart; zeros where the system does
// not say.
func FileKey(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
