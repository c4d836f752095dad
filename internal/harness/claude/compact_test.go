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

// compactID is the conversation of testdata/compact_v2.1.197.jsonl, a real
// claude 2.1.197 session (against the test model server) in which /compact
// ran three times: refused ("Not enough messages to compact.") after one
// turn, done after three turns, refused again right after.
const (
	compactWorkspace = "/tmp/cap/claude/ws"
	compactID        = "db0d4e17-09d2-48bf-9e6d-a8342663076c"
)

func TestCompactionsFromRealTranscript(t *testing.T) {
	env := installTranscript(t, t.TempDir(), "compact_v2.1.197.jsonl", compactWorkspace, compactID)
	q := harness.SessionQuery{Workspace: compactWorkspace, Env: env}
	got, err := (Claude{}).Compactions(context.Background(), q, compactID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("Compactions = %+v, want refused, done, refused", got)
	}
	for i, want := range []string{"Not enough messages to compact.", "", "Not enough messages to compact."} {
		if got[i].Refused != want || got[i].SessionID != compactID || got[i].At.IsZero() {
			t.Fatalf("compaction %d = %+v, want refused %q in %s with a time", i, got[i], want, compactID)
		}
	}
	if want := time.Date(2026, 11, 30, 17, 56, 5, 280e6, time.UTC); !got[1].At.Equal(want) {
		t.Fatalf("the compaction is at %v, want its compact_boundary's %v", got[1].At, want)
	}
	// Since keeps what was recorded at or after it.
	q.Since = got[1].At
	if later, _ := (Claude{}).Compactions(context.Background(), q, compactID); len(later) != 2 || later[0].Refused != "" {
		t.Fatalf("Compactions since the compaction = %+v", later)
	}
	// Every conversation of the workspace, unless excluded.
	q.Since = time.Time{}
	if all, _ := (Claude{}).Compactions(context.Background(), q, ""); len(all) != 3 {
		t.Fatalf("Compactions(all) = %+v", all)
	}
	q.Exclude = []string{compactID}
	if none, _ := (Claude{}).Compactions(context.Background(), q, ""); len(none) != 0 {
		t.Fatalf("Compactions excluding %s = %+v", compactID, none)
	}
	// A transcript with turns but no /compact (and an id that is none).
	env = installTranscript(t, t.TempDir(), "transcript_v2.1.197.jsonl", realWorkspace, realID)
	for _, id := range []string{realID, "not-a-uuid", "22222222-2222-4333-8444-000000000009"} {
		q := harness.SessionQuery{Workspace: realWorkspace, Env: env}
		if none, err := (Claude{}).Compactions(context.Background(), q, id); len(none) != 0 || err != nil {
			t.Fatalf("Compactions(%s) = %+v, %v", id, none, err)
		}
	}
}

// A refusal's words are claude's, but they reach API answers and logs:
// escape sequences and control characters are dropped, the length bounded.
// A boundary line still being written (no newline yet) is not read.
func TestCompactionsHostileTranscript(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	path := TranscriptPath(env, compactWorkspace, compactID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"user","uuid":"c1","sessionId":"` + compactID + `","timestamp":"2026-11-30T17:56:05.105Z","message":{"role":"user","content":"<command-name>/compact</command-name>\n <command-args></command-args>"}}`,
		`{"type":"system","subtype":"local_command","uuid":"o1","parentUuid":"c1","sessionId":"` + compactID + `","timestamp":"2026-11-30T17:56:05.200Z","content":"<local-command-stdout>\u001b[31mno\u0000pe\u001b]0;title\u0007 ` + strings.Repeat("x", 500) + `</local-command-stdout>"}`,
		// Output of another command: not /compact's.
		`{"type":"system","subtype":"local_command","uuid":"o2","parentUuid":"other","sessionId":"` + compactID + `","timestamp":"2026-11-30T17:56:06.000Z","content":"<local-command-stdout>Not enough messages to compact.</local-command-stdout>"}`,
	}
	data := strings.Join(lines, "\n") + "\n" + `{"type":"system","subtype":"compact_boundary","sessionId":"` + compactID + `","timestamp":"2026-11-30T17:56:07.000Z"`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := (Claude{}).Compactions(context.Background(), harness.SessionQuery{Workspace: compactWorkspace, Env: env}, compactID)
	if err != nil || len(got) != 1 {
		t.Fatalf("Compactions = %+v, %v; want the one refusal", got, err)
	}
	r := got[0].Refused
	if strings.ContainsAny(r, "\x1b\x00\x07") || !strings.HasPrefix(r, "nope") || len([]rune(r)) > 201 {
		t.Fatalf("refusal text %q: want it plain, from \"nope\", at most 200 runes and an ellipsis", r)
	}
}
