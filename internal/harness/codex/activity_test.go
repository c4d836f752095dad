package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func markLine(at time.Time, typ string) string {
	return fmt.Sprintf(`{"timestamp":"%s","type":"event_msg","payload":{"type":"%s","turn_id":"t"}}`+"\n", at.UTC().Format("2006-01-02T15:04:05.000Z"), typ)
}

// The real rollouts of codex 0.171.0: five turns that each ended (the last
// with an error after the retries of an HTTP 500), none running.
func TestTurnActivityOfRealRollout(t *testing.T) {
	q := harness.SessionQuery{Env: realHome(t, time.Now()), Workspace: "/tmp/hcodex/ws"}
	got, err := Codex{}.TurnActivity(context.Background(), q, fiveThread)
	want := harness.TurnActivity{Found: true, Ended: 5, Failed: "We’re currently experiencing high demand, which may cause temporary errors."}
	if err != nil || got != want {
		t.Fatalf("TurnActivity = %+v, %v; want 5 ended, the last failed, none running", got, err)
	}
	q.Since = time.Date(2026, 11, 30, 12, 22, 10, 0, time.UTC)
	if got, _ := (Codex{}).TurnActivity(context.Background(), q, fiveThread); got.Ended != 3 {
		t.Fatalf("since 12:22:10: %+v, want the last 3 turns ended", got)
	}
	if got, _ := (Codex{}).TurnActivity(context.Background(), q, "01a22c67-0000-7000-8000-000000000000"); got.Found {
		t.Fatalf("unknown thread: %+v, want nothing found", got)
	}
}

// A turn runs from task_started to task_complete or turn_aborted; the
// user turns read through the same cache are not disturbed, and a user
// message that quotes an event type is still a user turn.
func TestTurnActivityStartAndEnd(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)
	env, path := writeRollout(t, "a1", "/w", markLine(t0, "task_started"), userLine(t0, `say \"task_complete`))
	q := harness.SessionQuery{Env: env, Workspace: "/w"}
	for _, id := range []string{"a1", ""} {
		if got, err := (Codex{}).TurnActivity(ctx, q, id); err != nil || got != (harness.TurnActivity{Found: true, Running: true}) {
			t.Fatalf("id %q: %+v, %v; want running", id, got, err)
		}
	}
	if turns, _ := (Codex{}).UserTurns(ctx, q, "a1"); len(turns) != 1 || turns[0].Text != `say "task_complete` {
		t.Fatalf("user turns = %q", texts(turns))
	}
	appendTo(t, path, markLine(t0.Add(time.Second), "task_complete"))
	if got, _ := (Codex{}).TurnActivity(ctx, q, "a1"); got != (harness.TurnActivity{Found: true, Ended: 1}) {
		t.Fatalf("after task_complete: %+v", got)
	}
	appendTo(t, path, markLine(t0.Add(2*time.Second), "task_started"))
	if got, _ := (Codex{}).TurnActivity(ctx, q, "a1"); !got.Running || got.Ended != 1 {
		t.Fatalf("second turn: %+v", got)
	}
	appendTo(t, path, markLine(t0.Add(3*time.Second), "turn_aborted"))
	if got, _ := (Codex{}).TurnActivity(ctx, q, "a1"); got.Running || got.Ended != 2 {
		t.Fatalf("after turn_aborted: %+v", got)
	}
	// A start before Since (a turn of an earlier launch that never ended)
	// is not running now.
	env, _ = writeRollout(t, "a2", "/w", markLine(t0, "task_started"))
	q = harness.SessionQuery{Env: env, Workspace: "/w", Since: t0.Add(time.Second)}
	if got, _ := (Codex{}).TurnActivity(ctx, q, "a2"); got.Running {
		t.Fatalf("orphan start before Since: %+v", got)
	}
}

// Before the agent's thread is known (id ""), only threads begun since the
// launch are read: an older thread of the workspace — the one a reset
// left, its last turn cut off by the kill — is none of the new TUI's.
func TestTurnActivityOfAWorkspaceReadsOnlyNewThreads(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	env, _ := writeRollout(t, "old", "/w", markLine(t0.Add(2*time.Second), "task_started"))
	launch := t0.Add(time.Second) // after the old thread began, before its cut-off turn
	q := harness.SessionQuery{Env: env, Workspace: "/w", Since: launch}
	if got, err := (Codex{}).TurnActivity(ctx, q, ""); err != nil || got.Found || got.Running {
		t.Fatalf("older thread read: %+v, %v", got, err)
	}
	if got, _ := (Codex{}).TurnActivity(ctx, q, "old"); !got.Running {
		t.Fatalf("by its id the thread is read: %+v", got)
	}
	dir := filepath.Join(env["CODEX_HOME"], "sessions", "2026", "11", "30")
	meta := `{"timestamp":"2026-11-30T10:00:03.000Z","type":"session_meta","payload":{"id":"new","cwd":"/w","originator":"codex-tui"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-30T10-00-03-new.jsonl"), []byte(meta+markLine(t0.Add(3*time.Second), "task_started")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := (Codex{}).TurnActivity(ctx, q, ""); !got.Found || !got.Running {
		t.Fatalf("the launch's new thread: %+v", got)
	}
}
