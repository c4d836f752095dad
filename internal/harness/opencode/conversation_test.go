package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// wantConvTurn is what a test expects of one turn read from a capture.
type wantConvTurn struct {
	user, reply string
	replyPrefix bool // the reply is cut: it starts so
	tools       []harness.ToolCall
	outcome     harness.TurnOutcome
	err         string
	usage       *harness.Usage
}

// The model server answers each step with 10 tokens in and 3 out; the
// tool turn took two steps (the tool call: 10 in, 5 out; the answer).
var (
	stepUsage   = &harness.Usage{InputTokens: 10, OutputTokens: 3}
	capturedRun = []wantConvTurn{
		{user: "say hello LEO-rec-001", reply: "ACK LEO-rec-001", outcome: harness.OutcomeOK, usage: stepUsage},
		{user: "run a tool LEO-rec-002", reply: "ACK LEO-rec-002", outcome: harness.OutcomeOK, usage: &harness.Usage{InputTokens: 20, OutputTokens: 8},
			tools: []harness.ToolCall{{Name: "bash", Input: `{"command":"echo tool-ran","description":"say tool-ran"}`}}},
		// Interrupted before the model said a word: no reply, no tokens.
		{user: "a slow one LEO-rec-003", outcome: harness.OutcomeInterrupted},
		{user: "this one is refused LEO-rec-004", outcome: harness.OutcomeError, err: "modelserver: scripted error"},
		// Queued behind 005: a turn of its own, answered after it.
		{user: "held for a while LEO-rec-005", reply: "ACK LEO-rec-005", outcome: harness.OutcomeOK, usage: stepUsage},
		{user: "queued behind it LEO-rec-006", reply: "ACK LEO-rec-006", outcome: harness.OutcomeOK, usage: stepUsage},
		// /compact: a user message with a compaction part and no text,
		// answered by the summary (the model server's side reply).
		{user: "", reply: "Side reply", outcome: harness.OutcomeOK, usage: stepUsage},
		{user: "after the compaction LEO-rec-007", reply: "ACK LEO-rec-007", outcome: harness.OutcomeOK, usage: stepUsage},
	}
)

func checkTurns(t *testing.T, got []harness.Turn, want []wantConvTurn) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d turns, want %d: %+v", len(got), len(want), got)
	}
	seen := map[string]bool{}
	for i, w := range want {
		g := got[i]
		replyOK := g.Reply == w.reply
		if w.replyPrefix {
			replyOK = strings.HasPrefix(g.Reply, w.reply) && len(g.Reply) > len(w.reply)
		}
		if g.User != w.user || !replyOK || g.Outcome != w.outcome || g.Error != w.err ||
			!reflect.DeepEqual(g.Tools, w.tools) || !reflect.DeepEqual(g.Usage, w.usage) || g.CostUSD != nil {
			t.Errorf("turn %d: %+v (usage %+v)\nwant %+v (usage %+v)", i, g, g.Usage, w, w.usage)
		}
		if !strings.HasPrefix(g.ID, "msg_") || seen[g.ID] {
			t.Errorf("turn %d: id %q", i, g.ID)
		}
		seen[g.ID] = true
		if g.StartedAt.Year() != 2026 || g.EndedAt.Before(g.StartedAt) || (g.Outcome == harness.OutcomeRunning) != g.EndedAt.IsZero() {
			t.Errorf("turn %d: started %v, ended %v, %s", i, g.StartedAt, g.EndedAt, g.Outcome)
		}
		if i > 0 && g.StartedAt.Before(got[i-1].StartedAt) {
			t.Errorf("turn %d started before turn %d", i, i-1)
		}
	}
}

// The capture's session, turn by turn (testdata/store/records_v1.18.33.log
// says what each was), through the index and by a scan alike, and the same
// again from what the first read kept.
func TestConversationOfTheRealStore(t *testing.T) {
	env := recordsStore(t)
	const id = "ses_dcbc8990bffeIFKd11Sg5Sfk9c"
	defer func() { scanOnly = false }()
	for _, scan := range []bool{false, true, false} {
		scanOnly = scan
		resetStores()
		for range 2 {
			got, err := Opencode{}.Conversation(context.Background(), harness.SessionQuery{Env: env}, id)
			if err != nil {
				t.Fatal(err)
			}
			checkTurns(t, got, capturedRun)
			// The refused turn's words are TurnActivity's.
			if got[3].Error == "" || got[0].ID != "msg_234376d9d0017kOCgciuFqj2h0" ||
				!got[0].StartedAt.Equal(time.UnixMilli(1796172377502)) || !got[0].EndedAt.Equal(time.UnixMilli(1796172386817)) {
				t.Fatalf("first turn %+v", got[0])
			}
		}
	}
}

// The newest opencode's capture (e2e/realcli/cmd/capturerecords, the
// newest install; conversation_v1.18.33.log): the same turns, then one cut
// while it streamed (interrupted, its reply what had streamed) and one
// answered after it.
func TestConversationOfTheNewestCapture(t *testing.T) {
	env := unpackStore(t, "conversation_v1.18.33.tgz")
	resetStores()
	got, err := Opencode{}.Conversation(context.Background(), harness.SessionQuery{Env: env}, "ses_dc80443b5ffeXmJhAUn1CvcgX0")
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]wantConvTurn(nil), capturedRun...),
		wantConvTurn{user: "stream a long one LEO-rec-008", reply: "ACK LEO-rec-008 this answer streams", replyPrefix: true, outcome: harness.OutcomeInterrupted},
		wantConvTurn{user: "the last one LEO-rec-009", reply: "ACK LEO-rec-009", outcome: harness.OutcomeOK, usage: stepUsage},
	)
	checkTurns(t, got, want)
}

// No store, or a session the store has not: no turns, no error; no id is
// an error.
func TestConversationOfNothing(t *testing.T) {
	ctx := context.Background()
	got, err := Opencode{}.Conversation(ctx, harness.SessionQuery{Env: map[string]string{"HOME": t.TempDir()}}, "ses_x")
	if err != nil || got != nil {
		t.Fatalf("no store: %v, %v", got, err)
	}
	got, err = Opencode{}.Conversation(ctx, harness.SessionQuery{Env: recordsStore(t)}, "ses_not_there")
	if err != nil || len(got) != 0 {
		t.Fatalf("no such session: %v, %v", got, err)
	}
	if _, err := (Opencode{}).Conversation(ctx, harness.SessionQuery{Env: recordsStore(t)}, ""); err == nil {
		t.Fatal("no id: no error")
	}
}

// Read as opencode committed it, commit by commit: each read sees what a
// fresh read sees, an unchanged store decodes no part, and a changed one
// decodes the parts of only the messages that are new or were still being
// written — not again those of a message already whole.
func TestConversationReadsOnlyWhatChanged(t *testing.T) {
	env := recordsStore(t)
	const id = "ses_dcbc8990bffeIFKd11Sg5Sfk9c"
	db, err := dbPath(env)
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := harness.SessionQuery{Env: env}
	resetStores()
	var prev []harness.Turn
	grew, commits := 0, 0
	var sumDecoded, sumAll int64
	for _, end := range commitEnds(t, wal, 4096) {
		if err := os.WriteFile(db+"-wal", wal[:end], 0o644); err != nil {
			t.Fatal(err)
		}
		// What a fresh read decodes, and sees.
		st := storeOf(db)
		st.mu.Lock()
		kept := st.conv
		st.conv = nil
		st.mu.Unlock()
		before := partRows.Load()
		fresh, err := Opencode{}.Conversation(ctx, q, id)
		if err != nil {
			t.Fatal(err)
		}
		all := partRows.Load() - before
		st.mu.Lock()
		st.conv = kept
		st.mu.Unlock()

		before = partRows.Load()
		got, err := Opencode{}.Conversation(ctx, q, id)
		if err != nil {
			t.Fatal(err)
		}
		decoded := partRows.Load() - before
		if !reflect.DeepEqual(got, fresh) {
			t.Fatalf("at WAL offset %d: kept read %+v\nfresh read %+v", end, got, fresh)
		}
		// At most the parts of the message being written: a step-start, a
		// text or a tool, a step-finish — and the user message's text.
		if decoded > all || decoded > 4 {
			t.Fatalf("at WAL offset %d: decoded %d parts, a fresh read %d", end, decoded, all)
		}
		sumDecoded, sumAll = sumDecoded+decoded, sumAll+all
		if len(got) > len(prev) {
			grew++
		}
		// Asked again, unchanged: nothing decoded.
		before = partRows.Load()
		if _, err := (Opencode{}).Conversation(ctx, q, id); err != nil || partRows.Load() != before {
			t.Fatalf("unchanged store: decoded %d parts, %v", partRows.Load()-before, err)
		}
		prev = got
		commits++
	}
	checkTurns(t, prev, capturedRun)
	// A reader that read all again each time would have decoded every
	// part once per commit: ten times as many and more.
	parts := partRows.Load()
	resetStores()
	if _, err := (Opencode{}).Conversation(ctx, q, id); err != nil {
		t.Fatal(err)
	}
	parts = partRows.Load() - parts
	t.Logf("%d commits: %d parts decoded read by read, %d read afresh each time; %d in the store", commits, sumDecoded, sumAll, parts)
	if sumAll < 10*sumDecoded {
		t.Fatalf("decoded %d parts read by read, %d afresh, of %d", sumDecoded, sumAll, parts)
	}
	if grew < len(capturedRun) {
		t.Fatalf("the turns grew %d times, want %d", grew, len(capturedRun))
	}
}

// A turn whose answer was abandoned (opencode killed mid-turn) and a turn
// answered after it: the first was given up, interrupted; a queued
// message's answer is its turn's, not the turn it was typed in; a turn not
// yet answered, still running; a tool input over ToolInputMax is cut, a
// reply is the text after the last tool, and costs are summed.
func TestConversationTurnShapes(t *testing.T) {
	big := strings.Repeat("x", 3*harness.ToolInputMax)
	msgs := []builtMessage{
		{id: "msg_1", at: 1000, data: `{"role":"user","time":{"created":1000}}`, parts: []string{`{"type":"text","text":"line one\n\n  line two"}`, `{"type":"text","text":"<file>","synthetic":true}`}},
		{id: "msg_1a", at: 1001, data: `{"parentID":"msg_1","role":"assistant","time":{"created":1001}}`, parts: []string{`{"type":"step-start"}`, `{"type":"text","text":"half"}`}},
		{id: "msg_2", at: 2000, data: `{"role":"user","time":{"created":2000}}`, parts: []string{`{"type":"text","text":"two"}`}},
		{id: "msg_2a", at: 2001, data: `{"parentID":"msg_2","role":"assistant","cost":0.5,"tokens":{"input":1,"output":2,"cache":{"read":3,"write":4}},"time":{"created":2001,"completed":2002},"finish":"tool-calls"}`,
			parts: []string{`{"type":"text","text":"let me look"}`, `{"type":"tool","tool":"write","state":{"status":"completed","input":{ "content" : "` + big + `" },"output":"ok"}}`}},
		{id: "msg_2b", at: 2003, data: `{"parentID":"msg_2","role":"assistant","cost":0.25,"tokens":{"input":10,"output":20,"cache":{"read":30,"write":40}},"time":{"created":2003,"completed":2004},"finish":"stop"}`,
			parts: []string{`{"type":"text","text":"first"}`, `{"type":"reasoning","text":"hmm"}`, `{"type":"text","text":"done"}`}},
		// A message queued while another runs: its answer follows the
		// other's, each naming the message it answers.
		{id: "msg_q1", at: 2500, data: `{"role":"user","time":{"created":2500}}`, parts: []string{`{"type":"text","text":"held"}`}},
		{id: "msg_q2", at: 2501, data: `{"role":"user","time":{"created":2501}}`, parts: []string{`{"type":"text","text":"queued"}`}},
		{id: "msg_q1a", at: 2502, data: `{"parentID":"msg_q1","role":"assistant","time":{"created":2502,"completed":2503},"finish":"stop"}`, parts: []string{`{"type":"text","text":"for held"}`}},
		{id: "msg_q2a", at: 2504, data: `{"parentID":"msg_q2","role":"assistant","time":{"created":2504,"completed":2505},"finish":"stop"}`, parts: []string{`{"type":"text","text":"for queued"}`}},
		{id: "msg_3", at: 3000, data: `{"role":"user","time":{"created":3000}}`, parts: []string{`{"type":"text","text":"three"}`}},
		{id: "msg_3a", at: 3001, data: `{"parentID":"msg_3","role":"assistant","time":{"created":3001,"completed":3002},"finish":"tool-calls"}`,
			parts: []string{`{"type":"text","text":"before"}`, `{"type":"tool","tool":"bash","state":{"status":"running","input":{}}}`}},
	}
	dir := t.TempDir()
	path := dir + "/opencode.db"
	buildStore(t, path, "ses_s", "/ws", msgs)
	resetStores()
	got, err := Opencode{}.Conversation(context.Background(), harness.SessionQuery{Env: map[string]string{DBEnv: path}}, "ses_s")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d turns: %+v", len(got), got)
	}
	if got[2].User != "held" || got[2].Reply != "for held" || got[3].User != "queued" || got[3].Reply != "for queued" ||
		got[2].Outcome != harness.OutcomeOK || got[3].Outcome != harness.OutcomeOK || !got[3].EndedAt.Equal(time.UnixMilli(2505)) {
		t.Errorf("queued pair: %+v\n%+v", got[2], got[3])
	}
	if g := got[0]; g.User != "line one\n\n  line two" || g.Reply != "half" || g.Outcome != harness.OutcomeInterrupted || g.Usage != nil {
		t.Errorf("abandoned turn: %+v", g)
	}
	g := got[1]
	wantIn := harness.ClipText(`{"content":"`+big+`"}`, harness.ToolInputMax)
	if g.Reply != "done" || g.Outcome != harness.OutcomeOK || len(g.Tools) != 1 || g.Tools[0].Name != "write" || g.Tools[0].Input != wantIn || len(g.Tools[0].Input) > harness.ToolInputMax ||
		!reflect.DeepEqual(g.Usage, &harness.Usage{InputTokens: 11, OutputTokens: 22, CacheReadTokens: 33, CacheWriteTokens: 44}) ||
		g.CostUSD == nil || *g.CostUSD != 0.75 || !g.EndedAt.Equal(time.UnixMilli(2004)) {
		t.Errorf("tool turn: %+v", g)
	}
	if g := got[4]; g.Reply != "" || g.Outcome != harness.OutcomeRunning || !g.EndedAt.IsZero() || len(g.Tools) != 1 || g.Tools[0].Input != "{}" {
		t.Errorf("running turn: %+v", g)
	}
	// The answer handed out is a copy: changing it changes no later one.
	got[1].Tools[0].Name, got[1].Usage.InputTokens = "changed", 0
	again, _ := Opencode{}.Conversation(context.Background(), harness.SessionQuery{Env: map[string]string{DBEnv: path}}, "ses_s")
	if again[1].Tools[0].Name != "write" || again[1].Usage.InputTokens != 11 {
		t.Errorf("the kept answer changed: %+v", again[1])
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// bigConversationStore builds a store of turns turns of a tool output of 1 MiB each,
// with a WAL (one commit, as a live store has) and returns its env, path
// and size.
func bigConversationStore(t testing.TB, turns int) (map[string]string, string, int64) {
	t.Helper()
	dir := t.TempDir()
	path := dir + "/opencode.db"
	buildStore(t, path, bigSession, bigDir, bigConversation(turns, 1<<20))
	p1 := make([]byte, buildPageSize)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(p1, 0); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	appendWALCommit(t, path, uint32(fi.Size()/buildPageSize), map[uint32][]byte{1: p1})
	return map[string]string{DBEnv: path}, path, fi.Size()
}

// A conversation of 50 MiB of tool output is read in memory bounded by its
// turns, not its size: what the read keeps (the turns, the WAL's pages)
// grows the live heap by under 2 MiB — 50 turns of short texts and tool
// inputs, a few KiB each; a reader that kept the tool outputs would keep
// 50 MiB — and what it allocates on the way is garbage, a row at a time.
func TestConversationOf50MBInBoundedMemory(t *testing.T) {
	env, _, size := bigConversationStore(t, 50)
	if size < 50<<20 {
		t.Fatalf("store of %d bytes", size)
	}
	resetStores()
	before := heapInUse()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	got, err := Opencode{}.Conversation(context.Background(), harness.SessionQuery{Env: env}, bigSession)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	if err != nil {
		t.Fatal(err)
	}
	after := heapInUse()
	if len(got) != 50 || got[0].Reply != "listed pass 0" || got[49].Outcome != harness.OutcomeRunning || got[49].Reply != "listing pass 49" ||
		len(got[0].Tools) != 1 || got[0].Tools[0].Input != `{"command":"ls -lR /","description":"list pass 0"}` ||
		got[0].User != "list the tree, pass 0\nand tell me\n  what is there" ||
		!reflect.DeepEqual(got[0].Usage, &harness.Usage{InputTokens: 2400, OutputTokens: 26, CacheReadTokens: 400, CacheWriteTokens: 200}) ||
		got[0].CostUSD == nil || *got[0].CostUSD != 0.025 {
		t.Fatalf("%d turns; first %+v; last %+v", len(got), got[0], got[len(got)-1])
	}
	grew := int64(after) - int64(before)
	t.Logf("store %d bytes; live heap grew %d bytes; %d bytes allocated on the way", size, grew, ms1.TotalAlloc-ms0.TotalAlloc)
	if grew > 2<<20 {
		t.Fatalf("the live heap grew %d bytes reading a %d-byte store", grew, size)
	}
	runtime.KeepAlive(got)
}

// BenchmarkConversation50MB reads a 50 MiB conversation: first (nothing
// kept), repeated (the store unchanged), appended (a commit rewrote the
// running turn's last message: its rows and its parts are read again), and
// the floor, reading the same files raw.
func BenchmarkConversation50MB(b *testing.B) {
	env, path, size := bigConversationStore(b, 50)
	ctx := context.Background()
	q := harness.SessionQuery{Env: env}
	read := func(b *testing.B) {
		got, err := Opencode{}.Conversation(ctx, q, bigSession)
		if err != nil || len(got) != 50 {
			b.Fatalf("%d turns, %v", len(got), err)
		}
	}
	b.Run("first", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			resetStores()
			read(b)
		}
	})
	b.Run("repeated", func(b *testing.B) {
		resetStores()
		read(b)
		b.ReportAllocs()
		for b.Loop() {
			read(b)
		}
	})
	b.Run("appended", func(b *testing.B) {
		resetStores()
		read(b)
		pages := lastMessagePage(b, path)
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			for n, p := range pages { // a commit: the same row, one space moved
				i := strings.Index(string(p), `"completed":0 `)
				p[i+len(`"completed":0`)], p[i+len(`"completed":0`)+1] = p[i+len(`"completed":0`)+1], p[i+len(`"completed":0`)]
				pages[n] = p
			}
			appendWALCommit(b, path, uint32(size/buildPageSize), pages)
			b.StartTimer()
			read(b)
		}
	})
	b.Run("raw-floor", func(b *testing.B) {
		b.SetBytes(size)
		buf := make([]byte, 1<<20)
		for b.Loop() {
			for _, p := range []string{path, path + "-wal"} {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := f.Read(buf); err != nil {
						break
					}
				}
				f.Close()
			}
		}
	})
}

// lastMessagePage is the database page holding the running message's row
// (its data "completed":0 followed by spaces), by page number.
func lastMessagePage(b *testing.B, path string) map[uint32][]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	i := strings.Index(string(data), `"completed":0            }`)
	if i < 0 {
		b.Fatal(errors.New("no running message in the store"))
	}
	n := i / buildPageSize
	return map[uint32][]byte{uint32(n + 1): append([]byte(nil), data[n*buildPageSize:(n+1)*buildPageSize]...)}
}

// A long text's overflow chain, read many pages at a time from the file,
// still takes each page the WAL holds a newer copy of from the WAL.
func TestOverflowChainTakesWALPages(t *testing.T) {
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "line %05d\n", i)
	}
	msgs := []builtMessage{{id: "msg_1", at: 1000, data: `{"role":"user","time":{"created":1000}}`, parts: []string{`{"type":"text","text":` + strconvQuote(text.String()) + `}`}}}
	path := t.TempDir() + "/opencode.db"
	buildStore(t, path, "ses_o", "/ws", msgs)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), `line 01500`)
	n := i / buildPageSize
	page := append([]byte(nil), data[n*buildPageSize:(n+1)*buildPageSize]...)
	copy(page[i%buildPageSize:], "LINE 01500")
	appendWALCommit(t, path, uint32(len(data)/buildPageSize), map[uint32][]byte{uint32(n + 1): page})
	resetStores()
	got, err := Opencode{}.Conversation(context.Background(), harness.SessionQuery{Env: map[string]string{DBEnv: path}}, "ses_o")
	if err != nil || len(got) != 1 {
		t.Fatalf("%d turns, %v", len(got), err)
	}
	want := strings.Replace(text.String(), "line 01500", "LINE 01500", 1)
	if got[0].User != want {
		t.Fatalf("user text of %d bytes, not the WAL's (%v)", len(got[0].User), strings.Contains(got[0].User, "LINE 01500"))
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Usage is summed from the assistant messages' tokens, not their parts':
// in both captures each assistant message's tokens are the sum of its
// step-finish parts' (one step a message), so the two sums agree.
func TestMessageTokensAreTheirStepsSum(t *testing.T) {
	for _, name := range []string{"records_v1.18.33.tgz", "conversation_v1.18.33.tgz"} {
		env := unpackStore(t, name)
		path, _ := dbPath(env)
		f, err := openSQLiteCached(path, &walCache{})
		if err != nil {
			t.Fatal(err)
		}
		tables, err := storeTables(f)
		if err != nil {
			t.Fatal(err)
		}
		type tokens struct {
			Type   string        `json:"type"`
			Tokens *storedTokens `json:"tokens"`
		}
		steps := map[string]storedTokens{}
		pt := tables["part"]
		err = f.scanTable(pt.root, func(row []any) bool {
			var p tokens
			s, _ := field(row, pt.col("data")).(string)
			if json.Unmarshal([]byte(s), &p) == nil && p.Type == "step-finish" && p.Tokens != nil {
				mid, _ := field(row, pt.col("message_id")).(string)
				st := steps[mid]
				st.Input += p.Tokens.Input
				st.Output += p.Tokens.Output
				st.Cache.Read += p.Tokens.Cache.Read
				st.Cache.Write += p.Tokens.Cache.Write
				steps[mid] = st
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		mt := tables["message"]
		checked := 0
		err = f.scanTable(mt.root, func(row []any) bool {
			var m messageData
			s, _ := field(row, mt.col("data")).(string)
			mid, _ := field(row, mt.col("id")).(string)
			if json.Unmarshal([]byte(s), &m) != nil || m.Role != "assistant" {
				return true
			}
			var got storedTokens
			if m.Tokens != nil {
				got = *m.Tokens
			}
			if got != steps[mid] {
				t.Errorf("%s: message %s tokens %+v, its steps' %+v", name, mid, got, steps[mid])
			}
			if got.Input > 0 {
				checked++
			}
			return true
		})
		f.Close()
		if err != nil || checked < 7 { // 001, 002 (two steps), 005, 006, the compaction, 007
			t.Fatalf("%s: %d messages with tokens, %v", name, checked, err)
		}
	}
}
