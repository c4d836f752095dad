package tmux_test

import (
	"bytes"
	"context"
	osexec "os/exec"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// roundTrip stores text in a buffer over control mode (set-buffer with a
// quoted argument) and reads it back raw with an exec'd show-buffer.
func roundTrip(t testing.TB, s *tmux.Server, text string) []byte {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tmux.SetBuffer(c, s, "leo-rt", text); err != nil {
		t.Fatalf("set-buffer %q: %v", text, err)
	}
	out, err := osexec.Command(s.Binary(), "-L", s.Socket(), "-f", "/dev/null", "show-buffer", "-b", "leo-rt").Output()
	if err != nil {
		t.Fatalf("show-buffer after %q: %v", text, err)
	}
	return out
}

func controlServer(t testing.TB) *tmux.Server {
	s := testutil.NewTmux(t)
	if _, err := s.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-q", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	if tmux.ControlPID(s) == 0 {
		t.Fatal("no control client")
	}
	return s
}

var quoteSeeds = []string{
	"hello", "a b\tc", "line one\nline two\r\n", `$HOME ${X} \$ \\ \" "`, "~root ~ x~",
	"#{pane_id} #[fg=red] # comment", "{ } ; \\;", "é ü 😀 中文", "\x00\x01\x1b[31m\x7f",
	"\xff\xfe invalid \xc3", "'single' quotes", "%end 1 2 1", "\\u00e9 \\001",
}

func TestSetBufferRoundTrip(t *testing.T) {
	s := controlServer(t)
	for _, text := range quoteSeeds {
		if text == "" {
			continue
		}
		if got := roundTrip(t, s, text); !bytes.Equal(got, []byte(text)) {
			t.Errorf("round trip of %q gave %q", text, got)
		}
	}
	if _, ctl := s.Calls(); ctl == 0 {
		t.Fatal("set-buffer did not go over control mode")
	}
}

func FuzzSetBufferRoundTrip(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	s := controlServer(f)
	f.Fuzz(func(t *testing.T, text string) {
		if text == "" {
			return // tmux makes no buffer of nothing; Paste skips it
		}
		if got := roundTrip(t, s, text); !bytes.Equal(got, []byte(text)) {
			t.Fatalf("round trip of %q gave %q", text, got)
		}
	})
}
