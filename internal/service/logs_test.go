package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
)

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestTailLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service.log")
	var b strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	os.WriteFile(path, []byte(b.String()), 0o600)
	var out strings.Builder
	if err := Tail(context.Background(), path, 3, false, &out, 0); err != nil {
		t.Fatal(err)
	}
	if out.String() != "line 99998\nline 99999\nline 100000\n" {
		t.Fatalf("got %q", out.String())
	}
	if err := Tail(context.Background(), filepath.Join(t.TempDir(), "none"), 3, false, &out, 0); err == nil {
		t.Fatal("a missing log is no error")
	}
}

// -f follows appends and a rotation (the file renamed away, a new one
// made), and stops when cancelled.
func TestTailFollowsAppendsAndRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service.log")
	os.WriteFile(path, []byte("old\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuf{}
	done := make(chan error, 1)
	go func() { done <- Tail(ctx, path, 10, true, out, 5*time.Millisecond) }()
	testutil.WaitFor(t, 5*time.Second, func() bool { return out.String() == "old\n" }, "the last lines")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("appended\n")
	f.Close()
	testutil.WaitFor(t, 5*time.Second, func() bool { return out.String() == "old\nappended\n" }, "the appended line")
	os.Rename(path, path+".1")
	os.WriteFile(path, []byte("rotated\n"), 0o600)
	testutil.WaitFor(t, 5*time.Second, func() bool { return out.String() == "old\nappended\nrotated\n" }, "the new file")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
