package tmux_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// TestControlRepliesPairWithCommands: many goroutines share the one
// control client; every reply must answer the command that asked.
func TestControlRepliesPairWithCommands(t *testing.T) {
	s := testutil.NewTmux(t)
	c := ctx(t)
	panes := map[string]tmux.Pane{}
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("leo-c%d", i)
		p, err := s.NewSession(c, tmux.SessionSpec{Name: name, Argv: []string{"sleep", "600"}, Width: 50 + i, Height: 20 + i})
		if err != nil {
			t.Fatal(err)
		}
		panes[name] = p
	}
	_, ctl0 := s.Calls()
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				for name, p := range panes {
					info, err := s.PaneInfo(c, p.PaneID)
					if err != nil {
						t.Errorf("PaneInfo(%s): %v", p.PaneID, err)
						return
					}
					if info.SessionName != name || info.PaneID != p.PaneID || info.Width != 50+int(name[len(name)-1]-'0') {
						t.Errorf("asked %s/%s, got %+v", name, p.PaneID, info)
						return
					}
					if ok, err := s.HasSession(c, name+"x"); ok || err != nil {
						t.Errorf("HasSession(%sx) = %v, %v", name, ok, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if execs, ctl := s.Calls(); ctl-ctl0 < 16*25*8*2 {
		t.Fatalf("only %d control-mode calls (execs %d): the queries fell back to exec", ctl-ctl0, execs)
	}
}

func TestExpiredContextThenRecovery(t *testing.T) {
	s := testutil.NewTmux(t)
	if _, err := s.NewSession(ctx(t), tmux.SessionSpec{Name: "leo-e", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.HasSession(dead, "leo-e"); err == nil {
		t.Fatal("HasSession with a cancelled context succeeded")
	}
	pid := tmux.ControlPID(s)
	if ok, err := s.HasSession(ctx(t), "leo-e"); !ok || err != nil {
		t.Fatalf("HasSession after a cancelled call: %v, %v", ok, err)
	}
	if pid == 0 || tmux.ControlPID(s) != pid {
		t.Fatal("a caller's cancellation cost the control client")
	}
}

func TestLargePaste(t *testing.T) {
	both(t, func(t *testing.T, s *tmux.Server) {
		p, rawLog := fakeClaude(t, s, "leo-big")
		text := strings.Repeat("0123456789abcdef", 16<<10) // 256 KiB
		if err := s.Paste(ctx(t), p.PaneID, text); err != nil {
			t.Fatal(err)
		}
		want := "\x1b[200~" + text + "\x1b[201~"
		testutil.WaitFor(t, 10*time.Second, func() bool {
			b, _ := readFile(rawLog)
			return len(b) >= len(want)
		}, "the whole paste to arrive")
		if b, _ := readFile(rawLog); string(b) != want {
			t.Fatalf("got %d bytes, want %d", len(b), len(want))
		}
	})
}

// TestAbandonedRepliesKeepPairing: callers that give up mid-command leave
// replies behind; the ones after must still get their own answers.
func TestAbandonedRepliesKeepPairing(t *testing.T) {
	s := testutil.NewTmux(t)
	c := ctx(t)
	a, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-a", Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-b", Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	pid := tmux.ControlPID(s)
	abandoned := 0
	for i := 0; i < 300; i++ {
		short, cancel := context.WithTimeout(c, time.Duration(i%50)*time.Microsecond)
		if _, err := s.PaneInfo(short, a.PaneID); err != nil {
			abandoned++
		}
		cancel()
		info, err := s.PaneInfo(c, b.PaneID)
		if err != nil || info.SessionName != "leo-b" {
			t.Fatalf("after %d abandoned: %+v, %v", abandoned, info, err)
		}
	}
	if abandoned == 0 {
		t.Fatal("no call was abandoned; the test proves nothing")
	}
	if tmux.ControlPID(s) != pid {
		t.Fatal("abandoned calls replaced the control client")
	}
}
