package tmux_test

import (
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// TestNoUTF8Locale: under launchd or systemd leo has no LANG/LC_*; tmux
// then treats its clients as non-UTF-8 and sanitizes what it prints (tabs
// of -F formats and every non-ASCII rune become "_"). Listings and
// captures must come back intact anyway.
func TestNoUTF8Locale(t *testing.T) {
	for _, transport := range []string{"control", "exec"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			opts := []func(*tmux.Options){func(o *tmux.Options) {
				o.Env = []string{"PATH=" + testutil.ToolPATH(t), "HOME=" + t.TempDir()}
			}}
			if transport == "exec" {
				opts = append(opts, testutil.WithoutControl())
			}
			s := testutil.NewTmux(t, opts...)
			c := ctx(t)
			p, err := s.NewSession(c, tmux.SessionSpec{Name: "leo-u", Argv: []string{"sh", "-c", "printf '❯ é\\tx\\n'; exec sleep 600"}})
			if err != nil {
				t.Fatal(err)
			}
			panes, err := s.ListPanes(c)
			if err != nil || len(panes) != 1 || panes[0].PaneID != p.PaneID {
				t.Fatalf("ListPanes without a UTF-8 locale: %+v, %v", panes, err)
			}
			testutil.WaitFor(t, 5*time.Second, func() bool {
				scr, err := s.Capture(c, p.PaneID)
				return err == nil && strings.Contains(scr, "❯ é")
			}, "the capture to keep non-ASCII text")
		})
	}
}
