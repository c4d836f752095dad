package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

// Who claims a worktree leo made: the agent record naming its path, a run
// going, or the run record that kept it as output; nothing else.
func TestDoctorWorktreesClaims(t *testing.T) {
	root := t.TempDir()
	h := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(root, "worktrees")
	agents := map[string]any{"version": 1, "agents": []any{map[string]any{
		"name": "kept", "template": "t", "harness": "claude", "workspace": wt + "/kept", "state": "stopped", "created_at": "2026-01-01T00:00:00Z",
		"worktree": map[string]any{"repo": "/r", "path": wt + "/kept", "branch": "leo/kept", "made": true},
	}}}
	data, _ := json.Marshal(agents)
	if err := os.WriteFile(h.AgentsPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	running := `{"version":1,"runs":[{"run":{"id":"20260101T000000.000Z","task":"job"}}]}`
	if err := os.WriteFile(h.TaskRunningPath(), []byte(running), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.TaskHistoryDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	hist := `{"id":"20260102T000000.000Z","task":"job","trigger":"manual","start":"2026-01-02T00:00:00Z","outcome":"succeeded","worktree":{"repo":"/r","path":"` + wt + `/job/20260102T000000.000Z","branch":"leo/job/20260102T000000.000Z","dirty":true,"ahead":0,"kept":true}}` + "\n"
	if err := os.WriteFile(filepath.Join(h.TaskHistoryDir(), "job.jsonl"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	w := doctorWorktrees(h, func(string) string { return "" })
	for _, c := range []struct {
		path string
		m    worktree.Marker
		want bool
	}{
		{wt + "/kept", worktree.Marker{Agent: "kept"}, true},
		{wt + "/gone", worktree.Marker{Agent: "gone"}, false},
		{wt + "/job/20260101T000000.000Z", worktree.Marker{Task: "job", Run: "20260101T000000.000Z"}, true},  // going
		{wt + "/job/20260102T000000.000Z", worktree.Marker{Task: "job", Run: "20260102T000000.000Z"}, true},  // kept output
		{wt + "/job/20260103T000000.000Z", worktree.Marker{Task: "job", Run: "20260103T000000.000Z"}, false}, // no record
	} {
		if got := w.Claimed(c.path, c.m); got != c.want {
			t.Errorf("Claimed(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
