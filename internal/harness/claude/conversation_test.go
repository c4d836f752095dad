package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"pgregory.net/rapid"
)

// wantTurn is what a test asserts of one turn.
type wantTurn struct {
	user    string
	outcome harness.TurnOutcome
	reply   string // prefix, for the turn cut mid-stream
	tools   []harness.ToolCall
	err     string
	usage   *harness.Usage
}

// The turns of testdata/records_v*.jsonl (activity_test.go says what each
// LEO-rec-00N was). u8 is the usage of 008, interrupted mid-stream:
// 2.1.197 records claude's own zero-usage stand-in for the cut message,
// 2.1.332 what the stream had said (10 in, 1 out).
func recordsTurns(u8 *harness.Usage) []wantTurn {
	ack := func(n int) string { return fmt.Sprintf("ACK LEO-rec-%03d", n) }
	one := &harness.Usage{InputTokens: 10, OutputTokens: 3}
	return []wantTurn{
		{user: "say hello LEO-rec-001", outcome: harness.OutcomeOK, reply: ack(1), usage: one},
		// Two messages: msg_5 (written as two lines, its empty text block
		// and its tool call, each with its usage: counted once) and msg_6.
		{user: "run a tool LEO-rec-002", outcome: harness.OutcomeOK, reply: ack(2),
			tools: []harness.ToolCall{{Name: "Bash", Input: `{"command":"echo tool-ran","description":"say tool-ran"}`}},
			usage: &harness.Usage{InputTokens: 20, OutputTokens: 8}},
		// Escape before the model answered: claude writes no end.
		{user: "a slow one LEO-rec-003", outcome: harness.OutcomeInterrupted},
		// HTTP 400: the API error entry is claude's, not the model's: no usage.
		{user: "this one is refused LEO-rec-004", outcome: harness.OutcomeError, err: "API Error: 400 modelserver: scripted error"},
		{user: "held for a while LEO-rec-005", outcome: harness.OutcomeOK, reply: ack(5), usage: one},
		{user: "queued behind it LEO-rec-006", outcome: harness.OutcomeOK, reply: ack(6), usage: one},
		// /compact and its entries are no turn.
		{user: "after the compaction LEO-rec-007", outcome: harness.OutcomeOK, reply: ack(7), usage: one},
		{user: "stream a long one LEO-rec-008", outcome: harness.OutcomeInterrupted, reply: ack(8) + " this answer streams word by word", usage: u8},
		{user: "the last one LEO-rec-009", outcome: harness.OutcomeOK, reply: ack(9), usage: one},
	}
}

func recordsWant(version string) []wantTurn {
	if version == "2.1.332" || version == "extra" {
		return recordsTurns(&harness.Usage{InputTokens: 10, OutputTokens: 1})
	}
	return recordsTurns(nil)
}

// conversationOf installs data as conversation id's transcript and reads it.
func conversationOf(t *testing.T, data []byte) []harness.Turn {
	t.Helper()
	ws := "/tmp/caprec/ws"
	env := map[string]string{"HOME": t.TempDir()}
	path := TranscriptPath(env, ws, recordsID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	turns, err := (Claude{}).Conversation(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}, recordsID)
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

func readTestdata(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fileTurn is a turn as the transcript's lines say it, read in file order
// by a reader much simpler than the adapter's (it only works on captures
// written in order): the user entry's uuid and time, and the time of the
// first end after it before the next turn.
type fileTurn struct {
	id         string
	start, end time.Time
}

func fileTurns(t *testing.T, data []byte) []fileTurn {
	t.Helper()
	var out []fileTurn
	for _, line := range strings.Split(string(data), "\n") {
		var e transcriptEntry
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		text, _ := userText(e.Message.Content)
		text = strings.TrimSpace(text)
		isEnd := e.Subtype == "turn_duration" || e.IsAPIErrorMessage || (e.Type == "user" && strings.HasPrefix(text, "[Request interrupted by user"))
		switch {
		case isEnd && len(out) > 0 && out[len(out)-1].end.IsZero():
			out[len(out)-1].end = e.Timestamp
		case isEnd:
		case e.Type == "user" && !e.IsMeta && !e.IsCompactSummary && text != "" && !strings.HasPrefix(text, "<"):
			if e.Message.Content[0] == '[' && strings.Contains(string(e.Message.Content), "tool_result") {
				continue
			}
			out = append(out, fileTurn{id: e.UUID, start: e.Timestamp})
		}
	}
	return out
}

// checkTurns asserts got against want, and each turn's id and times
// against the file's own lines.
func checkTurns(t *testing.T, data []byte, got []harness.Turn, want []wantTurn) {
	t.Helper()
	if len(got) != len(want) {
		for _, g := range got {
			t.Logf("  %q %s %q", g.User, g.Outcome, g.Reply)
		}
		t.Fatalf("%d turns, want %d", len(got), len(want))
	}
	ft := fileTurns(t, data)
	if len(ft) != len(want) {
		t.Fatalf("the file has %d turns by its lines, want %d", len(ft), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.User != w.user || g.Outcome != w.outcome || g.Error != w.err || !strings.HasPrefix(g.Reply, w.reply) || (w.reply == "") != (g.Reply == "") {
			t.Errorf("turn %d: user %q, outcome %s, error %q, reply %q\nwant user %q, outcome %s, error %q, reply %q…", i+1, g.User, g.Outcome, g.Error, g.Reply, w.user, w.outcome, w.err, w.reply)
		}
		if !reflect.DeepEqual(g.Tools, w.tools) {
			t.Errorf("turn %d (%s): tools %+v, want %+v", i+1, w.user, g.Tools, w.tools)
		}
		if !reflect.DeepEqual(g.Usage, w.usage) {
			t.Errorf("turn %d (%s): usage %+v, want %+v", i+1, w.user, g.Usage, w.usage)
		}
		if g.CostUSD != nil {
			t.Errorf("turn %d: a cost, which claude's transcript has none of", i+1)
		}
		if g.ID != ft[i].id || !g.StartedAt.Equal(ft[i].start) {
			t.Errorf("turn %d: id %s at %s, want the user entry's %s at %s", i+1, g.ID, g.StartedAt, ft[i].id, ft[i].start)
		}
		wantEnd := ft[i].end
		switch {
		case w.outcome == harness.OutcomeRunning:
			wantEnd = time.Time{}
		case wantEnd.IsZero() && i+1 < len(ft): // no end recorded: ended as the next began
			wantEnd = ft[i+1].start
		}
		if !g.EndedAt.Equal(wantEnd) {
			t.Errorf("turn %d (%s): ended %s, want %s", i+1, w.user, g.EndedAt, wantEnd)
		}
	}
}

// The real captures' turns, in order, each with its outcome, reply, tool
// calls and usage. LEO_CLAUDE_RECORDS names another capture of the same
// turns (capturerecords -out) to check as a newest claude (2.1.332's
// usage).
func TestConversationOfRealTranscripts(t *testing.T) {
	versions := append([]string(nil), recordVersions...)
	if os.Getenv("LEO_CLAUDE_RECORDS") != "" {
		versions = append(versions, "extra")
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			var data []byte
			if v == "extra" {
				var err error
				if data, err = os.ReadFile(os.Getenv("LEO_CLAUDE_RECORDS")); err != nil {
					t.Fatal(err)
				}
			} else {
				data = readTestdata(t, recordsFile(v))
			}
			checkTurns(t, data, conversationOf(t, data), recordsWant(v))
		})
	}
}

// Read as claude writes it, line by line, each read reads only the line
// appended; the last turn runs exactly when TurnActivity says a turn runs;
// a turn once ended never changes; and the turns read so are those of one
// read of the whole file.
func TestConversationReadAsWritten(t *testing.T) {
	for _, v := range recordVersions {
		t.Run(v, func(t *testing.T) {
			data := readTestdata(t, recordsFile(v))
			q := replayQuery(t)
			var last []harness.Turn
			replayInto(t, data, q, func(line string, read func() harness.TurnActivity) {
				a := read()
				before := bytesRead.Load()
				got, err := (Claude{}).Conversation(context.Background(), q, recordsID)
				if err != nil {
					t.Fatal(err)
				}
				if n := bytesRead.Load() - before; n != int64(len(line)) {
					t.Fatalf("after %.80s: read %d bytes, want the %d appended", line, n, len(line))
				}
				running := len(got) > 0 && got[len(got)-1].Outcome == harness.OutcomeRunning
				if running != a.Running {
					t.Fatalf("after %.80s: last turn %s, TurnActivity says running %v", line, got[len(got)-1].Outcome, a.Running)
				}
				if len(got) < len(last) {
					t.Fatalf("after %.80s: %d turns, were %d", line, len(got), len(last))
				}
				for i, p := range last {
					if p.Outcome != harness.OutcomeRunning && !reflect.DeepEqual(p, got[i]) {
						t.Fatalf("after %.80s: ended turn %d changed:\n%+v\n%+v", line, i+1, p, got[i])
					}
				}
				last = got
			})
			conversations.Forget()
			whole, err := (Claude{}).Conversation(context.Background(), q, recordsID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(whole, last) {
				t.Fatalf("read line by line:\n%+v\nread whole:\n%+v", last, whole)
			}
			checkTurns(t, data, last, recordsWant(v))
		})
	}
}

// claude 2.1.197 writing a first turn's end before its user entry
// (endBeforeStart) gives the same turns as the file in order: that turn
// ended ok, it never seems to run on or to be interrupted.
func TestConversationEndWrittenBeforeItsStart(t *testing.T) {
	inOrder := conversationOf(t, readTestdata(t, recordsFile("hooks-2.1.197")))
	got := conversationOf(t, endBeforeStart(t))
	if !reflect.DeepEqual(got, inOrder) {
		t.Fatalf("reordered:\n%+v\nin order:\n%+v", got, inOrder)
	}
	if got[0].Outcome != harness.OutcomeOK || got[0].Reply != "ACK LEO-rec-001" {
		t.Fatalf("first turn %+v", got[0])
	}
}

// A turn answered HTTP 429 failed, in claude's words; 2.1.332 writes no
// turn_duration after the error entry, 2.1.197 does: one end either way.
func TestConversationRateLimitOfRealTranscripts(t *testing.T) {
	for _, v := range []string{"2.1.197", "2.1.332"} {
		data := readTestdata(t, "ratelimit_v"+v+".jsonl")
		checkTurns(t, data, conversationOf(t, data), []wantTurn{{user: "rate limit this LEO-lim-001", outcome: harness.OutcomeError,
			err: "API Error: Request rejected (429) · modelserver: scripted error"}})
	}
}

// transcript_v2.1.197.jsonl: a three-line paste comes back as stored, with
// its newlines; a 4,000-character one whole; the last turn has no end yet:
// running. transcript-tool_v2.1.197.jsonl: a turn with a tool call (that
// capture's model server named every message msg_1: a turn's usage is
// that of one message). compact_v2.1.197.jsonl: /compact, declined or
// done, is no turn.
func TestConversationOfOtherRealTranscripts(t *testing.T) {
	five := &harness.Usage{InputTokens: 10, OutputTokens: 5}
	data := readTestdata(t, "transcript_v2.1.197.jsonl")
	var long string
	for _, line := range strings.Split(string(data), "\n") {
		if u, ok := decodeUserTurn([]byte(line), "x"); ok && strings.HasPrefix(u.Text, "MARK4K") {
			long = u.Text
		}
	}
	if len(long) < 4000 {
		t.Fatalf("the long paste is %d bytes", len(long))
	}
	checkTurns(t, data, conversationOf(t, data), []wantTurn{
		{user: "say hello MARK1", outcome: harness.OutcomeOK, reply: "echo: ok", usage: five},
		{user: "line one MARK3L\nline two\nline three", outcome: harness.OutcomeOK, reply: "echo: MARK3L", usage: five},
		{user: long, outcome: harness.OutcomeOK, reply: "echo: MARK4K", usage: five},
		{user: "this will fail MARK5", outcome: harness.OutcomeRunning},
	})

	data = readTestdata(t, "transcript-tool_v2.1.197.jsonl")
	checkTurns(t, data, conversationOf(t, data), []wantTurn{
		{user: "run a tool MARKTOOL", outcome: harness.OutcomeOK, reply: "echo: ok", usage: five},
		{user: "run a tool MARKTOOL", outcome: harness.OutcomeOK, reply: "echo: ok", usage: five,
			tools: []harness.ToolCall{{Name: "Bash", Input: `{"command":"echo tool-ran","description":"Print a word"}`}}},
	})

	data = readTestdata(t, "compact_v2.1.197.jsonl")
	one := &harness.Usage{InputTokens: 10, OutputTokens: 3}
	checkTurns(t, data, conversationOf(t, data), []wantTurn{
		{user: "Please answer LEO-cap-claude-001", outcome: harness.OutcomeOK, reply: "ACK LEO-cap-claude-001", usage: one},
		{user: "Please answer LEO-cap-claude-002", outcome: harness.OutcomeOK, reply: "ACK LEO-cap-claude-002", usage: one},
		{user: "Please answer LEO-cap-claude-003", outcome: harness.OutcomeOK, reply: "ACK LEO-cap-claude-003", usage: one},
	})
}

// assistantLine is an assistant entry shaped as 2.1.332 writes one
// content block of a message.
func assistantLine(at time.Time, msgID, block string, usage string, sidechain bool) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":%v,"message":{"content":[%s],"id":"%s","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"type":"message","usage":%s},"type":"assistant","uuid":"u-%s","timestamp":"%s","sessionId":"%s"}`+"\n",
		sidechain, block, msgID, usage, msgID, at.UTC().Format(time.RFC3339Nano), realID)
}

// The reply is the text of the last message after the last tool call (a
// message's text blocks joined, text before a tool call not the reply);
// a tool's input is compact JSON cut at ToolInputMax; a message written
// as several lines counts once, at the most any of its lines says; a
// sub-agent's (sidechain) entries are not the turn's.
func TestConversationReplyToolsAndUsage(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	big := strings.Repeat("y", 3*harness.ToolInputMax)
	usage := func(in, out, cr, cw int) string {
		return fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d}`, in, cw, cr, out)
	}
	lines := userLine(at(0), "do it") +
		assistantLine(at(1), "msg_a", `{"type":"text","text":"Let me look."}`, usage(7, 2, 0, 0), false) +
		assistantLine(at(2), "msg_a", `{"id":"t1","input":{ "file_path" : "/x", "pad": "`+big+`"},"name":"Read","type":"tool_use"}`, usage(7, 9, 0, 0), false) +
		toolLine(at(3), "contents") +
		assistantLine(at(4), "msg_s", `{"type":"text","text":"a sub-agent's words"}`, usage(1000, 1000, 0, 0), true) +
		assistantLine(at(4), "msg_s", `{"id":"t2","input":{},"name":"Grep","type":"tool_use"}`, usage(1000, 1000, 0, 0), true) +
		assistantLine(at(5), "msg_b", `{"type":"text","text":"Part one."}`, usage(5, 1, 100, 50), false) +
		assistantLine(at(6), "msg_b", `{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Part two."}`, usage(5, 4, 100, 50), false) +
		fmt.Sprintf(`{"type":"system","subtype":"turn_duration","durationMs":7,"timestamp":"%s","uuid":"e1","isSidechain":false}`+"\n", at(7).Format(time.RFC3339Nano))
	got := conversationOf(t, []byte(lines))
	if len(got) != 1 {
		t.Fatalf("%d turns: %+v", len(got), got)
	}
	g := got[0]
	if g.Reply != "Part one.\n\nPart two." || g.Outcome != harness.OutcomeOK || !g.EndedAt.Equal(at(7)) {
		t.Fatalf("reply %q, outcome %s, ended %s", g.Reply, g.Outcome, g.EndedAt)
	}
	if len(g.Tools) != 1 || g.Tools[0].Name != "Read" || len(g.Tools[0].Input) > harness.ToolInputMax ||
		!strings.HasPrefix(g.Tools[0].Input, `{"file_path":"/x","pad":"yyy`) || !strings.HasSuffix(g.Tools[0].Input, "…") {
		t.Fatalf("tools %.200v", g.Tools)
	}
	want := harness.Usage{InputTokens: 7 + 5, OutputTokens: 9 + 4, CacheReadTokens: 100, CacheWriteTokens: 50}
	if g.Usage == nil || *g.Usage != want {
		t.Fatalf("usage %+v, want %+v", g.Usage, want)
	}
}

// A user text longer than TurnTextMax is cut there.
func TestConversationCutsLongTexts(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	got := conversationOf(t, []byte(userLine(t0, strings.Repeat("é", harness.TurnTextMax))))
	if len(got) != 1 || len(got[0].User) > harness.TurnTextMax || !strings.HasSuffix(got[0].User, "…") || got[0].Outcome != harness.OutcomeRunning {
		t.Fatalf("%d turns, user of %d bytes", len(got), len(got[0].User))
	}
}

// No transcript is no turns; an id that is not claude's has no record; an
// empty id is the caller's mistake.
func TestConversationWithoutRecord(t *testing.T) {
	q := harness.SessionQuery{Workspace: "/ws", Env: map[string]string{"HOME": t.TempDir()}}
	for _, id := range []string{realID, "../../etc/passwd"} {
		if got, err := (Claude{}).Conversation(context.Background(), q, id); err != nil || got != nil {
			t.Fatalf("%s: %+v, %v", id, got, err)
		}
	}
	if _, err := (Claude{}).Conversation(context.Background(), q, ""); err == nil {
		t.Fatal("no error for an empty id")
	}
}

// A transcript truncated or replaced is read again from its start.
func TestConversationRereadsAReplacedTranscript(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	q, path := writeTailTranscript(t, userLine(t0, "one"), userLine(t0.Add(time.Second), "two"))
	users := func() []string {
		turns, err := (Claude{}).Conversation(context.Background(), q, realID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range turns {
			out = append(out, x.User+":"+string(x.Outcome))
		}
		return out
	}
	if got := users(); !reflect.DeepEqual(got, []string{"one:interrupted", "two:running"}) {
		t.Fatalf("first: %q", got)
	}
	if err := os.WriteFile(path, []byte(userLine(t0, "uno")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := users(); !reflect.DeepEqual(got, []string{"uno:running"}) {
		t.Fatalf("after truncation: %q", got)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(userLine(t0, "un")+userLine(t0.Add(time.Second), "deux")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got := users(); !reflect.DeepEqual(got, []string{"un:interrupted", "deux:running"}) {
		t.Fatalf("after replacement: %q", got)
	}
}

// bigTranscript writes a transcript of about size bytes made of the real
// 2.1.332 tool turn (LEO-rec-002: user entry, the assistant's two lines of
// msg_2, the tool result, the api-request line, the reply, turn_duration)
// repeated, each turn's tool output (which claude records twice: in the
// message and in toolUseResult) 20 KiB of source-like text. It returns the
// path, the file's size and the turns written.
func bigTranscript(tb testing.TB, env map[string]string, ws string, size int) (string, int64, int) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "records_v2.1.332.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	all := strings.Split(string(data), "\n")
	var turn []string
	for i, l := range all {
		if strings.Contains(l, `"content":"run a tool LEO-rec-002"`) {
			turn = all[i : i+7] // user … turn_duration
			break
		}
	}
	var kept []string
	for _, l := range turn {
		if !strings.Contains(l, `"type":"tools-used"`) {
			kept = append(kept, l)
		}
	}
	if len(kept) != 7 || !strings.Contains(kept[6], "turn_duration") {
		tb.Fatalf("the tool turn's lines: %d", len(kept))
	}
	var out strings.Builder
	for out.Len() < 20<<10 {
		fmt.Fprintf(&out, "internal/pkg/file_%d.go:%d:\\tfunc handle%d(ctx context.Context, req *Request) (*Response, error) {\\n", out.Len()%97, out.Len(), out.Len())
	}
	output := out.String()
	stamp := regexp.MustCompile(`"timestamp":"[^"]*"`)
	uuidRe := regexp.MustCompile(`"uuid":"[^"]*"`)
	path := TranscriptPath(env, ws, recordsID)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	written, turns := 0, 0
	for written < size {
		for j, l := range kept {
			at := t0.Add(time.Duration(turns)*time.Second + time.Duration(j)*time.Millisecond)
			l = stamp.ReplaceAllString(l, `"timestamp":"`+at.Format("2006-01-02T15:04:05.000Z")+`"`)
			l = uuidRe.ReplaceAllString(l, fmt.Sprintf(`"uuid":"turn-%d-%d"`, turns, j))
			l = strings.ReplaceAll(l, "run a tool LEO-rec-002", fmt.Sprintf("run a tool, turn %d", turns))
			l = strings.ReplaceAll(l, `"msg_2"`, fmt.Sprintf(`"msg_%d_a"`, turns))
			l = strings.ReplaceAll(l, `"msg_3"`, fmt.Sprintf(`"msg_%d_b"`, turns))
			l = strings.ReplaceAll(l, `"content":"tool-ran"`, `"content":"`+output+`"`)
			l = strings.ReplaceAll(l, `"stdout":"tool-ran"`, `"stdout":"`+output+`"`)
			n, _ := w.WriteString(l + "\n")
			written += n
		}
		turns++
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, int64(written), turns
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A 50 MB transcript, nearly all tool output, is read whole while the
// heap keeps only the turns: what is kept per turn is its user text,
// reply and tool input (about 130 bytes here) and a few hundred bytes of
// bookkeeping, so the heap after GC grows by far less than 1/16 of the
// file (the bound leaves room for the runtime's own growth; the figure
// itself is logged). Every turn is read, with its tool and usage.
func TestConversation50MBInBoundedMemory(t *testing.T) {
	ws := "/ws"
	env := map[string]string{"CLAUDE_CONFIG_DIR": t.TempDir()}
	_, size, n := bigTranscript(t, env, ws, 50<<20)
	conversations.Forget()
	before := heapAfterGC()
	turns, err := (Claude{}).Conversation(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}, recordsID)
	if err != nil {
		t.Fatal(err)
	}
	after := heapAfterGC()
	grown := int64(after) - int64(before)
	t.Logf("file %d bytes, %d turns; heap after GC grew %d bytes (%.2f%% of the file)", size, n, grown, 100*float64(grown)/float64(size))
	if grown > size/16 {
		t.Fatalf("the heap grew %d bytes reading a %d-byte file", grown, size)
	}
	if len(turns) != n {
		t.Fatalf("%d turns, want %d", len(turns), n)
	}
	last := turns[n-1]
	if last.User != fmt.Sprintf("run a tool, turn %d", n-1) || last.Reply != "ACK LEO-rec-002" || last.Outcome != harness.OutcomeOK ||
		len(last.Tools) != 1 || last.Usage == nil || last.Usage.OutputTokens != 8 {
		t.Fatalf("last turn %+v", last)
	}
	runtime.KeepAlive(turns)
}

// BenchmarkConversation50MB reads a 50 MB transcript (bigTranscript):
// "first" with nothing cached, "repeated" once cached (one turn appended
// between reads, as claude goes on), and, as the floor in the same run,
// the same file read raw: "floor-readfile" (os.ReadFile) and
// "floor-lines" (a bufio reader counting its lines).
func BenchmarkConversation50MB(b *testing.B) {
	ws := "/ws"
	env := map[string]string{"CLAUDE_CONFIG_DIR": b.TempDir()}
	path, size, _ := bigTranscript(b, env, ws, 50<<20)
	q := harness.SessionQuery{Workspace: ws, Env: env}
	// cpu-ms/op next to ns/op: the machine may be shared, and CPU time
	// is what a read costs.
	cpu := func(b *testing.B, run func(i int)) {
		var spent time.Duration
		for i := 0; i < b.N; i++ {
			c0 := cpuTime()
			run(i)
			spent += cpuTime() - c0
		}
		b.ReportMetric(float64(spent.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	read := func(b *testing.B) []harness.Turn {
		turns, err := (Claude{}).Conversation(context.Background(), q, recordsID)
		if err != nil {
			b.Fatal(err)
		}
		return turns
	}
	b.Run("first", func(b *testing.B) {
		b.SetBytes(size)
		cpu(b, func(int) { conversations.Forget(); read(b) })
	})
	b.Run("repeated", func(b *testing.B) {
		read(b)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
		b.ResetTimer()
		cpu(b, func(i int) {
			b.StopTimer()
			f.WriteString(userLine(t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("more %d", i)))
			b.StartTimer()
			read(b)
		})
	})
	b.Run("floor-readfile", func(b *testing.B) {
		b.SetBytes(size)
		cpu(b, func(int) {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("floor-lines", func(b *testing.B) {
		b.SetBytes(size)
		cpu(b, func(int) {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReaderSize(f, 64<<10)
			lines := 0
			for {
				_, err := r.ReadSlice('\n')
				if err == nil {
					lines++
				} else if err != bufio.ErrBufferFull {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
			}
			f.Close()
		})
	})
}

// toolResultOnly never skips a line the decoder reads as anything: a turn
// start or end, a user message, an assistant entry. Lines are entries
// written every way JSON allows (key case and escapes, spacing, repeated
// keys, part types, content a string or parts) and any bytes; and the
// real captures' tool results are skipped.
func TestToolResultOnlyNeverSkipsADecodedLine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Half the lines are plain, as claude writes them (most of those
		// are skipped); the others spell keys and values with escapes and
		// keys in other cases (none of those may be).
		plain := rapid.Bool().Draw(t, "plain")
		str := func(label, s string) string {
			if plain || !rapid.Bool().Draw(t, label) {
				b, _ := json.Marshal(s)
				return string(b)
			}
			var b strings.Builder
			b.WriteByte('"')
			for _, r := range s {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			b.WriteByte('"')
			return b.String()
		}
		key := func(label, k string) string {
			if !plain && rapid.Bool().Draw(t, label+"-case") {
				k = strings.ToUpper(k[:1]) + k[1:]
			}
			return str(label, k)
		}
		sp := func(label string) string { return rapid.SampledFrom([]string{"", " ", "\n\t"}).Draw(t, label) }
		obj := func(fields []string) string {
			return "{" + sp("o1") + strings.Join(rapid.Permutation(fields).Draw(t, "order"), ","+sp("o2")) + sp("o3") + "}"
		}
		var line string
		provable := plain // a plain tool result: must be skipped
		if !plain && rapid.Bool().Draw(t, "raw") {
			line = rapid.String().Draw(t, "line")
		} else {
			var parts []string
			for i := rapid.IntRange(0, 3).Draw(t, "parts"); i > 0; i-- {
				ptype := rapid.SampledFrom([]string{"tool_result", "text", "image", "te\\u0078t"}).Draw(t, "ptype")
				provable = provable && (ptype == "tool_result" || ptype == "image")
				inner := str("inner", rapid.SampledFrom([]string{"out \" put", `{"type":"text","text":"x"}`, `a\b\"`}).Draw(t, "out"))
				fields := []string{key("pk", "type") + ":" + sp("ps") + `"` + ptype + `"`, `"content":` + inner, `"text":"hi"`}
				if !plain && rapid.Bool().Draw(t, "dup-ptype") {
					fields = append(fields, `"type":"text"`)
				}
				parts = append(parts, obj(fields))
			}
			content := "[" + strings.Join(parts, ",") + "]"
			if !plain && rapid.Bool().Draw(t, "string-content") {
				content = str("c", "a message")
			}
			msg := obj([]string{key("mk", "content") + ":" + content, `"role":"user"`})
			typ := rapid.SampledFrom([]string{"user", "assistant", "system"}).Draw(t, "t")
			provable = provable && typ == "user"
			fields := []string{
				key("k1", "type") + ":" + sp("s1") + str("type", typ),
				key("k2", "message") + ":" + sp("s2") + msg,
				`"timestamp":"2026-12-02T00:54:08.276Z"`, `"uuid":"u1"`,
				`"toolUseResult":{"stdout":"x\"y","n":[1,2.5e3,true,null]}`,
			}
			if !plain && rapid.Bool().Draw(t, "dup-type") {
				fields = append(fields, `"type":"assistant"`)
			}
			line = obj(fields)
		}
		if !toolResultOnly([]byte(line)) {
			if provable {
				t.Fatalf("a plain tool result not skipped:\n%s", line)
			}
			return
		}
		var e transcriptEntry
		if json.Unmarshal([]byte(line), &e) != nil {
			return
		}
		if _, ok := markOf(e); ok {
			t.Fatalf("skipped a turn start or end:\n%s", line)
		}
		if _, ok := userTurnOf(e, "x"); ok || e.Type == "assistant" {
			t.Fatalf("skipped a user message or an assistant entry:\n%s", line)
		}
	})
	skipped := 0
	for _, f := range []string{"records_v2.1.197.jsonl", "records_v2.1.332.jsonl"} {
		for _, l := range strings.Split(string(readTestdata(t, f)), "\n") {
			if toolResultOnly([]byte(l)) {
				if !strings.Contains(l, `"tool_result"`) {
					t.Fatalf("skipped %.200s", l)
				}
				skipped++
			}
		}
	}
	if skipped != 2 {
		t.Fatalf("skipped %d of the captures' lines, want their 2 tool results", skipped)
	}
}

// Calls from several readers at once, while claude appends, each see
// every turn appended before they started.
func TestConversationConcurrentCalls(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	q, path := writeTailTranscript(t, userLine(t0, "turn 0"))
	for i := 1; i <= 20; i++ {
		appendTo(t, path, userLine(t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("turn %d", i)))
		done := make(chan error, 4)
		for g := 0; g < 4; g++ {
			go func() {
				turns, err := Claude{}.Conversation(context.Background(), q, realID)
				if err == nil && (len(turns) != i+1 || turns[i].User != fmt.Sprintf("turn %d", i)) {
					err = fmt.Errorf("%d turns, want %d", len(turns), i+1)
				}
				done <- err
			}()
		}
		for g := 0; g < 4; g++ {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
}
