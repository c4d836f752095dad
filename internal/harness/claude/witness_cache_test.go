package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func userLine(at time.Time, text string) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"%s"},"timestamp":"%s","sessionId":"%s"}`+"\n", text, at.UTC().Format(time.RFC3339Nano), realID)
}

func toolLine(at time.Time, out string) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"%s"}]},"timestamp":"%s","sessionId":"%s"}`+"\n", out, at.UTC().Format(time.RFC3339Nano), realID)
}

func writeTailTranscript(t *testing.T, lines ...string) (harness.SessionQuery, string) {
	t.Helper()
	env := map[string]string{"HOME": t.TempDir()}
	path := TranscriptPath(env, "/ws", realID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return harness.SessionQuery{Workspace: "/ws", Env: env}, path
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func turnTexts(t *testing.T, q harness.SessionQuery, id string) []string {
	t.Helper()
	turns, err := (Claude{}).UserTurns(context.Background(), q, id)
	if err != nil {
		t.Fatal(err)
	}
	return texts(turns)
}

// A second call reads only the bytes appended since the first, and sees
// the turn they hold; a line still being written is seen once whole.
func TestUserTurnsSecondCallReadsOnlyTheAppended(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	q, path := writeTailTranscript(t, userLine(t0, "one"), toolLine(t0, strings.Repeat("y", 4096)))
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("first call: %q", got)
	}
	added := userLine(t0.Add(time.Second), "two")
	appendTo(t, path, added)
	before := bytesRead.Load()
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("second call: %q", got)
	}
	if n := bytesRead.Load() - before; n != int64(len(added)) {
		t.Fatalf("second call read %d bytes, want the %d appended", n, len(added))
	}
	if got := turnTexts(t, q, ""); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("by workspace: %q", got)
	}
	three := userLine(t0.Add(2*time.Second), "three")
	appendTo(t, path, three[:len(three)-1]) // no newline yet
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Fatalf("with a last line lacking its newline: %q", got)
	}
	appendTo(t, path, "\n"+userLine(t0.Add(3*time.Second), "four"))
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"one", "two", "three", "four"}) {
		t.Fatalf("once whole: %q", got)
	}
	q.Since = t0.Add(2 * time.Second)
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"three", "four"}) {
		t.Fatalf("since the third: %q", got)
	}
}

// A transcript truncated, rewritten in place or replaced is read again.
func TestUserTurnsRereadsATruncatedOrReplacedTranscript(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	q, path := writeTailTranscript(t, userLine(t0, "one"), userLine(t0.Add(time.Second), "two"))
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("first: %q", got)
	}
	if err := os.WriteFile(path, []byte(userLine(t0, "uno")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"uno"}) {
		t.Fatalf("after truncation: %q", got)
	}
	if err := os.WriteFile(path, []byte(userLine(t0, "eins")+userLine(t0.Add(time.Second), "zwei")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"eins", "zwei"}) {
		t.Fatalf("after a rewrite: %q", got)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(userLine(t0, "un")+userLine(t0.Add(time.Second), "deux")+userLine(t0.Add(2*time.Second), "trois")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"un", "deux", "trois"}) {
		t.Fatalf("after replacement: %q", got)
	}
}

// As the transcript grows, turns that fall out of its last transcriptTail
// bytes are no longer returned, as when the tail alone was read each time.
func TestUserTurnsCacheFollowsTheTail(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	q, path := writeTailTranscript(t, userLine(t0, "old"))
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("first: %q", got)
	}
	appendTo(t, path, toolLine(t0, strings.Repeat("y", transcriptTail/2))+userLine(t0.Add(time.Second), "mid"))
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"old", "mid"}) {
		t.Fatalf("within the tail: %q", got)
	}
	appendTo(t, path, toolLine(t0, strings.Repeat("y", transcriptTail/2))+userLine(t0.Add(2*time.Second), "new"))
	if got := turnTexts(t, q, realID); !slices.Equal(got, []string{"mid", "new"}) {
		t.Fatalf("after the tail moved past the first: %q", got)
	}
}

func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// Per-call cost of the witness on a long conversation: a ~50 MB
// transcript of 1,000 turns, each followed by a 50 KiB tool result (a
// "type":"user" entry). "first" is the first look (nothing cached),
// "steady" every later one (one short line appended between looks in
// "steady-append").
func BenchmarkUserTurnsLongTranscript(b *testing.B) {
	for _, mode := range []string{"first", "steady", "steady-append"} {
		b.Run(mode, func(b *testing.B) { benchLongTranscript(b, mode) })
	}
}

func benchLongTranscript(b *testing.B, mode string) {
	cfg := b.TempDir()
	env := map[string]string{"CLAUDE_CONFIG_DIR": cfg}
	ws := "/ws"
	path := TranscriptPath(env, ws, realID)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	out := strings.Repeat("y", 50<<10)
	for i := 0; i < 1000; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		sb.WriteString(userLine(at, fmt.Sprintf("turn %d", i)))
		sb.WriteString(toolLine(at, out))
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	q := harness.SessionQuery{Workspace: ws, Env: env, Since: t0.Add(time.Hour)}
	look := func() {
		if _, err := (Claude{}).UserTurns(context.Background(), q, realID); err != nil {
			b.Fatal(err)
		}
	}
	look()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		switch mode {
		case "first":
			b.StopTimer()
			cache.Forget()
			b.StartTimer()
		case "steady-append":
			b.StopTimer()
			f.WriteString(`{"type":"assistant","message":{"role":"assistant","content":"x"}}` + "\n")
			b.StartTimer()
		}
		c0 := cpuTime()
		look()
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/look")
}

// Calls from several deliveries at once, while claude appends, each see
// every turn appended before they started.
func TestUserTurnsConcurrentCalls(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	q, path := writeTailTranscript(t, userLine(t0, "turn 0"))
	for i := 1; i <= 20; i++ {
		appendTo(t, path, userLine(t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("turn %d", i)))
		done := make(chan error, 4)
		for g := 0; g < 4; g++ {
			id := realID
			if g%2 == 1 {
				id = ""
			}
			go func() {
				turns, err := Claude{}.UserTurns(context.Background(), q, id)
				if err == nil && len(turns) != i+1 {
					err = fmt.Errorf("id %q: %d turns, want %d", id, len(turns), i+1)
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
