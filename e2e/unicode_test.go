package e2e

import (
	"context"
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
)

// Text the TUIs draw differently from what was pasted (the fakes draw it
// as the real ones do: claude composes accents and drops skin-tone
// modifiers, codex drops the modifiers) is delivered on every harness, and
// the plain message behind each one too (issue 15 item 2: the landed check
// never matched, and every later message failed at once).
func TestRedrawnUnicodeThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	w.startDaemon()
	ctx := context.Background()
	for _, h := range leoproc.Harnesses {
		if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
			t.Fatalf("spawn %s: %v", h, err)
		}
	}
	texts := []string{"thumbs 👍🏽 up", "cafe\u0301 au lait", "a\ttab", "    leading spaces"}
	for _, h := range leoproc.Harnesses {
		for _, text := range texts {
			w.waitDelivered(h, w.send(h, text))
			w.waitDelivered(h, w.send(h, "plain after it"))
		}
	}
	got := w.Submitted()
	for _, text := range texts {
		if !slices.Contains(got, text) {
			t.Errorf("the harnesses received %q, without %q", got, text)
		}
	}
}
