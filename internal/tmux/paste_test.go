package tmux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// fakeClaude starts the fake claude TUI (which enables bracketed paste) in
// a session and waits for its input box.
func fakeClaude(t *testing.T, s *tmux.Server, name string) (tmux.Pane, string) {
	t.Helper()
	home := testutil.FakeHome(t)
	rawLog := filepath.Join(t.TempDir(), "raw.log")
	env := map[string]string{"FAKE_RAW_LOG": rawLog, "FAKE_TURN_MS": "10"}
	for k, v := range home {
		env[k] = v
	}
	p, err := s.NewSession(ctx(t), tmux.SessionSpec{
		Name: name, Dir: t.TempDir(), Width: 100, Height: 30,
		Argv: []string{filepath.Join(testutil.FakeHarnessDir(t), "claude")}, Env: env,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, p.PaneID, "? for shortcuts")
	return p, rawLog
}

func waitScreen(t *testing.T, s *tmux.Server, paneID, want string) string {
	t.Helper()
	var screen string
	testutil.WaitFor(t, 10*time.Second, func() bool {
		var err error
		screen, err = s.Capture(ctx(t), paneID)
		if err != nil {
			t.Fatalf("Capture: %v", err)
		}
		return strings.Contains(screen, want)
	}, "screen to show "+want)
	return screen
}

func TestPasteIsOneBracketedPasteWithLF(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		p, rawLog := fakeClaude(t, s, "leo-paste")
		text := "line one\nline two $HOME \"q\"\n"
		if err := s.Paste(ctx(t), p.PaneID, text); err != nil {
			t.Fatal(err)
		}
		want := "\x1b[200~line one\nline two $HOME \"q\"\x1b[201~"
		testutil.WaitFor(t, 5*time.Second, func() bool {
			b, _ := os.ReadFile(rawLog)
			return strings.Contains(string(b), "\x1b[201~")
		}, "the paste to arrive")
		b, _ := os.ReadFile(rawLog)
		if string(b) != want {
			t.Fatalf("app received %q, want exactly %q (one bracketed paste, LF kept, one trailing newline dropped)", b, want)
		}
		waitScreen(t, s, p.PaneID, "\n  line two $HOME \"q\"") // claude shows up to 3 pasted lines in full
		if err := s.SendKeys(ctx(t), p.PaneID, "Enter"); err != nil {
			t.Fatal(err)
		}
		waitScreen(t, s, p.PaneID, "● echo: line one")
		// The named buffer was deleted by paste-buffer -d.
		if out := rawTmux(t, s, "list-buffers", "-F", "#{buffer_name}"); strings.Contains(out, "leo-") {
			t.Fatalf("paste buffer left behind: %q", out)
		}
	})
}

func TestSendLiteralAndKeys(t *testing.T) {
	s := testutil.NewTmux(t)
	p, rawLog := fakeClaude(t, s, "leo-keys")
	c := ctx(t)
	if err := s.SendLiteral(c, p.PaneID, "/model -x;{}"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, p.PaneID, "❯ /model -x;{}")
	if err := s.SendKeys(c, p.PaneID, "BSpace", "BSpace", "C-u"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool {
		b, _ := os.ReadFile(rawLog)
		return strings.HasSuffix(string(b), "\x7f\x7f\x15")
	}, "BSpace BSpace C-u to arrive as DEL DEL ^U")
	b, _ := os.ReadFile(rawLog)
	if strings.Contains(string(b), "\x1b[200~") {
		t.Fatalf("send-keys -l arrived as a paste: %q", b)
	}
}

func TestListPanesAndCapture(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		c := ctx(t)
		p, _ := fakeClaude(t, s, "leo-list")
		if _, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-other", Argv: []string{"sleep", "600"}, Width: 90, Height: 20}); err != nil {
			t.Fatal(err)
		}
		panes, err := s.ListPanes(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(panes) != 2 {
			t.Fatalf("ListPanes gave %d panes (%+v), want 2 (hidden session left out)", len(panes), panes)
		}
		var got tmux.PaneInfo
		for _, x := range panes {
			if x.SessionName == tmux.ControlSession {
				t.Fatal("hidden control session listed")
			}
			if x.PaneID == p.PaneID {
				got = x
			}
		}
		if got.SessionName != "leo-list" || got.PID != p.PID || got.Dead || got.Attached != 0 ||
			got.InMode || got.InputOff || got.Width != 100 || got.Height != 30 || got.CurrentCommand != "" ||
			got.Activity.IsZero() || time.Since(got.Activity) > time.Minute {
			t.Fatalf("pane info = %+v", got)
		}
		if info, err := s.PaneInfo(c, p.PaneID); err != nil || info.CurrentCommand != "claude" || info.CursorY != got.CursorY {
			t.Fatalf("PaneInfo = %+v, %v", info, err)
		}
		screen, _ := s.Capture(c, p.PaneID)
		lines := strings.Split(screen, "\n")
		if len(lines) != 30 {
			t.Fatalf("capture has %d lines, want the 30 visible ones", len(lines))
		}
		if !strings.HasPrefix(lines[got.CursorY], "❯") {
			t.Fatalf("cursor row %d is %q, want the input line", got.CursorY, lines[got.CursorY])
		}
		hist, err := s.CaptureHistory(c, p.PaneID, 100)
		if err != nil || !strings.Contains(hist, "Welcome to Claude Code") {
			t.Fatalf("CaptureHistory: %v %q", err, hist)
		}

		// Copy mode blocks keys; CancelMode leaves it, and is a no-op after.
		rawTmux(t, s, "copy-mode", "-t", p.PaneID)
		if info, _ := s.PaneInfo(c, p.PaneID); !info.InMode {
			t.Fatal("copy-mode not seen as InMode")
		}
		for i := 0; i < 2; i++ {
			if err := s.CancelMode(c, p.PaneID); err != nil {
				t.Fatalf("CancelMode #%d: %v", i+1, err)
			}
		}
		if info, _ := s.PaneInfo(c, p.PaneID); info.InMode {
			t.Fatal("still in mode after CancelMode")
		}

		if _, err := s.PaneInfo(c, "%9999"); !tmux.IsNotFound(err) {
			t.Fatalf("PaneInfo of a missing pane: %v", err)
		}
		if _, err := s.Capture(c, "%9999"); !tmux.IsNotFound(err) {
			t.Fatalf("Capture of a missing pane: %v", err)
		}
		if err := s.Paste(c, "%9999", "x"); !tmux.IsNotFound(err) {
			t.Fatalf("Paste to a missing pane: %v", err)
		}
		if err := s.SendKeys(c, "leo-list", "Enter"); err == nil {
			t.Fatal("SendKeys accepted a session name as a pane target")
		}
	})
}

func TestVersionTooOld(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "tmux")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho 'tmux 3.1c'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := tmux.New(tmux.Options{Socket: testutil.UniqueSocket(), Binary: old})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-x", Argv: []string{"true"}})
	want := "tmux 3.1c at " + old + " is too old: leo needs tmux 3.2 or newer"
	if err == nil || err.Error() != want {
		t.Fatalf("NewSession with tmux 3.1c: %v, want %q", err, want)
	}
	if err := s.CheckVersion(ctx(t)); err == nil || err.Error() != want {
		t.Fatalf("CheckVersion: %v", err)
	}
	if v := s.CheckedVersion(); v.Raw != "" {
		t.Fatalf("CheckedVersion of a refused tmux = %q, want none", v.Raw)
	}
	real := testutil.NewTmux(t)
	if err := real.CheckVersion(ctx(t)); err != nil {
		t.Fatalf("this machine's tmux: %v", err)
	}
	if v := real.CheckedVersion(); !strings.HasPrefix(v.Raw, "tmux ") || !v.AtLeast(3, 2) {
		t.Fatalf("CheckedVersion after the check = %+v", v)
	}
}

func TestAttachArgv(t *testing.T) {
	s := testutil.NewTmux(t)
	got := strings.Join(s.AttachArgv("leo-x"), " ")
	want := s.Binary() + " -L " + s.Socket() + " -f /dev/null attach-session -t =leo-x"
	if got != want {
		t.Fatalf("AttachArgv = %q, want %q", got, want)
	}
	for _, kv := range s.AttachEnv() {
		if strings.HasPrefix(kv, "TMUX=") {
			t.Fatal("TMUX left in the attach environment")
		}
	}
}
