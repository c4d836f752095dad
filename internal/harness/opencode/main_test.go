package opencode

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// TestMain doubles as a stand-in opencode: tests link this test binary into a
// temp dir as "opencode" and put that dir on the PATH of the session query,
// so the package's real exec seam runs a real process.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "opencode" {
		os.Exit(fakeOpencode(os.Args[1:]))
	}
	os.Exit(hermetic.Main(m))
}

// fakeOpencode answers `session list --format json` from $FAKE_SESSIONS,
// after checking it ran the way leo must run it.
func fakeOpencode(args []string) int {
	if strings.Join(args, " ") != "session list --format json" {
		fmt.Fprintf(os.Stderr, "Error: unexpected arguments %q\n", args)
		return 2
	}
	if os.Getenv("FAKE_HANG") == "1" {
		time.Sleep(time.Minute)
	}
	// stdin must be closed (opencode waits for EOF otherwise).
	if n, err := io.Copy(io.Discard, os.Stdin); n != 0 || err != nil {
		fmt.Fprintf(os.Stderr, "Error: stdin was open (%d bytes, %v)\n", n, err)
		return 3
	}
	if want := os.Getenv("FAKE_WANT_CWD"); want != "" {
		if cwd, _ := os.Getwd(); cwd != want {
			fmt.Fprintf(os.Stderr, "Error: ran in %s, want %s\n", cwd, want)
			return 4
		}
	}
	if msg := os.Getenv("FAKE_FAIL"); msg != "" {
		fmt.Fprintln(os.Stderr, "Error: "+msg)
		return 1
	}
	fmt.Print(os.Getenv("FAKE_SESSIONS"))
	return 0
}
