package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func conversationOf(t *testing.T, env map[string]string, id string) []harness.Turn {
	t.Helper()
	turns, err := Codex{}.Conversation(context.Background(), harness.SessionQuery{Env: env}, id)
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

func usage(in, out int64) *harness.Usage {
	return &harness.Usage{InputTokens: in, OutputTokens: out}
}

// recordedTurnUsage is what codex 0.171.0's token_usage_record lines say
// each turn used (its last turn_token_usage, by turn id): a second record
// of the same counts, which the reader does not read, to check it against.
func recordedTurnUsage(t *testing.T, path string) map[string]*harness.Usage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*harness.Usage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxRolloutLine)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				TurnID string     `json:"turn_id"`
				Turn   tokenUsage `json:"turn_token_usage"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "token_usage_record" {
			continue
		}
		u := l.Payload.Turn
		out[l.Payload.TurnID] = &harness.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.Cached}
	}
	return out
}

func recordsRollout(t *testing.T, env map[string]string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(env["CODEX_HOME"], "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("rollouts: %q", paths)
	}
	return paths[0]
}

// The turns of the real captures (testdata/records_v*, made by
// e2e/realcli/cmd/capturerecords; testdata/records_v0.171.0.log says what
// each was; LEO_CODEX_RECORDS names another capture's directory), in
// order: each one's user text, reply, tools, outcome, codex's words for a
// failure and the tokens the model server reported.
func TestConversationOfRealRollout(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "records_v*"))
	if d := os.Getenv("LEO_CODEX_RECORDS"); d != "" {
		dirs = append(dirs, d)
	}
	n := 0
	for _, d := range dirs {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			continue
		}
		n++
		t.Run(filepath.Base(d), func(t *testing.T) { testConversationOfCapture(t, d) })
	}
	if n == 0 {
		t.Fatal("no capture")
	}
}

func testConversationOfCapture(t *testing.T, dir string) {
	forget()
	t.Cleanup(forget)
	env := copyHome(t, dir, time.Now())
	path := recordsRollout(t, env)
	thread := rolloutID(path)
	turns := conversationOf(t, env, thread)
	refused := `{"error":{"code":null,"message":"modelserver: scripted error","type":"server_error"}}`
	limit := "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at "
	want := []struct {
		what, user, reply string
		tools             []harness.ToolCall
		outcome           harness.TurnOutcome
		err               string
		usage             *harness.Usage
	}{
		{"plain", "say hello LEO-rec-001", "ACK LEO-rec-001", nil, harness.OutcomeOK, "", usage(10, 3)},
		{"tool", "run a tool LEO-rec-002", "ACK LEO-rec-002", []harness.ToolCall{{Name: "exec_command", Input: `{"cmd":"echo tool-ran"}`}}, harness.OutcomeOK, "", usage(20, 7)},
		// Interrupted before the model answered: codex still wrote a
		// token_count (the previous total again) — no tokens.
		{"interrupt", "a slow one LEO-rec-003", "", nil, harness.OutcomeInterrupted, "", nil},
		{"refused", "this one is refused LEO-rec-004", "", nil, harness.OutcomeError, refused, nil},
		{"queued pair", "held for a while LEO-rec-005\n\nqueued behind it LEO-rec-006", "ACK LEO-rec-006", nil, harness.OutcomeOK, "", usage(10, 3)},
		// /compact: a turn of its own, no user text; its summary is no reply.
		{"compact", "", "", nil, harness.OutcomeOK, "", usage(10, 3)},
		{"after", "after the compaction LEO-rec-007", "ACK LEO-rec-007", nil, harness.OutcomeOK, "", usage(10, 3)},
		{"cut", "stream a long one LEO-rec-008", "", nil, harness.OutcomeInterrupted, "", nil},
		{"last", "the last one LEO-rec-009", "ACK LEO-rec-009", nil, harness.OutcomeOK, "", usage(10, 3)},
		{"limited", "this one hits the limit LEO-rec-010", "", nil, harness.OutcomeError, limit, nil},
		{"after", "after the limit LEO-rec-011", "ACK LEO-rec-011", nil, harness.OutcomeOK, "", usage(10, 3)},
		{"ratelimit", "this one is rate limited LEO-rec-012", "", nil, harness.OutcomeError, "exceeded retry limit, last status: 429 Too Many Requests", nil},
		{"recovered", "after the rate limit LEO-rec-013", "ACK LEO-rec-013", nil, harness.OutcomeOK, "", usage(10, 3)},
	}
	if len(turns) != len(want) {
		for _, tr := range turns {
			t.Logf("%+v", tr)
		}
		t.Fatalf("%d turns, want %d", len(turns), len(want))
	}
	recorded := recordedTurnUsage(t, path)
	var prevEnd time.Time
	for i, w := range want {
		got := turns[i]
		errOK := got.Error == w.err || (w.err == limit && strings.HasPrefix(got.Error, limit)) // the reset time is the capture's
		if got.User != w.user || got.Reply != w.reply || got.Outcome != w.outcome || !errOK {
			t.Errorf("turn %d (%s): user %q reply %q outcome %q error %q; want %q %q %q %q", i, w.what, got.User, got.Reply, got.Outcome, got.Error, w.user, w.reply, w.outcome, w.err)
		}
		if !reflect.DeepEqual(got.Tools, w.tools) {
			t.Errorf("turn %d (%s): tools %+v, want %+v", i, w.what, got.Tools, w.tools)
		}
		if !reflect.DeepEqual(got.Usage, w.usage) {
			t.Errorf("turn %d (%s): usage %+v, want %+v", i, w.what, got.Usage, w.usage)
		}
		// codex's per-turn usage record agrees (it has none where no
		// model answered).
		if r := recorded[got.ID]; !reflect.DeepEqual(r, w.usage) {
			t.Errorf("turn %d (%s): token_usage_record says %+v, the reader %+v", i, w.what, r, got.Usage)
		}
		if len(got.ID) != 36 || got.StartedAt.IsZero() || got.EndedAt.Before(got.StartedAt) || got.StartedAt.Before(prevEnd) || got.CostUSD != nil {
			t.Errorf("turn %d (%s): id %q, %v..%v after %v, cost %v", i, w.what, got.ID, got.StartedAt, got.EndedAt, prevEnd, got.CostUSD)
		}
		prevEnd = got.EndedAt
	}
	if filepath.Base(dir) == "records_v0.171.0" && (turns[0].ID != "01a23705-429b-7cb3-b1bc-0278dd91e730" ||
		!turns[0].StartedAt.Equal(time.Date(2026, 12, 2, 13, 50, 21, 347e6, time.UTC)) || !turns[0].EndedAt.Equal(time.Date(2026, 12, 2, 13, 50, 21, 430e6, time.UTC))) {
		t.Errorf("first turn: %s %v..%v, want task_started's turn id and times", turns[0].ID, turns[0].StartedAt, turns[0].EndedAt)
	}
}

// A failed turn's Error is TurnActivity's Failed: the same words.
func TestConversationErrorIsTurnActivityFailed(t *testing.T) {
	inUTC(t)
	for _, marker := range []string{"LEO-rec-004", "LEO-rec-010", "LEO-rec-012"} {
		forget()
		env := recordsUpTo(t, marker)
		a, err := Codex{}.TurnActivity(context.Background(), harness.SessionQuery{Env: env}, recordsThread)
		if err != nil {
			t.Fatal(err)
		}
		turns := conversationOf(t, env, recordsThread)
		last := turns[len(turns)-1]
		if a.Failed == "" || last.Error != a.Failed || last.Outcome != harness.OutcomeError {
			t.Errorf("%s: conversation says %q (%s), TurnActivity %q", marker, last.Error, last.Outcome, a.Failed)
		}
	}
	forget()
}

// Multi-line and long messages come back as codex stored them: equal to
// what was pasted modulo white space (the witness's texts, which leo
// already matches deliveries with), paragraphs and indentation kept; two
// messages of one turn joined with a blank line.
func TestConversationUserTextsOfRealRollouts(t *testing.T) {
	forget()
	t.Cleanup(forget)
	env := realHome(t, time.Now())
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, id := range []string{fiveThread, agentsThread} {
		turns := conversationOf(t, env, id)
		users, err := Codex{}.UserTurns(context.Background(), harness.SessionQuery{Env: env}, id)
		if err != nil {
			t.Fatal(err)
		}
		var joined []string
		for _, tr := range turns {
			joined = append(joined, tr.User)
		}
		if norm(strings.Join(joined, " ")) != norm(strings.Join(texts(users), " ")) {
			t.Errorf("%s: conversation users %q, witness %q", id, joined, texts(users))
		}
	}
	five := conversationOf(t, env, fiveThread)
	var long harness.Turn
	for _, tr := range five {
		if strings.HasPrefix(tr.User, "word0000") {
			long = tr
		}
	}
	if len(long.User) < 4000 || long.Reply != "OK reply 14: 4000 chars" {
		t.Errorf("the 4,000-character message: %d bytes, reply %q", len(long.User), long.Reply)
	}
	var found []string
	for _, tr := range conversationOf(t, env, agentsThread) {
		switch tr.User {
		case "first of two\n\nsecond of two", "para one\n\npara two\n   indented three":
			found = append(found, tr.User+" → "+tr.Reply)
		}
	}
	want := []string{"first of two\n\nsecond of two → OK reply 156: second of two", "para one\n\npara two\n   indented three → OK reply 159: para one para two indented three"}
	if !reflect.DeepEqual(found, want) {
		t.Errorf("folded and indented messages: %q, want %q", found, want)
	}
}

// A turn still running is the last, with what it has so far; a second
// call reads only the appended bytes (a line still being written not
// until it is whole), and ends with the same turns as a first read of
// the whole file.
func TestConversationReadsOnlyWhatWasAppended(t *testing.T) {
	forget()
	t.Cleanup(forget)
	env := recordsUpTo(t, "")
	path := recordsRollout(t, env)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := conversationOf(t, env, recordsThread)
	forget()

	// Cut after LEO-rec-005's message, before LEO-rec-006 was queued into its turn.
	i := bytes.Index(full, []byte(`"text":"held for a while LEO-rec-005","text_elements"`))
	cut := i + bytes.IndexByte(full[i:], '\n') + 1
	if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	turns := conversationOf(t, env, recordsThread)
	last := turns[len(turns)-1]
	if len(turns) != 5 || last.Outcome != harness.OutcomeRunning || last.User != "held for a while LEO-rec-005" || last.Reply != "" || !last.EndedAt.IsZero() || last.ID != "01a23705-52b1-7af0-a9e1-f644baf6fabe" {
		t.Fatalf("mid-turn: %d turns, last %+v", len(turns), last)
	}
	// Half of the next line: not read until it is whole.
	next := cut + bytes.IndexByte(full[cut:], '\n') + 1
	half := cut + (next-cut)/2
	appendTo(t, path, string(full[cut:half]))
	before := bytesRead.Load()
	if again := conversationOf(t, env, recordsThread); !reflect.DeepEqual(again, turns) {
		t.Fatalf("a half-written line changed the turns: %+v", again[len(again)-1])
	}
	if n := bytesRead.Load() - before; n != 0 {
		t.Fatalf("read %d bytes of a line still being written", n)
	}
	appendTo(t, path, string(full[half:]))
	before = bytesRead.Load()
	turns = conversationOf(t, env, recordsThread)
	if n := bytesRead.Load() - before; n != int64(len(full)-cut) {
		t.Fatalf("second call read %d bytes, want the %d appended", n, len(full)-cut)
	}
	if !reflect.DeepEqual(turns, whole) {
		t.Fatalf("read in two parts: %d turns, a first read of the whole: %d", len(turns), len(whole))
	}
	// A caller's changes to what it got are not the cache's.
	turns[1].Tools[0].Name = "changed"
	if again := conversationOf(t, env, recordsThread); again[1].Tools[0].Name != "exec_command" {
		t.Fatal("the cached turns were handed out, not copied")
	}
}

// The witness (UserTurns, TurnActivity, asked with a Since) and the
// conversation (from the start) share one cached read of the rollout:
// either order gives each its own answer.
func TestConversationAndWitnessShareTheRead(t *testing.T) {
	forget()
	t.Cleanup(forget)
	env := recordsUpTo(t, "")
	since := time.Date(2026, 12, 2, 13, 50, 38, 0, time.UTC) // from LEO-rec-009 on
	q := harness.SessionQuery{Env: env, Since: since}
	users := func() []string {
		u, err := Codex{}.UserTurns(context.Background(), q, recordsThread)
		if err != nil {
			t.Fatal(err)
		}
		return texts(u)
	}
	wantUsers := []string{"the last one LEO-rec-009", "this one hits the limit LEO-rec-010", "after the limit LEO-rec-011", "this one is rate limited LEO-rec-012", "after the rate limit LEO-rec-013"}
	if got := users(); !reflect.DeepEqual(got, wantUsers) {
		t.Fatalf("witness first: %q", got)
	}
	if turns := conversationOf(t, env, recordsThread); len(turns) != 13 {
		t.Fatalf("conversation after the witness: %d turns, want 13", len(turns))
	}
	before := bytesRead.Load()
	if got := users(); !reflect.DeepEqual(got, wantUsers) {
		t.Fatalf("witness after the conversation: %q", got)
	}
	a, err := Codex{}.TurnActivity(context.Background(), q, recordsThread)
	if err != nil || a.Ended != 5 || a.Running {
		t.Fatalf("activity after the conversation: %+v, %v", a, err)
	}
	if turns := conversationOf(t, env, recordsThread); len(turns) != 13 {
		t.Fatalf("conversation again: %d turns", len(turns))
	}
	if n := bytesRead.Load() - before; n != 0 {
		t.Fatalf("the witness and the conversation read %d bytes again of an unchanged rollout", n)
	}
}

// No rollout for the thread (yet): no turns, no error.
func TestConversationOfNoRollout(t *testing.T) {
	forget()
	env := recordsUpTo(t, "")
	for _, id := range []string{"01a23705-0000-7000-8000-000000000000", "../x"} {
		if turns := conversationOf(t, env, id); len(turns) != 0 {
			t.Errorf("%q: %d turns", id, len(turns))
		}
	}
	if turns := conversationOf(t, map[string]string{"CODEX_HOME": t.TempDir()}, recordsThread); len(turns) != 0 {
		t.Errorf("empty home: %d turns", len(turns))
	}
}

// The tool calls codex's protocol defines besides function_call, each
// with its input as compact JSON cut at ToolInputMax; the older records
// (event_msg user_message and agent_message, no task_started) make turns
// too, each known by the offset of its first record.
func TestConversationToolsAndOlderShapes(t *testing.T) {
	forget()
	t.Cleanup(forget)
	long := strings.Repeat("a", 3*harness.ToolInputMax)
	env, path := writeRollout(t, "o1", "/w",
		`{"timestamp":"2026-11-30T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"patch it","images":[]}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:02.000Z","type":"response_item","payload":{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:03.000Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c2","status":"completed","action":{"type":"exec","command":["ls", "-l"]}}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"mcp__leo__send","arguments":"{\"text\": \"`+long+`\"}","call_id":"c3"}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:05.000Z","type":"event_msg","payload":{"type":"agent_message","message":"patched"}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:06.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":50,"cached_input_tokens":20,"output_tokens":5},"last_token_usage":{"input_tokens":50,"cached_input_tokens":20,"output_tokens":5}}}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:07.000Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":null}}`+"\n",
		`{"timestamp":"2026-11-30T10:00:08.000Z","type":"event_msg","payload":{"type":"user_message","message":"and again","images":[]}}`+"\n",
	)
	turns := conversationOf(t, env, "o1")
	if len(turns) != 2 {
		t.Fatalf("%d turns: %+v", len(turns), turns)
	}
	first, second := turns[0], turns[1]
	b, _ := os.ReadFile(path)
	if first.ID != "@"+itoa(bytes.Index(b, []byte(`{"timestamp":"2026-11-30T10:00:01`))) || first.User != "patch it" || first.Reply != "patched" || first.Outcome != harness.OutcomeOK {
		t.Errorf("first: %+v", first)
	}
	if len(first.Tools) != 3 || first.Tools[0] != (harness.ToolCall{Name: "apply_patch", Input: `"*** Begin Patch\n*** End Patch"`}) ||
		first.Tools[1] != (harness.ToolCall{Name: "local_shell", Input: `{"type":"exec","command":["ls","-l"]}`}) ||
		first.Tools[2].Name != "mcp__leo__send" || len(first.Tools[2].Input) > harness.ToolInputMax || !strings.HasPrefix(first.Tools[2].Input, `{"text":"aaa`) || !strings.HasSuffix(first.Tools[2].Input, "…") {
		t.Errorf("tools: %+v", first.Tools)
	}
	if !reflect.DeepEqual(first.Usage, &harness.Usage{InputTokens: 50, OutputTokens: 5, CacheReadTokens: 20}) {
		t.Errorf("usage: %+v", first.Usage)
	}
	if second.User != "and again" || second.Outcome != harness.OutcomeRunning || second.ID == first.ID || second.Usage != nil {
		t.Errorf("second: %+v", second)
	}
	forget()
	if again := conversationOf(t, env, "o1"); !reflect.DeepEqual(again, turns) {
		t.Errorf("read again: ids %s %s, first %s %s", again[0].ID, again[1].ID, turns[0].ID, turns[1].ID)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A turn that a new task_started follows without an end of its own
// (codex stopped in it) has ended: interrupted, or failed in the words of
// the error event it recorded; ended at its last record.
func TestConversationTurnWithNoEnd(t *testing.T) {
	forget()
	t.Cleanup(forget)
	started := func(ts, id string) string {
		return `{"timestamp":"2026-11-30T10:00:` + ts + `Z","type":"event_msg","payload":{"type":"task_started","turn_id":"` + id + `"}}` + "\n"
	}
	env, _ := writeRollout(t, "n1", "/w",
		started("01.000", "t1"), userLine(time.Date(2026, 11, 30, 10, 0, 2, 0, time.UTC), "stopped in"),
		started("05.000", "t2"), userLine(time.Date(2026, 11, 30, 10, 0, 6, 0, time.UTC), "fails"),
		`{"timestamp":"2026-11-30T10:00:07.000Z","type":"event_msg","payload":{"type":"error","message":"stream disconnected for good"}}`+"\n",
		started("09.000", "t3"),
	)
	turns := conversationOf(t, env, "n1")
	if len(turns) != 3 {
		t.Fatalf("%d turns: %+v", len(turns), turns)
	}
	if a := turns[0]; a.ID != "t1" || a.Outcome != harness.OutcomeInterrupted || !a.EndedAt.Equal(time.Date(2026, 11, 30, 10, 0, 2, 0, time.UTC)) || a.User != "stopped in" {
		t.Errorf("stopped: %+v", a)
	}
	if b := turns[1]; b.Outcome != harness.OutcomeError || b.Error != "stream disconnected for good" || !b.EndedAt.Equal(time.Date(2026, 11, 30, 10, 0, 7, 0, time.UTC)) {
		t.Errorf("failed: %+v", b)
	}
	if c := turns[2]; c.ID != "t3" || c.Outcome != harness.OutcomeRunning || c.User != "" {
		t.Errorf("running: %+v", c)
	}
}
