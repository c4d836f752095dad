package main

import (
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/claude"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestAdaptersClassifyFakeScreens: the screens the fakes draw are the
// contract between this program and each adapter's screen reader. Walk
// every fake through its states and check the real reader agrees.
func TestAdaptersClassifyFakeScreens(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h0, ok := leoharness.Lookup(r.name)
			if !ok {
				t.Fatalf("no %s adapter registered", r.name)
			}
			reader := h0.Screen()
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			env := map[string]string{"FAKE_TURN_MS": "1500", "FAKE_TRUST_DIALOG": "1"}
			h := start(t, launch{role: r.name, home: home, dir: dir, env: env})
			expect := func(state leoharness.ScreenState, what string) leoharness.Screen {
				t.Helper()
				var got leoharness.Screen
				var scr string
				testutil.WaitFor(t, 10*time.Second, func() bool {
					scr = h.screen()
					got = reader.Classify(scr)
					return got.State == state
				}, what+" classified as "+state.String())
				return got
			}
			if r.name != "opencode" { // opencode has no trust dialog
				d := expect(leoharness.ScreenDialog, "trust dialog")
				if err := h.s.SendKeys(ctx(t), h.pane.PaneID, d.DialogKeys...); err != nil {
					t.Fatal(err)
				}
			}
			if got := expect(leoharness.ScreenReady, "empty input"); got.Input != "" {
				t.Fatalf("empty input read as %q", got.Input)
			}
			h.send("hello there")
			got := expect(leoharness.ScreenReady, "typed input")
			testutil.WaitFor(t, 5*time.Second, func() bool {
				got = reader.Classify(h.screen())
				return reader.Landed(got, "hello there")
			}, "Landed to see the paste")
			time.Sleep(150 * time.Millisecond)
			h.enter()
			expect(leoharness.ScreenBusy, "turn in flight")
			h.waitFor(r.echoReply)
			if got := expect(leoharness.ScreenReady, "after the turn"); got.Input != "" || reader.Landed(got, "hello there") {
				t.Fatalf("after the turn: %+v", got)
			}
			// A multi-line paste lands too (claude shows a placeholder).
			h.send("line one\nline two")
			testutil.WaitFor(t, 5*time.Second, func() bool {
				return reader.Landed(reader.Classify(h.screen()), "line one\nline two")
			}, "Landed to see a multi-line paste:\n"+strings.TrimSpace(h.screen()))
		})
	}
}
