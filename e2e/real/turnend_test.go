package real

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/e2e/turnendtest"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// TestRealTurnEnd: each real TUI, launched by leo's daemon (in this
// process, so the test holds its turn-end hub), after a turn whose message
// carries a firing's marker, runs leo's hook (claude's Stop hook, codex's
// notify, leo's opencode plugin), and the hub completes the firing's
// waiter with the reply — codex's title side thread, which quotes the
// marker, does not. Two firings per harness.
//
// LEO_REALCLI_CAPTURE=<dir> keeps each report's raw payload there (the
// adapters' testdata/turnend files were captured this way).
func TestRealTurnEnd(t *testing.T) {
	if !wanted() {
		t.Skipf("%s is not set: make test-real installs the real CLIs and runs this suite", realcli.BinDirEnv)
	}
	bin, err := realcli.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	hs := realcli.Harnesses
	if v := os.Getenv("LEO_REALCLI_HARNESSES"); v != "" {
		hs = strings.Split(v, ",")
	}
	for _, h := range hs {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			ms := modelserver.Start(t)
			userHome := testutil.ShortTempDir(t, "rte-")
			if err := realcli.Setup(h, userHome, ms.URL); err != nil {
				t.Fatal(err)
			}
			userEnv := realcli.Dirs(userHome)
			w := turnendtest.Start(t, turnendtest.Options{
				Bin: bin, UserEnv: userEnv, Harnesses: []string{h},
				Env: func(h string) map[string]string {
					env, _ := realcli.Env(h, ms.URL)
					return env
				},
				Observe: capture(os.Getenv("LEO_REALCLI_CAPTURE")),
			})
			// Before the world's tmux server goes: the TUIs (opencode
			// ignores the hangup) and codex's app-server, which outlives
			// its TUI.
			t.Cleanup(func() {
				for _, pid := range w.PanePIDs() {
					realcli.KillTree(pid)
				}
				realcli.KillUnder(userHome)
				if t.Failed() {
					t.Logf("model server requests: %s", modelserver.Summary(ms.Requests()))
				}
			})
			w.Spawn(h)
			for i, marker := range []string{"LEO-te-" + h + "-1", "LEO-te-" + h + "-2"} {
				// A cold start is slow (opencode installs its plugin
				// package from npm: two minutes here beside the other
				// two CLIs; codex starts its app-server).
				within := 2 * time.Minute
				if i == 0 {
					within = 5 * time.Minute
				}
				msg, res := w.Fire(h, "nightly", "Report on "+marker+" please.", within)
				if res.Failed || len(res.Inputs) == 0 || !turnendtest.Same(res.Inputs[len(res.Inputs)-1], msg) {
					t.Fatalf("firing %d: %+v", i+1, res)
				}
				if !strings.Contains(res.Reply, "ACK "+marker) || res.SessionID == "" {
					t.Fatalf("firing %d: reply %q (want the model's ACK %s), session %q", i+1, res.Reply, marker, res.SessionID)
				}
				if got := modelserver.WithMarker(ms.Requests(), marker); len(got) != 1 {
					t.Fatalf("firing %d: %d turns carried %s", i+1, len(got), marker)
				}
			}
		})
	}
}

// capture keeps each report's payload in dir (when not "") as
// <harness>-<n>.json.
func capture(dir string) func(api.TurnEndReport) {
	var mu sync.Mutex
	n := 0
	return func(r api.TurnEndReport) {
		if dir == "" {
			return
		}
		mu.Lock()
		n++
		name := fmt.Sprintf("%s-%d.json", r.Harness, n)
		mu.Unlock()
		_ = os.WriteFile(filepath.Join(dir, name), r.Payload, 0o600)
	}
}
