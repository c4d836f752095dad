package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The rollouts under testdata/codexhome were written by the real codex-cli
// 0.171.0 TUI (see docs/harness-behaviour/codex.md), against a scripted
// model server: a cold start, a five-turn session (a 3-line and a
// 4,000-character message, a turn that failed after five retries), and a
// session in a workspace with an AGENTS.md, with a message sent mid-turn
// (folded into the running turn) and two sent back to back.
const (
	coldThread   = "01a22c64-7350-7fa3-b5b6-a5c5046ef5c7"
	fiveThread   = "01a22c67-a660-7763-9e7f-7472dc543866"
	agentsThread = "01a22c70-004b-7640-89f5-174811039317"
)

// realHome copies testdata/codexhome into a temp dir with every rollout's
// modification time set to mtime, and returns the env that points at it.
func realHome(t *testing.T, mtime time.Time) map[string]string {
	t.Helper()
	return copyHome(t, filepath.Join("testdata", "codexhome"), mtime)
}

// copyHome copies a CODEX_HOME fixture into a temp dir, every file's
// modification time set to mtime, and returns the env that points at it.
func copyHome(t *testing.T, src string, mtime time.Time) map[string]string {
	t.Helper()
	home := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(home, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(dst, mtime, mtime)
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"CODEX_HOME": home}
}

func texts(turns []harness.UserTurn) []string {
	out := make([]string, len(turns))
	for i, u := range turns {
		out[i] = u.Text
	}
	return out
}

func TestUserTurnsOfAThread(t *testing.T) {
	env := realHome(t, time.Date(2026, 11, 30, 12, 40, 0, 0, time.UTC))
	turns, err := Codex{}.UserTurns(context.Background(), harness.SessionQuery{Workspace: "/elsewhere", Env: env}, agentsThread)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"gap probe 0", "gap probe 1", "gap probe 2", "gap probe 3",
		"first of two", "second of two", // the second was folded into the first's turn
		"back one", "back two",
		"para one\n\npara two\n   indented three",
		"ctl probe 0", "ctl probe 1", "ctl probe 2", "ctl probe 3", "ctl probe 4", "ctl probe 5",
	}
	if got := texts(turns); !slices.Equal(got, want) {
		t.Fatalf("turns\n got %q\nwant %q", got, want)
	}
	for _, u := range turns {
		if u.SessionID != agentsThread || u.At.IsZero() {
			t.Fatalf("turn %+v: want session %s and a time", u, agentsThread)
		}
		if strings.Contains(u.Text, "AGENTS.md") || strings.Contains(u.Text, "environment_context") {
			t.Fatalf("codex's own context read as a user turn: %q", u.Text)
		}
	}
	if first := turns[0].At; !first.Equal(time.Date(2026, 11, 30, 12, 31, 10, 664e6, time.UTC)) {
		t.Errorf("first turn at %v, want the time of its item_completed line", first)
	}
}

func TestUserTurnsOfAWorkspaceSince(t *testing.T) {
	env := realHome(t, time.Date(2026, 11, 30, 12, 40, 0, 0, time.UTC))
	q := harness.SessionQuery{Workspace: "/tmp/hcodex/ws", Env: env}
	ctx := context.Background()

	all, err := Codex{}.UserTurns(ctx, q, "")
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for i := range 445 {
		words = append(words, fmt.Sprintf("word%04d", i))
	}
	long := strings.Join(words, " ")[:4000] // what the capture script pasted
	want := []string{"hello cold start", "fix the failing test", "second message", "line one\nline two\nline three", long, "please fail now"}
	if got := texts(all); !slices.Equal(got, want) {
		t.Fatalf("every turn of the workspace\n got %q\nwant %q", got, want)
	}

	q.Since = time.Date(2026, 11, 30, 12, 22, 10, 0, time.UTC)
	since, err := Codex{}.UserTurns(ctx, q, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(since); !slices.Equal(got, want[3:]) {
		t.Fatalf("turns since %v: got %q, want %q", q.Since, got, want[3:])
	}

	q.Since = time.Time{}
	q.Exclude = []string{fiveThread}
	others, err := Codex{}.UserTurns(ctx, q, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(others); !slices.Equal(got, want[:1]) {
		t.Fatalf("with %s excluded: got %q", fiveThread, got)
	}
}

// A rollout not modified since Since is not read; one of another workspace
// is not read either.
func TestUserTurnsSkipsOldAndForeignRollouts(t *testing.T) {
	env := realHome(t, time.Date(2026, 11, 30, 12, 40, 0, 0, time.UTC))
	q := harness.SessionQuery{Workspace: "/tmp/hcodex/ws", Env: env, Since: time.Date(2026, 11, 30, 12, 41, 0, 0, time.UTC)}
	if turns, err := (Codex{}).UserTurns(context.Background(), q, ""); err != nil || len(turns) != 0 {
		t.Fatalf("rollouts older than Since: %q, %v", texts(turns), err)
	}
	q = harness.SessionQuery{Workspace: "/tmp/other", Env: env}
	if turns, err := (Codex{}).UserTurns(context.Background(), q, ""); err != nil || len(turns) != 0 {
		t.Fatalf("another workspace: %q, %v", texts(turns), err)
	}
	if turns, err := (Codex{}).UserTurns(context.Background(), q, "no-such-thread"); err != nil || len(turns) != 0 {
		t.Fatalf("unknown thread: %q, %v", texts(turns), err)
	}
	if turns, err := (Codex{}).UserTurns(context.Background(), q, "../x"); err != nil || len(turns) != 0 {
		t.Fatalf("hostile id: %q, %v", texts(turns), err)
	}
}

// writeRollout writes a rollout of thread id in workspace with lines after
// its session_meta, and returns the env pointing at its codex home.
func writeRollout(t *testing.T, id, workspace string, lines ...string) (map[string]string, string) {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "30")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-2026-11-30T10-00-00-"+id+".jsonl")
	meta := `{"timestamp":"2026-11-30T10:00:00.000Z","type":"session_meta","payload":{"id":"` + id + `","cwd":"` + workspace + `","originator":"codex-tui"}}`
	if err := os.WriteFile(path, []byte(meta+"\n"+strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"CODEX_HOME": home}, path
}

// Earlier codex versions recorded event_msg user_message; a rollout with
// only response_items is read from those, without codex's own context.
func TestUserTurnsOtherShapes(t *testing.T) {
	ctx := context.Background()
	env, _ := writeRollout(t, "t1", "/w",
		`{"timestamp":"2026-11-30T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n</environment_context>"}]}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:01.500Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:02.000Z","type":"event_msg","payload":{"type":"user_message","message":"hello","images":[]}}`+"\n",
	)
	turns, err := Codex{}.UserTurns(ctx, harness.SessionQuery{Env: env}, "t1")
	if err != nil || !slices.Equal(texts(turns), []string{"hello"}) {
		t.Fatalf("user_message rollout: %q, %v", texts(turns), err)
	}

	env, _ = writeRollout(t, "t2", "/w",
		`{"timestamp":"2026-11-30T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"}]}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:01.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ctx"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"harness"}}]}}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:01.500Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"only items"}]}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:01.600Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"reply"}]}}`+"\n",
	)
	turns, err = Codex{}.UserTurns(ctx, harness.SessionQuery{Env: env, Workspace: "/w"}, "")
	if err != nil || !slices.Equal(texts(turns), []string{"only items"}) || turns[0].SessionID != "t2" {
		t.Fatalf("response_item rollout: %+v, %v", turns, err)
	}
}

// A line still being written (no newline yet) is not read until it is whole.
func TestUserTurnsIgnoresAPartialLine(t *testing.T) {
	whole := `{"timestamp":"2026-11-30T10:00:01.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"one"}]}}}`
	partial := `{"timestamp":"2026-11-30T10:00:02.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"two"}]}}}`
	env, path := writeRollout(t, "t3", "/w", whole+"\n", partial)
	turns, err := Codex{}.UserTurns(context.Background(), harness.SessionQuery{Env: env}, "t3")
	if err != nil || !slices.Equal(texts(turns), []string{"one"}) {
		t.Fatalf("with a partial last line: %q, %v", texts(turns), err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	turns, _ = Codex{}.UserTurns(context.Background(), harness.SessionQuery{Env: env}, "t3")
	if !slices.Equal(texts(turns), []string{"one", "two"}) {
		t.Fatalf("once whole: %q", texts(turns))
	}
}

// A line longer than the bound is skipped without being held in memory.
func TestUserTurnsSkipsAnOverlongLine(t *testing.T) {
	huge := `{"timestamp":"2026-11-30T10:00:01.000Z","type":"response_item","payload":{"type":"function_call_output","output":"` + strings.Repeat("x", maxRolloutLine+10) + `"}}`
	ok := `{"timestamp":"2026-11-30T10:00:02.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"after"}]}}}`
	env, _ := writeRollout(t, "t4", "/w", huge+"\n", ok+"\n")
	turns, err := Codex{}.UserTurns(context.Background(), harness.SessionQuery{Env: env}, "t4")
	if err != nil || !slices.Equal(texts(turns), []string{"after"}) {
		t.Fatalf("after an overlong line: %q, %v", texts(turns), err)
	}
}
