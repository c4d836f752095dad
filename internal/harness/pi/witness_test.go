package pi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// install puts a captured session file where pi keeps the sessions of ws
// under home, named as pi names it, and returns the query and its id.
func install(t *testing.T, capture, id string) (harness.SessionQuery, string) {
	t.Helper()
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, AgentDirEnv: "", SessionDirEnv: ""}
	dir := SessionDir(env, ws)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "sessions", capture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "2026-12-03T05-36-44-191Z_"+id+".jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return harness.SessionQuery{Workspace: ws, Env: env}, path
}

const tuiID = "01a23a67-b29f-7704-a47b-0d9eb7f878dd"

func TestSessionDirIsPis(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", AgentDirEnv: "", SessionDirEnv: ""}
	if got, want := SessionDir(env, "/tmp/pix/ws"), "/home/u/.pi/agent/sessions/--tmp-pix-ws--"; got != want {
		t.Errorf("SessionDir = %s, want %s", got, want)
	}
	env[AgentDirEnv] = "/etc/pi"
	if got, want := SessionDir(env, "/a/b"), "/etc/pi/sessions/--a-b--"; got != want {
		t.Errorf("with %s: %s, want %s", AgentDirEnv, got, want)
	}
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".pi"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".pi", "settings.json"), []byte(`{"sessionDir":"sess"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := SessionDir(env, ws), filepath.Join(realPath(ws), "sess"); got != want {
		t.Errorf("with a project sessionDir: %s, want %s", got, want)
	}
	env[SessionDirEnv] = "~/s"
	if got, want := SessionDir(env, "/a/b"), "/home/u/s"; got != want {
		t.Errorf("with %s: %s, want %s", SessionDirEnv, got, want)
	}
}

func TestWitnessAndRecordsOfTheTUICapture(t *testing.T) {
	ctx := context.Background()
	q, _ := install(t, "tui_v0.73.1.jsonl", tuiID)
	if ok, err := (sessions{}).Exists(ctx, q, tuiID); !ok || err != nil {
		t.Fatalf("Exists = %v, %v", ok, err)
	}
	if ok, _ := (sessions{}).Exists(ctx, q, "01a23a67-0000-7704-a47b-0d9eb7f878dd"); ok {
		t.Fatal("Exists of another id")
	}
	turns, err := Pi{}.UserTurns(ctx, q, tuiID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, u := range turns {
		texts = append(texts, u.Text)
		if u.SessionID != tuiID {
			t.Errorf("turn of session %q", u.SessionID)
		}
	}
	joined := strings.Join(texts, "|")
	for _, want := range []string{"hello LEO-p1", "now SLOW LEO-p2", "queued LEO-p3", "SLOW interrupt me LEO-p4", "run BASH LEO-b1"} {
		if !strings.Contains(joined, want) {
			t.Errorf("user turns lack %q: %q", want, joined)
		}
	}
	if !strings.Contains(joined, "long LEO-big1 "+strings.Repeat("x", 3990)) {
		t.Error("the 4,000-character paste is not recorded in full")
	}
	// Discovery with no id: every session begun since, but excluded ones.
	q.Since = time.Date(2026, 12, 3, 5, 36, 0, 0, time.UTC)
	if id, err := (sessions{}).Discover(ctx, q); id != tuiID || err != nil {
		t.Errorf("Discover = %q, %v", id, err)
	}
	q.Exclude = []string{tuiID}
	if id, _ := (sessions{}).Discover(ctx, q); id != "" {
		t.Errorf("Discover of an excluded session = %q", id)
	}
	q.Exclude = nil

	act, err := Pi{}.TurnActivity(ctx, q, tuiID)
	if err != nil {
		t.Fatal(err)
	}
	if !act.Found || act.Running || act.Ended != 6 || act.Failed != "" || act.Reply != "ACK LEO-b1" {
		t.Errorf("TurnActivity = %+v", act)
	}
	cs, err := Pi{}.Compactions(ctx, q, tuiID)
	if err != nil || len(cs) != 1 || cs[0].SessionID != tuiID || cs[0].Refused != "" {
		t.Errorf("Compactions = %+v, %v", cs, err)
	}
	q.Since = cs[0].At.Add(time.Millisecond)
	if cs, _ := (Pi{}).Compactions(ctx, q, tuiID); len(cs) != 0 {
		t.Errorf("a compaction before Since: %+v", cs)
	}
}

func TestConversationOfTheTUICapture(t *testing.T) {
	q, _ := install(t, "tui_v0.73.1.jsonl", tuiID)
	turns, err := Pi{}.Conversation(context.Background(), q, tuiID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 6 {
		t.Fatalf("%d turns, want 6: %+v", len(turns), turns)
	}
	first := turns[0]
	if first.User != "hello LEO-p1" || first.Reply != "ACK LEO-p1" || first.Outcome != harness.OutcomeOK || first.Usage == nil || first.Usage.InputTokens != 10 || first.ID != "1e39393c" {
		t.Errorf("first turn: %+v", first)
	}
	if it := turns[3]; it.Outcome != harness.OutcomeInterrupted || it.Reply != "" {
		t.Errorf("interrupted turn: %+v", it)
	}
	tool := turns[5]
	if tool.Reply != "ACK LEO-b1" || len(tool.Tools) != 1 || tool.Tools[0].Name != "bash" || tool.Tools[0].Input != `{"command":"echo hi"}` {
		t.Errorf("tool turn: %+v", tool)
	}
	if none, err := (Pi{}).Conversation(context.Background(), q, "01a23a67-0000-7704-a47b-0d9eb7f878dd"); err != nil || len(none) != 0 {
		t.Errorf("a conversation with no file: %v, %v", none, err)
	}
}

func TestRecordsOfRetriedErrors(t *testing.T) {
	id := "11111111-2222-4333-8444-555555555555"
	q, _ := install(t, "retried-429_v0.73.1.jsonl", id)
	act, err := Pi{}.TurnActivity(context.Background(), q, id)
	if err != nil {
		t.Fatal(err)
	}
	if !act.Found || act.Running || !act.Limited || !strings.Contains(act.Failed, "429") {
		t.Errorf("TurnActivity = %+v", act)
	}
	turns, _ := Pi{}.Conversation(context.Background(), q, id)
	last := turns[len(turns)-1]
	if last.User != "fail E429 LEO-r1" || last.Outcome != harness.OutcomeError || !strings.Contains(last.Error, "429") {
		t.Errorf("last turn: %+v", last)
	}
}

func TestRecordsReadOnlyWhatGrew(t *testing.T) {
	q, path := install(t, "tui_v0.73.1.jsonl", tuiID)
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:4], "")+lines[4][:20]), 0o600); err != nil {
		t.Fatal(err)
	}
	turns, _ := Pi{}.UserTurns(context.Background(), q, tuiID)
	if len(turns) != 1 {
		t.Fatalf("half-written file: %d turns", len(turns))
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	turns, _ = Pi{}.UserTurns(context.Background(), q, tuiID)
	if len(turns) != 6 {
		t.Fatalf("after it grew: %d turns", len(turns))
	}
}
