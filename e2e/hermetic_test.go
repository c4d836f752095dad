package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// TestWorldPATHIsHermetic: a world's leo processes get a PATH of its fakes
// and the test tools only — no system directory, where a user's own claude
// lives — so a world without the claude fake has no claude at all.
func TestWorldPATHIsHermetic(t *testing.T) {
	w := newWorld(t, "codex")
	var path string
	for _, kv := range w.Env() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir != w.Bin && dir != hermetic.Dir(t) {
			t.Errorf("the world's PATH holds %s, neither its fakes (%s) nor the test tools", dir, w.Bin)
		}
	}
	if err := testutil.CheckHarnessPATH(path, w.Bin); err != nil {
		t.Error(err)
	}
	if p, err := hermetic.LookPathIn("claude", path); err == nil {
		t.Errorf("claude resolves to %s in a world without it", p)
	}
	if _, err := hermetic.LookPathIn("tmux", path); err != nil {
		t.Errorf("no tmux on the world's PATH: %v", err)
	}
}
