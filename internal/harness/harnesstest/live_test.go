package harnesstest_test

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// live drives one adapter's interactive launch in a real tmux server (a
// private socket) running the fake harness, reading the pane only through
// the adapter's screen reader — the way delivery will.
type live struct {
	t    *testing.T
	h    harness.Harness
	srv  *tmux.Server
	env  map[string]string // the scope env: the fake home and knobs
	path string            // PATH with the fake harness first
	ws   string
	pane string
}

const liveWait = 15 * time.Second

func newLive(t *testing.T, name string, knobs map[string]string) *live {
	t.Helper()
	h, ok := harness.Lookup(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	fake := testutil.FakeHarnessDir(t)
	env := testutil.FakeHome(t)
	for k, v := range knobs {
		env[k] = v
	}
	path := fake + ":" + os.Getenv("PATH")
	return &live{
		t:    t,
		h:    h,
		srv:  testutil.NewTmux(t, testutil.WithPATH(path)),
		env:  env,
		path: path,
		ws:   t.TempDir(),
	}
}

func (l *live) spec() harness.LaunchSpec {
	return harness.LaunchSpec{Name: "live", Workspace: l.ws, Env: l.env}
}

// start launches spec (killing a previous session of the test first).
func (l *live) start(spec harness.LaunchSpec) {
	l.t.Helper()
	ctx := context.Background()
	_ = l.srv.KillSession(ctx, "leo-live")
	cmd, err := l.h.Interactive(spec)
	if err != nil {
		l.t.Fatalf("Interactive: %v", err)
	}
	env := map[string]string{}
	maps.Copy(env, spec.Env)
	maps.Copy(env, cmd.Env)
	pane, err := l.srv.NewSession(ctx, tmux.SessionSpec{Name: "leo-live", Dir: cmd.Dir, Argv: cmd.Argv, Env: env, Width: 120, Height: 40})
	if err != nil {
		l.t.Fatalf("NewSession %q: %v", cmd.Argv, err)
	}
	l.pane = pane.PaneID
}

func (l *live) screen() (harness.Screen, string) {
	l.t.Helper()
	capture, err := l.srv.Capture(context.Background(), l.pane)
	if err != nil {
		l.t.Fatalf("capture: %v", err)
	}
	return l.h.Screen().Classify(capture), capture
}

// waitFor polls the classified screen until ok accepts it.
func (l *live) waitFor(what string, ok func(harness.Screen, string) bool) harness.Screen {
	l.t.Helper()
	deadline := time.Now().Add(liveWait)
	for {
		got, capture := l.screen()
		if ok(got, capture) {
			return got
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("timed out after %v waiting for %s; last screen (%+v):\n%s", liveWait, what, got, capture)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *live) waitState(st harness.ScreenState) harness.Screen {
	l.t.Helper()
	return l.waitFor("state "+st.String(), func(s harness.Screen, _ string) bool { return s.State == st })
}

// send pastes text, waits until the reader sees it landed, waits the
// adapter's Enter delay and submits; then waits for the fake's echo reply
// and an idle, empty input line.
func (l *live) send(text string) {
	l.t.Helper()
	ctx := context.Background()
	if s := l.waitState(harness.ScreenReady); s.Input != "" {
		l.t.Fatalf("input not empty before pasting: %q", s.Input)
	}
	if err := l.srv.Paste(ctx, l.pane, text); err != nil {
		l.t.Fatalf("paste: %v", err)
	}
	r := l.h.Screen()
	l.waitFor("pasted text in the input", func(s harness.Screen, _ string) bool { return r.Landed(s, text) })
	if pt, ok := l.h.(harness.PasteTiming); ok {
		time.Sleep(pt.EnterDelay()) // the adapter's documented paste-to-Enter gap
	}
	if err := l.srv.SendKeys(ctx, l.pane, "Enter"); err != nil {
		l.t.Fatalf("send-keys: %v", err)
	}
	l.waitFor("the reply and an idle empty input", func(s harness.Screen, capture string) bool {
		return strings.Contains(capture, "echo: "+text) && s.State == harness.ScreenReady && s.Input == ""
	})
}

var liveHarnesses = []string{"claude", "codex", "opencode"}

// TestLiveScreensAndSessions: fresh launch → ready → a message lands, is
// submitted and answered (busy seen on the way) → the session id is
// pinned or discovered and exists → a resume launch comes back ready.
func TestLiveScreensAndSessions(t *testing.T) {
	for _, name := range liveHarnesses {
		t.Run(name, func(t *testing.T) {
			l := newLive(t, name, map[string]string{"FAKE_TURN_MS": "300", "FAKE_TRUST_DIALOG": "0"})
			spec := l.spec()
			policy := l.h.Sessions()
			if policy.PinsID() {
				spec.SessionID = policy.NewID()
			}
			if p, ok := l.h.(harness.Preparer); ok {
				if err := p.Prepare(context.Background(), spec); err != nil {
					t.Fatal(err)
				}
			}
			since := time.Now().Add(-time.Second)
			l.start(spec)
			if s := l.waitState(harness.ScreenReady); s.Input != "" {
				t.Fatalf("fresh input line reads %q", s.Input)
			}

			ctx := context.Background()
			text := "hello from leo, a message with spaces"
			if err := l.srv.Paste(ctx, l.pane, text); err != nil {
				t.Fatal(err)
			}
			r := l.h.Screen()
			l.waitFor("pasted text landed", func(s harness.Screen, _ string) bool {
				return s.State == harness.ScreenReady && r.Landed(s, text)
			})
			if pt, ok := l.h.(harness.PasteTiming); ok {
				time.Sleep(pt.EnterDelay())
			}
			if err := l.srv.SendKeys(ctx, l.pane, "Enter"); err != nil {
				t.Fatal(err)
			}
			l.waitState(harness.ScreenBusy)
			l.waitFor("reply and idle", func(s harness.Screen, capture string) bool {
				return strings.Contains(capture, "echo: "+text) && s.State == harness.ScreenReady && s.Input == ""
			})

			q := harness.SessionQuery{Workspace: l.ws, Env: l.queryEnv(), Since: since}
			id := spec.SessionID
			if !policy.PinsID() {
				var err error
				id, err = policy.Discover(ctx, q)
				if err != nil || id == "" {
					t.Fatalf("Discover after the first turn = %q, %v", id, err)
				}
			}
			if ok, err := policy.Exists(ctx, q, id); !ok || err != nil {
				t.Fatalf("Exists(%q) = %v, %v", id, ok, err)
			}
			if ok, err := policy.Exists(ctx, q, strings.Repeat("0", len(id)-4)+"dead"); ok || err != nil {
				t.Fatalf("Exists(unknown id) = %v, %v", ok, err)
			}

			resume := spec
			resume.SessionID, resume.Resume = id, true
			l.start(resume)
			l.waitState(harness.ScreenReady)
			l.send("second message after resume")
		})
	}
}

// TestLiveTrustDialog: without Prepare the trust dialog shows, is classified
// as a dialog, and its keys get the agent to a ready input line; with
// Prepare it never shows.
func TestLiveTrustDialog(t *testing.T) {
	for _, name := range []string{"claude", "codex"} {
		t.Run(name, func(t *testing.T) {
			l := newLive(t, name, map[string]string{"FAKE_TRUST_DIALOG": "1"})
			l.start(l.spec())
			d := l.waitState(harness.ScreenDialog)
			if d.Dialog != "trust" || len(d.DialogKeys) == 0 {
				t.Fatalf("dialog %+v", d)
			}
			if err := l.srv.SendKeys(context.Background(), l.pane, d.DialogKeys...); err != nil {
				t.Fatal(err)
			}
			l.send("after the dialog")

			pre := newLive(t, name, map[string]string{"FAKE_TRUST_DIALOG": "1"})
			if err := l.h.(harness.Preparer).Prepare(context.Background(), pre.spec()); err != nil {
				t.Fatal(err)
			}
			pre.start(pre.spec())
			pre.waitFor("ready without a dialog", func(s harness.Screen, _ string) bool {
				if s.State == harness.ScreenDialog {
					t.Fatalf("trust dialog shown after Prepare")
				}
				return s.State == harness.ScreenReady
			})
		})
	}
}

// TestLiveSlowStart: a TUI that draws nothing for a while reads as starting,
// never as ready.
func TestLiveSlowStart(t *testing.T) {
	for _, name := range liveHarnesses {
		t.Run(name, func(t *testing.T) {
			l := newLive(t, name, map[string]string{"FAKE_SLOW_START_MS": "1000", "FAKE_TRUST_DIALOG": "0"})
			l.start(l.spec())
			if s, capture := l.screen(); s.State != harness.ScreenStarting {
				t.Fatalf("a TUI that has drawn nothing reads %v:\n%s", s.State, capture)
			}
			l.waitState(harness.ScreenReady)
		})
	}
}

// queryEnv is the scope env plus the PATH the agent runs with (the fake
// first), as the daemon hands it to session lookups.
func (l *live) queryEnv() map[string]string {
	out := map[string]string{"PATH": l.path}
	maps.Copy(out, l.env)
	return out
}
