package tmux_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

const benchSessions = 200

// benchServer returns a server holding benchSessions idle sessions plus a
// fake claude TUI for deliveries.
func benchServer(b *testing.B, opts ...func(*tmux.Options)) (*tmux.Server, tmux.Pane) {
	b.Helper()
	s := testutil.NewTmux(b, opts...)
	c := ctx(b)
	for i := 0; i < benchSessions; i++ {
		if _, err := s.NewSession(c, tmux.SessionSpec{Name: fmt.Sprintf("leo-idle-%03d", i), Argv: []string{"sleep", "3600"}, Width: 80, Height: 24}); err != nil {
			b.Fatal(err)
		}
	}
	p, err := s.NewSession(c, tmux.SessionSpec{
		Name: "leo-tui", Dir: b.TempDir(), Width: 120, Height: 40,
		Argv: []string{filepath.Join(testutil.FakeHarnessDir(b), "claude")},
		Env:  map[string]string{"FAKE_TURN_MS": "0", "HOME": b.TempDir()},
	})
	if err != nil {
		b.Fatal(err)
	}
	testutil.WaitFor(b, 10*time.Second, func() bool {
		scr, _ := s.Capture(c, p.PaneID)
		return strings.Contains(scr, "? for shortcuts")
	}, "fake claude ready")
	return s, p
}

func reportCalls(b *testing.B, s *tmux.Server, before int64) {
	b.ReportMetric(float64(s.CallCount()-before)/float64(b.N), "tmux-calls/op")
}

// BenchmarkList: one listing of every pane at 200 sessions. The raw floor
// is one `tmux list-sessions` process; ListPanes is one command over the
// control client (or one process without it).
func BenchmarkList(b *testing.B) {
	s, _ := benchServer(b)
	raw := testutil.NewRawTmux(s)
	c := ctx(b)
	b.Run("raw-exec-list-sessions", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out := raw.ListSessions(b); strings.Count(out, "\n") < benchSessions {
				b.Fatal("short listing")
			}
		}
	})
	b.Run("api-ListPanes-control", func(b *testing.B) {
		before := s.CallCount()
		for i := 0; i < b.N; i++ {
			panes, err := s.ListPanes(c)
			if err != nil || len(panes) != benchSessions+1 {
				b.Fatalf("%d panes, %v", len(panes), err)
			}
		}
		reportCalls(b, s, before)
	})
	execOnly, err := tmux.New(tmux.Options{Socket: s.Socket(), DisableControl: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("api-ListPanes-exec", func(b *testing.B) {
		before := execOnly.CallCount()
		for i := 0; i < b.N; i++ {
			if panes, err := execOnly.ListPanes(c); err != nil || len(panes) != benchSessions+1 {
				b.Fatalf("%d panes, %v", len(panes), err)
			}
		}
		reportCalls(b, execOnly, before)
	})
}

// BenchmarkSmallCommand: one pane query, raw process vs control mode.
func BenchmarkSmallCommand(b *testing.B) {
	s, p := benchServer(b)
	raw := testutil.NewRawTmux(s)
	c := ctx(b)
	b.Run("raw-exec-display-message", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			raw.Run(b, "display-message", "-p", "-t", p.PaneID, "#{pane_dead}")
		}
	})
	b.Run("api-PaneInfo-control", func(b *testing.B) {
		before := s.CallCount()
		for i := 0; i < b.N; i++ {
			if _, err := s.PaneInfo(c, p.PaneID); err != nil {
				b.Fatal(err)
			}
		}
		reportCalls(b, s, before)
	})
	b.Run("api-Capture-control", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.Capture(c, p.PaneID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNewSession: spawning a tiny TUI (the fake claude) with 200
// sessions already present.
func BenchmarkNewSession(b *testing.B) {
	s, _ := benchServer(b)
	raw := testutil.NewRawTmux(s)
	c := ctx(b)
	fake := filepath.Join(testutil.FakeHarnessDir(b), "claude")
	dir := b.TempDir()
	n := 0
	b.Run("raw-exec-new-session", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n++
			raw.NewSession(b, fmt.Sprintf("raw-%d", n), dir, fake)
		}
	})
	b.Run("api-NewSession-control", func(b *testing.B) {
		before := s.CallCount()
		for i := 0; i < b.N; i++ {
			n++
			if _, err := s.NewSession(c, tmux.SessionSpec{Name: fmt.Sprintf("api-%d", n), Dir: dir, Argv: []string{fake},
				Env: map[string]string{"FAKE_TURN_MS": "0"}}); err != nil {
				b.Fatal(err)
			}
		}
		reportCalls(b, s, before)
	})
}

// BenchmarkDeliver: paste a message into an idle TUI, press Enter, and
// poll the screen until the reply shows. Raw: load-buffer + paste-buffer
// + send-keys + capture-pane polling, each its own process.
func BenchmarkDeliver(b *testing.B) {
	s, p := benchServer(b)
	raw := testutil.NewRawTmux(s)
	c := ctx(b)
	n := 0
	b.Run("raw-exec-paste", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n++
			msg := fmt.Sprintf("raw message %d", n)
			raw.PasteAndSubmit(b, p.PaneID, msg, "echo: "+msg)
		}
	})
	b.Run("api-Paste-control", func(b *testing.B) {
		before := s.CallCount()
		for i := 0; i < b.N; i++ {
			n++
			msg := fmt.Sprintf("api message %d", n)
			if err := s.Paste(c, p.PaneID, msg); err != nil {
				b.Fatal(err)
			}
			if err := s.SendKeys(c, p.PaneID, "Enter"); err != nil {
				b.Fatal(err)
			}
			testutil.WaitFor(b, 10*time.Second, func() bool {
				scr, err := s.Capture(c, p.PaneID)
				return err == nil && strings.Contains(scr, "echo: "+msg)
			}, "delivery of "+msg)
		}
		reportCalls(b, s, before)
	})
}
