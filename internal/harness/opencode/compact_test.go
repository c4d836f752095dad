package opencode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/store/compact_v1.18.33.db.gz is the store of a real opencode
// 1.18.33 TUI session (against the test model server), checkpointed: one
// turn, then /compact twice, each a user message with a compaction part
// answered by a finished summary message.
const (
	compactWorkspace = "/tmp/cap/opencode/ws"
	compactSession   = "ses_dd266f27effe3ME6xxzuGGQ8yq"
)

func TestCompactionsFromTheRealStore(t *testing.T) {
	env := gzStore(t, "compact_v1.18.33.db.gz")
	q := harness.SessionQuery{Workspace: compactWorkspace, Env: env}
	got, err := Opencode{}.Compactions(context.Background(), q, "")
	if err != nil {
		t.Fatal(err)
	}
	first := time.UnixMilli(1796061402382) // the first summary's time.completed
	if len(got) != 2 || !got[0].At.Equal(first) || !got[1].At.After(first) {
		t.Fatalf("Compactions = %+v, want two, the first at %v", got, first)
	}
	for _, c := range got {
		if c.SessionID != compactSession || c.Refused != "" {
			t.Fatalf("compaction %+v: want session %s, not refused", c, compactSession)
		}
	}
	// The compaction's user message has no text: it is no user turn.
	turns, err := Opencode{}.UserTurns(context.Background(), q, compactSession)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range turns {
		if strings.TrimSpace(u.Text) != "" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("UserTurns = %+v, want one with text", turns)
	}
	q.Since = first.Add(time.Millisecond)
	if later, _ := (Opencode{}).Compactions(context.Background(), q, compactSession); len(later) != 1 {
		t.Fatalf("Compactions since after the first = %+v", later)
	}
	q.Since, q.Exclude = time.Time{}, []string{compactSession}
	if none, _ := (Opencode{}).Compactions(context.Background(), q, ""); len(none) != 0 {
		t.Fatalf("Compactions excluding the session = %+v", none)
	}
	// A store with turns and no compaction; no store at all.
	if none, err := (Opencode{}).Compactions(context.Background(), harness.SessionQuery{Workspace: storeWorkspace, Env: checkpointedStore(t)}, ""); len(none) != 0 || err != nil {
		t.Fatalf("Compactions of a store without one = %+v, %v", none, err)
	}
	if none, err := (Opencode{}).Compactions(context.Background(), harness.SessionQuery{Workspace: compactWorkspace, Env: map[string]string{"HOME": t.TempDir()}}, ""); len(none) != 0 || err != nil {
		t.Fatalf("Compactions without a store = %+v, %v", none, err)
	}
}

func TestClipTextDropsControls(t *testing.T) {
	if got := clipText("a\x1b[31mb\x00c\u009bd"+strings.Repeat("x", 10), 8); got != "a[31mbcd…" {
		t.Fatalf("clipText = %q", got)
	}
}
