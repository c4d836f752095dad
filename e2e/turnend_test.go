package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/turnendtest"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// TestTurnEndThroughTheFakeTUIs: each fake TUI ends a turn the way its
// real CLI does (claude's Stop hook from .claude/settings.local.json,
// codex's notify — after a title side thread that quotes the message —
// and the command of leo's opencode plugin entry); the real `leo hook
// turn-end` posts it and the daemon's hub completes the firing's waiter
// with the reply. Two firings in a row: the second is not completed by
// anything of the first. e2e/real proves the same on the real CLIs.
func TestTurnEndThroughTheFakeTUIs(t *testing.T) {
	userEnv := testutil.FakeHome(t)
	log := filepath.Join(userEnv["HOME"], "harness.log")
	hs := []string{"claude", "codex", "opencode"}
	w := turnendtest.Start(t, turnendtest.Options{
		Bin: testutil.FakeHarnessDir(t), UserEnv: userEnv, Harnesses: hs,
		Env: func(string) map[string]string { return map[string]string{"FAKE_HARNESS_LOG": log} },
	})
	// The user's own claude settings in the workspace, kept beside leo's.
	settings := claude.SettingsLocalPath(w.Workspace("claude"))
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"env":{"MINE":"1"},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		w.Spawn(h)
	}
	for _, h := range hs {
		t.Run(h, func(t *testing.T) {
			for i, prompt := range []string{"Check the build.", "Check the build."} {
				msg, res := w.Fire(h, "nightly", prompt, time.Minute)
				if res.Failed || res.Harness != h || len(res.Inputs) == 0 || !turnendtest.Same(res.Inputs[len(res.Inputs)-1], msg) {
					t.Fatalf("firing %d: %+v", i+1, res)
				}
				// The fakes answer "echo: <message>".
				if !turnendtest.Same(res.Reply, "echo: "+msg) || res.SessionID == "" {
					t.Fatalf("firing %d: reply %q, session %q", i+1, res.Reply, res.SessionID)
				}
			}
		})
	}
	data, err := os.ReadFile(settings)
	if err != nil || !strings.Contains(string(data), `"MINE"`) || !strings.Contains(string(data), `"command": "true"`) {
		t.Fatalf("the user's claude settings were not kept: %s %v", data, err)
	}
	// codex's title side thread did run the hook, and was not counted.
	testutil.WaitFor(t, 30*time.Second, func() bool { return hookRuns(t, log, "codex") >= 3 },
		"codex to have run its notify 3 times for 2 turns (one title side thread)")
}

// hookRuns counts the turn-end hooks harness h ran without error.
func hookRuns(t *testing.T, log, h string) int {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Event, Harness, Err string
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "turn_end_hook" && ev.Harness == h && ev.Err == "" {
			n++
		}
	}
	return n
}
