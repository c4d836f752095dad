package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

const bigThread = "01a23705-4239-78f2-ad0e-2469922973ff"

// writeBigRollout writes a rollout of about size bytes under a fresh
// CODEX_HOME, in the shape codex 0.171.0 writes a tool-heavy session
// (testdata/records_v0.171.0): turns of a user message, an exec_command
// call, its output — most of the bytes, ~1 MB of command output each —
// the reply, token counts and task_complete. It returns the env, the
// path and the number of turns.
func writeBigRollout(tb testing.TB, size int) (map[string]string, string, int) {
	tb.Helper()
	home := tb.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "12", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-2026-12-02T13-50-21-"+bigThread+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	for i := 0; out.Len() < 1<<20; i++ {
		fmt.Fprintf(&out, "internal/pkg%03d/file_%04d.go:%d:\tfunc handler%d(ctx context.Context, r *http.Request) error { // \"quoted\" \\ path\n", i%97, i, i*7, i)
	}
	output, _ := json.Marshal(out.String())
	written := 0
	w := func(s string) {
		n, err := f.WriteString(s + "\n")
		if err != nil {
			tb.Fatal(err)
		}
		written += n
	}
	w(`{"timestamp":"2026-12-02T13:50:21.347Z","type":"session_meta","payload":{"id":"` + bigThread + `","cwd":"/w","originator":"codex-tui","cli_version":"0.171.0"}}`)
	turns := 0
	for ; written < size; turns++ {
		ts := func(ms int) string {
			return fmt.Sprintf("2026-12-02T%02d:%02d:%02d.%03dZ", 14+turns/3600, turns/60%60, turns%60, ms)
		}
		turn := fmt.Sprintf("01a23705-0000-7000-8000-%012d", turns)
		w(`{"timestamp":"` + ts(0) + `","ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":"` + turn + `","started_at":1796219421,"model_context_window":258400}}`)
		w(`{"timestamp":"` + ts(1) + `","ordinal":2,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"grep the handlers ` + fmt.Sprint(turns) + `"}],"internal_chat_message_metadata_passthrough":{"turn_id":"` + turn + `","content_item_metadata":[{"provenance":{"type":"user"}}]}}}`)
		w(`{"timestamp":"` + ts(2) + `","ordinal":3,"type":"event_msg","payload":{"type":"item_completed","turn_id":"` + turn + `","item":{"type":"UserMessage","id":"u","content":[{"type":"text","text":"grep the handlers ` + fmt.Sprint(turns) + `","text_elements":[]}]}}}`)
		w(`{"timestamp":"` + ts(3) + `","ordinal":4,"type":"response_item","payload":{"type":"function_call","status":"completed","id":"fc","name":"exec_command","arguments":"{\"cmd\":\"grep -rn handler .\"}","call_id":"call_1","internal_chat_message_metadata_passthrough":{"turn_id":"` + turn + `"}}}`)
		w(`{"timestamp":"` + ts(4) + `","ordinal":5,"type":"event_msg","payload":{"type":"item_completed","turn_id":"` + turn + `","item":{"type":"CommandExecution","id":"call_1","command":["/bin/bash","-lc","grep -rn handler ."],"status":"completed","aggregated_output":` + string(output) + `,"exit_code":0}}}`)
		w(`{"timestamp":"` + ts(5) + `","ordinal":6,"type":"response_item","payload":{"type":"function_call_output","id":"fco","call_id":"call_1","output":` + string(output) + `,"internal_chat_message_metadata_passthrough":{"turn_id":"` + turn + `"}}}`)
		w(fmt.Sprintf(`{"timestamp":"%s","ordinal":7,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":%d},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":20}}}}`, ts(6), 1000*(turns+1), 20*(turns+1)))
		w(`{"timestamp":"` + ts(7) + `","ordinal":8,"type":"event_msg","payload":{"type":"item_completed","turn_id":"` + turn + `","item":{"type":"AgentMessage","id":"m","content":[{"type":"Text","text":"found them"}]}}}`)
		w(`{"timestamp":"` + ts(8) + `","ordinal":9,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"found them"}]}}`)
		w(`{"timestamp":"` + ts(9) + `","ordinal":10,"type":"event_msg","payload":{"type":"task_complete","turn_id":"` + turn + `","last_agent_message":"found them"}}`)
	}
	return map[string]string{"CODEX_HOME": home}, path, turns
}

func heapNow() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// A 50 MB rollout is read in memory bounded by its turns, not its size:
// after the read, the heap holds the turns and the cache (a few KB a
// turn), and the read allocated a few line buffers' worth, not the file.
//
// Bounds: the heap may grow by 2 MB (the file / 25: 50 turns of ~200 B of
// text, the reader's 1 MB line buffer is not kept), and the read may
// allocate 8 MB in all (the 64 KB read buffer, the line buffer grown to
// the longest line, the small lines' parses) — a reader that held the
// file or copied each line would pass 50 MB.
func TestConversationOf50MBInBoundedMemory(t *testing.T) {
	forget()
	t.Cleanup(forget)
	env, path, n := writeBigRollout(t, 50<<20)
	info, _ := os.Stat(path)
	before := heapNow()
	turns, err := Codex{}.Conversation(context.Background(), harness.SessionQuery{Env: env}, bigThread)
	if err != nil {
		t.Fatal(err)
	}
	after := heapNow()
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("file %d bytes, %d turns: heap grew %d bytes, the read allocated %d bytes", info.Size(), n, grew, allocated)
	if len(turns) != n || turns[n-1].Reply != "found them" || turns[n-1].Tools[0].Name != "exec_command" ||
		turns[n-1].User != fmt.Sprint("grep the handlers ", n-1) || turns[n-1].Usage.InputTokens != 1000 {
		t.Fatalf("%d turns (want %d), last %+v", len(turns), n, turns[len(turns)-1])
	}
	if grew > 2<<20 {
		t.Errorf("the heap grew by %d bytes reading a %d-byte rollout", grew, info.Size())
	}
	if allocated > 8<<20 {
		t.Errorf("reading a %d-byte rollout allocated %d bytes", info.Size(), allocated)
	}
	runtime.KeepAlive(turns)
}

// BenchmarkConversation50MB: the first read of a 50 MB rollout, a
// repeated read of it unchanged, and in the same run the floor of reading
// the file raw: os.ReadFile, and a line scan that parses nothing.
func BenchmarkConversation50MB(b *testing.B) {
	env, path, _ := writeBigRollout(b, 50<<20)
	info, _ := os.Stat(path)
	q := harness.SessionQuery{Env: env}
	b.Cleanup(forget)
	read := func(b *testing.B) {
		if _, err := (Codex{}).Conversation(context.Background(), q, bigThread); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		b.SetBytes(info.Size())
		b.ReportAllocs()
		for b.Loop() {
			forget()
			read(b)
		}
	})
	b.Run("repeated", func(b *testing.B) {
		forget()
		read(b)
		b.ReportAllocs()
		for b.Loop() {
			read(b)
		}
	})
	b.Run("floor_readfile", func(b *testing.B) {
		b.SetBytes(info.Size())
		b.ReportAllocs()
		for b.Loop() {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("floor_linescan", func(b *testing.B) {
		b.SetBytes(info.Size())
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			r := newLineReader(f)
			for {
				if _, _, _, err := r.next(); err != nil {
					break
				}
			}
			f.Close()
		}
	})
}
