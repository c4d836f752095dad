package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// Spawn asks tmux about the names it would take, one after another, and
// skips each one holding a session no record claims, as well as those a
// record holds: it takes the first name free of both and leaves the
// sessions alone.
func TestSpawnSkipsEveryUnclaimedSessionOfTheNamesItWouldTake(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	ctx := context.Background()
	if _, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex", Name: "w"}); err != nil {
		t.Fatal(err)
	}
	raw := testutil.NewRawTmux(e.tmux)
	for _, s := range []string{"leo-w-2", "leo-w-3", "leo-w-5"} {
		raw.NewSession(t, s, t.TempDir(), "cat")
	}
	pid := e.sessionPID("leo-w-3")
	got := map[string]bool{}
	for range 2 {
		a, err := m.Spawn(ctx, api.SpawnRequest{Template: "codex", Name: "w"})
		if err != nil {
			t.Fatal(err)
		}
		got[a.Name] = true
	}
	if !got["w-4"] || !got["w-6"] {
		t.Fatalf("spawned %v, want w-4 and w-6 (w has a record; w-2, w-3, w-5 hold sessions no record claims)", got)
	}
	if p := e.sessionPID("leo-w-3"); p != pid || pid == 0 {
		t.Fatalf("leo-w-3 pane pid %d, want %d: a spawn took over a session it has no record for", p, pid)
	}
	if _, err := m.Get("w-2"); !api.HasCode(err, api.CodeNotFound) {
		t.Fatalf("an unclaimed session got a record: %v", err)
	}
	// Found before the launch, not by a launch colliding with them.
	if log := e.logBuf.String(); strings.Contains(log, "appeared meanwhile") {
		t.Fatalf("a spawn collided with a session it should have asked about:\n%s", log)
	}
}
