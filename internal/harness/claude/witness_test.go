package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The transcripts under testdata were written by claude 2.1.197 in a TUI
// driven through tmux (docs/harness-behaviour/claude.md): four turns (one
// line, three lines, 4,000 characters pasted, one that hit API errors), and
// two turns the second of which ran a tool.
const (
	realWorkspace = "/tmp/hc/ws_120x40"
	realID        = "11111111-2222-4333-8444-000000012040"
	toolWorkspace = "/tmp/hc/wstool"
	toolID        = "33333333-2222-4333-8444-000000000001"
)

// installTranscript copies a testdata transcript where claude would keep it
// under home, and returns the env that finds it.
func installTranscript(t *testing.T, home, file, workspace, id string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	path := TranscriptPath(env, workspace, id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

func texts(turns []harness.UserTurn) []string {
	var out []string
	for _, u := range turns {
		out = append(out, u.Text)
	}
	return out
}

func TestUserTurnsFromRealTranscript(t *testing.T) {
	env := installTranscript(t, t.TempDir(), "transcript_v2.1.197.jsonl", realWorkspace, realID)
	q := harness.SessionQuery{Workspace: realWorkspace, Env: env}
	turns, err := (Claude{}).UserTurns(context.Background(), q, realID)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(turns)
	if len(got) != 4 || got[0] != "say hello MARK1" || got[1] != "line one MARK3L\nline two\nline three" ||
		!strings.HasPrefix(got[2], "MARK4K ") || len(got[2]) != 4000 || got[3] != "this will fail MARK5" {
		t.Fatalf("UserTurns = %q", got)
	}
	for _, u := range turns {
		if u.SessionID != realID || u.At.IsZero() {
			t.Fatalf("turn %+v: want session %s and a time", u, realID)
		}
	}
	// Since keeps only the turns recorded at or after it.
	q.Since = turns[1].At
	if later, _ := (Claude{}).UserTurns(context.Background(), q, realID); len(later) != 3 || later[0].Text != got[1] {
		t.Fatalf("UserTurns since the second turn = %q", texts(later))
	}
	// Not this conversation, or no such id: nothing.
	for _, id := range []string{"22222222-2222-4333-8444-000000000009", "not-a-uuid"} {
		if none, err := (Claude{}).UserTurns(context.Background(), q, id); len(none) != 0 || err != nil {
			t.Fatalf("UserTurns(%q) = %q, %v", id, texts(none), err)
		}
	}
}

// TestUserTurnsSkipToolResults: a tool result is a "user" entry in the
// transcript, but not a message anyone sent.
func TestUserTurnsSkipToolResults(t *testing.T) {
	env := installTranscript(t, t.TempDir(), "transcript-tool_v2.1.197.jsonl", toolWorkspace, toolID)
	turns, err := (Claude{}).UserTurns(context.Background(), harness.SessionQuery{Workspace: toolWorkspace, Env: env}, toolID)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(turns); len(got) != 2 || got[0] != "run a tool MARKTOOL" || got[1] != got[0] {
		t.Fatalf("UserTurns = %q", got)
	}
}

// TestUserTurnsAcrossConversations: without an id every conversation of the
// workspace counts, except the excluded ones and those not written since.
func TestUserTurnsAcrossConversations(t *testing.T) {
	home := t.TempDir()
	env := installTranscript(t, home, "transcript_v2.1.197.jsonl", realWorkspace, realID)
	installTranscript(t, home, "transcript-tool_v2.1.197.jsonl", realWorkspace, toolID)
	q := harness.SessionQuery{Workspace: realWorkspace, Env: env}
	all, err := (Claude{}).UserTurns(context.Background(), q, "")
	if err != nil || len(all) != 6 {
		t.Fatalf("UserTurns(all) = %q, %v", texts(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.Before(all[i-1].At) {
			t.Fatalf("not oldest first: %+v", all)
		}
	}
	q.Exclude = []string{realID}
	if mine, _ := (Claude{}).UserTurns(context.Background(), q, ""); len(mine) != 2 || mine[0].SessionID != toolID {
		t.Fatalf("UserTurns excluding %s = %+v", realID, mine)
	}
	q.Exclude, q.Since = nil, time.Now().Add(time.Hour)
	if none, _ := (Claude{}).UserTurns(context.Background(), q, ""); len(none) != 0 {
		t.Fatalf("UserTurns since the future = %+v", none)
	}
	q.Workspace = "/no/such/workspace"
	if none, err := (Claude{}).UserTurns(context.Background(), q, ""); len(none) != 0 || err != nil {
		t.Fatalf("UserTurns in an unknown workspace = %+v, %v", none, err)
	}
}

// TestUserTurnsReadsOnlyTheTail: a transcript bigger than the read bound
// still yields the turn at its end, and a cut first line is not misread.
func TestUserTurnsReadsOnlyTheTail(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	path := TranscriptPath(env, "/ws", realID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	old := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", transcriptTail) + `"},"timestamp":"2026-11-30T12:00:00Z"}`
	last := `{"type":"user","message":{"role":"user","content":"the newest"},"timestamp":"2026-11-30T12:00:01Z","sessionId":"` + realID + `"}`
	if err := os.WriteFile(path, []byte(old+"\n"+last+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	turns, err := (Claude{}).UserTurns(context.Background(), harness.SessionQuery{Workspace: "/ws", Env: env}, realID)
	if err != nil || len(turns) != 1 || turns[0].Text != "the newest" {
		t.Fatalf("UserTurns = %+v, %v", turns, err)
	}
}
