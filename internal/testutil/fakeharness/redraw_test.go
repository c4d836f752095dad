package main

import (
	"path/filepath"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
	"github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestFakeRedrawMatchesReal keeps the fake's drawing of a paste in step
// with the real TUIs': each paste of harnesstest.RedrawnPastes, pasted
// into the fake, shows as the same input (to the byte) as in every real
// capture of it (testdata/screens/<h>/ready-pasted-*, pinned and newest).
func TestFakeRedrawMatchesReal(t *testing.T) {
	for _, c := range []struct {
		role  string
		r     leoharness.ScreenReader
		env   map[string]string
		ready string
	}{
		{"claude", claude.Claude{}.Screen(), nil, "? for shortcuts"},
		{"codex", codex.Codex{}.Screen(), nil, "Ask Codex to do anything"},
		{"opencode", opencode.Opencode{}.Screen(), nil, "Ask anything…"},
	} {
		t.Run(c.role, func(t *testing.T) {
			t.Parallel()
			var h *harness
			if c.role == "codex" {
				h = startCodex(t, nil)
			} else {
				h = start(t, launch{role: c.role})
			}
			h.waitFor(c.ready)
			for _, fx := range harnesstest.RedrawnFixtures(t, filepath.Join("..", "..", "..", "testdata", "screens", c.role)) {
				want := c.r.Classify(fx.Capture).Input
				h.send(fx.Pasted)
				var got string
				testutil.WaitFor(t, 10*time.Second, func() bool {
					got = c.r.Classify(h.screen()).Input
					return got == want
				}, filepath.Base(fx.File)+": the fake draws the paste as the real TUI")
				if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "C-u"); err != nil {
					t.Fatal(err)
				}
				testutil.WaitFor(t, 10*time.Second, func() bool {
					s := c.r.Classify(h.screen())
					return s.State == leoharness.ScreenReady && s.Input == ""
				}, "the input line cleared by C-u")
			}
		})
	}
}
