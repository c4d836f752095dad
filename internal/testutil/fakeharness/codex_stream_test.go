package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// While the reply streams (FAKE_CODEX_STREAM_MS) the fake codex hides its
// busy line, as the real 0.171.0 does (testdata/screens/codex/streaming*):
// the screen reads as ready and empty mid-turn, and text typed then shows
// "tab to queue message".
func TestFakeCodexStreamingScreenMatchesReal(t *testing.T) {
	reader := codex.Codex{}.Screen()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			t.Parallel()
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			trustCodex(t, home, dir)
			fk := start(t, launch{role: "codex", home: home, dir: dir, width: w, height: h, env: map[string]string{
				"FAKE_TURN_MS": "6000", "FAKE_CODEX_STREAM_MS": "5500",
			}})
			until := func(what string, ok func(scr string, s leoharness.Screen) bool) string {
				t.Helper()
				var scr string
				testutil.WaitFor(t, 15*time.Second, func() bool {
					scr = fk.screen()
					return ok(scr, reader.Classify(scr))
				}, what)
				return scr
			}
			until("the composer", func(_ string, s leoharness.Screen) bool { return s.State == leoharness.ScreenReady })
			fk.send("Stream LEO-cap-001 please")
			until("typed text", func(_ string, s leoharness.Screen) bool { return s.Input == "Stream LEO-cap-001 please" })
			time.Sleep(150 * time.Millisecond) // out of the paste-burst window
			fk.enter()
			until("the busy line", func(_ string, s leoharness.Screen) bool { return s.State == leoharness.ScreenBusy })
			scr := until("the reply streaming", func(scr string, s leoharness.Screen) bool {
				return s.State == leoharness.ScreenReady && strings.Contains(scr, "• echo: ")
			})
			if s := reader.Classify(scr); s.State != leoharness.ScreenReady || s.Input != "" {
				t.Fatalf("mid-stream screen read as %+v, want ready and empty like the real one", s)
			}
			sameShape(t, "streaming", w, h, scr)
			fk.send("typed while streaming")
			scr = until("text typed while streaming", func(_ string, s leoharness.Screen) bool { return s.Input == "typed while streaming" })
			// The real reply had grown longer by then and scrolled the
			// header; the rows from the composer down are what must agree.
			if real := realCodexScreen(t, "streaming-typed", w, h); real != "" {
				rs, fs := codexShapeOf(real), codexShapeOf(scr)
				rs.HeaderRow, fs.HeaderRow = 0, 0
				if !reflect.DeepEqual(rs, fs) {
					t.Errorf("streaming-typed at %dx%d: the fake's screen differs from the real one\nreal %+v\nfake %+v\n%s", w, h, rs, fs, scr)
				}
			}
		})
	}
}
