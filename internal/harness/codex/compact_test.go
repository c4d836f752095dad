package codex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/compact_v0.171.0 holds the rollout of a real codex-cli 0.171.0
// TUI session (against the test model server): one turn, then /compact
// twice, each recorded as a top-level "compacted" line.
const compactThread = "01a22d98-b432-7a22-9f81-58e2a6f8ed08"

func TestCompactionsFromRealRollout(t *testing.T) {
	env := copyHome(t, filepath.Join("testdata", "compact_v0.171.0"), time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC))
	q := harness.SessionQuery{Workspace: "/tmp/cap/codex/ws", Env: env}
	got, err := Codex{}.Compactions(context.Background(), q, compactThread)
	if err != nil {
		t.Fatal(err)
	}
	first := time.Date(2026, 11, 30, 17, 56, 25, 221e6, time.UTC)
	if len(got) != 2 || !got[0].At.Equal(first) || got[1].At.Before(first) {
		t.Fatalf("Compactions = %+v, want two, the first at %v", got, first)
	}
	for _, c := range got {
		if c.SessionID != compactThread || c.Refused != "" {
			t.Fatalf("compaction %+v: want thread %s, not refused", c, compactThread)
		}
	}
	// The compaction is no user turn.
	if turns, _ := (Codex{}).UserTurns(context.Background(), q, compactThread); len(turns) != 1 || turns[0].Text != "Please answer LEO-cap-codex-001" {
		t.Fatalf("UserTurns = %+v, want the one message", turns)
	}
	q.Since = first.Add(time.Millisecond)
	if later, _ := (Codex{}).Compactions(context.Background(), q, ""); len(later) != 1 || later[0].SessionID != compactThread {
		t.Fatalf("Compactions of the workspace since after the first = %+v", later)
	}
	q.Exclude = []string{compactThread}
	if none, _ := (Codex{}).Compactions(context.Background(), q, ""); len(none) != 0 {
		t.Fatalf("Compactions excluding the thread = %+v", none)
	}
	// Threads with turns but no compaction, and ids that are none.
	env = realHome(t, time.Date(2026, 11, 30, 12, 40, 0, 0, time.UTC))
	for _, id := range []string{fiveThread, "../x", "01a22c64-0000-7000-8000-000000000000"} {
		if none, err := (Codex{}).Compactions(context.Background(), harness.SessionQuery{Env: env}, id); len(none) != 0 || err != nil {
			t.Fatalf("Compactions(%s) = %+v, %v", id, none, err)
		}
	}
}

// A line that only mentions "compacted" (a message quoting it) is no
// compaction; a compacted line still being written is not read yet.
func TestCompactionsIgnoreLookalikes(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "30")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "01a22d98-0000-7000-8000-000000000001"
	lines := []string{
		`{"timestamp":"2026-11-30T17:00:00.000Z","type":"session_meta","payload":{"id":"` + id + `","cwd":"/w"}}`,
		`{"timestamp":"2026-11-30T17:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"say \"compacted\" please"}}`,
		`{"timestamp":"2026-11-30T17:00:02.000Z","type":"compacted","payload":{"message":"summary"}}`,
	}
	data := strings.Join(lines, "\n") + "\n" + `{"timestamp":"2026-11-30T17:00:03.000Z","type":"compacted","payl`
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-30T17-00-00-"+id+".jsonl"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Codex{}.Compactions(context.Background(), harness.SessionQuery{Env: map[string]string{"CODEX_HOME": home}}, id)
	if err != nil || len(got) != 1 || got[0].SessionID != id {
		t.Fatalf("Compactions = %+v, %v; want the one whole compacted line", got, err)
	}
}
