package codex

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
	return fmt.Sprintf(`{"timestamp":"%s","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"%s"}]}}}`+"\n", at.UTC().Format("2006-01-02T15:04:05.000Z"), text)
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

// A second call reads only the bytes appended since the first, and sees
// the turn they hold.
func TestUserTurnsSecondCallReadsOnlyTheAppended(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)
	noise := `{"timestamp":"2026-11-30T10:00:01.000Z","type":"response_item","payload":{"type":"function_call_output","output":"` + strings.Repeat("x", 4096) + `"}}` + "\n"
	env, path := writeRollout(t, "c1", "/w", userLine(t0, "one"), noise)
	q := harness.SessionQuery{Env: env, Workspace: "/w"}
	for _, id := range []string{"c1", ""} {
		turns, err := Codex{}.UserTurns(context.Background(), q, id)
		if err != nil || !slices.Equal(texts(turns), []string{"one"}) {
			t.Fatalf("first call (id %q): %q, %v", id, texts(turns), err)
		}
	}
	added := userLine(t0.Add(time.Second), "two")
	appendTo(t, path, added)
	before := bytesRead.Load()
	turns, err := Codex{}.UserTurns(context.Background(), q, "c1")
	if err != nil || !slices.Equal(texts(turns), []string{"one", "two"}) {
		t.Fatalf("second call: %q, %v", texts(turns), err)
	}
	if n := bytesRead.Load() - before; n != int64(len(added)) {
		t.Fatalf("second call read %d bytes, want the %d appended", n, len(added))
	}
	turns, err = Codex{}.UserTurns(context.Background(), q, "")
	if err != nil || !slices.Equal(texts(turns), []string{"one", "two"}) {
		t.Fatalf("by workspace: %q, %v", texts(turns), err)
	}
	// An earlier Since than the one the cache was read with reads again.
	q.Since = t0.Add(time.Second)
	if turns, _ := (Codex{}).UserTurns(context.Background(), q, "c1"); !slices.Equal(texts(turns), []string{"two"}) {
		t.Fatalf("since the second: %q", texts(turns))
	}
	q.Since = t0
	if turns, _ := (Codex{}).UserTurns(context.Background(), q, "c1"); !slices.Equal(texts(turns), []string{"one", "two"}) {
		t.Fatalf("since the first again: %q", texts(turns))
	}
}

// A rollout truncated, rewritten in place or replaced by another file is
// read again from its start.
func TestUserTurnsRereadsATruncatedOrReplacedRollout(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)
	env, path := writeRollout(t, "c2", "/w", userLine(t0, "one"), userLine(t0.Add(time.Second), "two"))
	q := harness.SessionQuery{Env: env}
	get := func() []string {
		t.Helper()
		turns, err := Codex{}.UserTurns(context.Background(), q, "c2")
		if err != nil {
			t.Fatal(err)
		}
		return texts(turns)
	}
	if got := get(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("first: %q", got)
	}
	meta, _ := os.ReadFile(path)
	head := string(meta[:strings.IndexByte(string(meta), '\n')+1])

	// truncated (same inode, shorter)
	if err := os.WriteFile(path, []byte(head+userLine(t0, "uno")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(); !slices.Equal(got, []string{"uno"}) {
		t.Fatalf("after truncation: %q", got)
	}
	// rewritten in place, as long as before plus more
	if err := os.WriteFile(path, []byte(head+userLine(t0, "eins")+userLine(t0.Add(time.Second), "zwei")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(); !slices.Equal(got, []string{"eins", "zwei"}) {
		t.Fatalf("after a rewrite: %q", got)
	}
	// replaced by another file (rename over it)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(head+userLine(t0, "un")+userLine(t0.Add(time.Second), "deux")+userLine(t0.Add(2*time.Second), "trois")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got := get(); !slices.Equal(got, []string{"un", "deux", "trois"}) {
		t.Fatalf("after replacement: %q", got)
	}
	// moved away: the remembered path is dropped, the thread found again
	day := filepath.Join(filepath.Dir(path), "..", "29")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(day, filepath.Base(path))); err != nil {
		t.Fatal(err)
	}
	if got := get(); !slices.Equal(got, []string{"un", "deux", "trois"}) {
		t.Fatalf("after a move: %q", got)
	}
}

// A v7 thread id names the day its rollout is filed under.
func TestUUIDV7Time(t *testing.T) {
	at, ok := uuidV7Time(coldThread)
	if !ok {
		t.Fatal("not read as v7")
	}
	if want := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC); at.Sub(want).Abs() > 24*time.Hour {
		t.Fatalf("time %v, want near %v", at, want)
	}
	if _, ok := uuidV7Time("t1"); ok {
		t.Fatal("a non-uuid read as v7")
	}
}

// Per-call cost of the witness on a long-lived user's data: a year of
// history (8 rollouts a day) and the agent's own thread with 200 turns
// each followed by 100 KiB of tool output (~20 MB). "first" is the first
// look (nothing cached), "steady" every later one.
func BenchmarkUserTurnsByID(b *testing.B) {
	for _, c := range []struct {
		name        string
		days, turns int
	}{{"history365d-thread200turns", 365, 200}, {"history365d-thread1turn", 365, 1}, {"history1d-thread200turns", 1, 200}} {
		for _, byID := range []bool{true, false} {
			name := c.name + "/byworkspace"
			if byID {
				name = c.name + "/byid"
			}
			b.Run(name+"/first", func(b *testing.B) { benchUserTurns(b, c.days, c.turns, byID, true) })
			b.Run(name+"/steady", func(b *testing.B) { benchUserTurns(b, c.days, c.turns, byID, false) })
		}
	}
}

func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func benchUserTurns(b *testing.B, days, turns int, byID, first bool) {
	home := b.TempDir()
	sessions := filepath.Join(home, "sessions")
	day := time.Date(2025, 12, 1, 0, 0, 0, 0, time.Local)
	const perDay = 8
	var id string
	for d := 0; d < days; d++ {
		dir := filepath.Join(sessions, day.Format("2006/01/02"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < perDay; i++ {
			// a v7 id whose time is the rollout's day, as codex's are
			ms := day.Add(time.Duration(i) * time.Hour).UnixMilli()
			tid := fmt.Sprintf("%08x-%04x-7fa3-b5b6-%04d%08d", ms>>16, ms&0xffff, d, i)
			name := fmt.Sprintf("rollout-%s-%s.jsonl", day.Format("2006-01-02T15-04-05"), tid)
			body := fmt.Sprintf(`{"timestamp":"%s","type":"session_meta","payload":{"id":"%s","cwd":"/ws"}}`+"\n", day.UTC().Format(time.RFC3339Nano), tid)
			if d == days-1 && i == perDay-1 {
				id = tid
				var sb strings.Builder
				sb.WriteString(body)
				out := strings.Repeat("x", 100<<10)
				for t := 0; t < turns; t++ {
					ts := day.Add(time.Duration(t) * time.Minute).UTC().Format(time.RFC3339Nano)
					fmt.Fprintf(&sb, `{"timestamp":"%s","type":"event_msg","payload":{"type":"user_message","message":"turn %d"}}`+"\n", ts, t)
					fmt.Fprintf(&sb, `{"timestamp":"%s","type":"response_item","payload":{"type":"function_call_output","output":"%s"}}`+"\n", ts, out)
				}
				body = sb.String()
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	q := harness.SessionQuery{Workspace: "/ws", Env: map[string]string{"CODEX_HOME": home}, Since: day.Add(-time.Second)}
	if !byID {
		id = ""
	}
	look := func() {
		if _, err := (Codex{}).UserTurns(context.Background(), q, id); err != nil {
			b.Fatal(err)
		}
	}
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if first {
			b.StopTimer()
			forget()
			b.StartTimer()
		} else if i == 0 {
			b.StopTimer()
			look()
			b.StartTimer()
		}
		c0 := cpuTime()
		look()
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/look")
}

// Calls from several deliveries at once, while codex appends, each see
// every turn appended before they started.
func TestUserTurnsConcurrentCalls(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)
	env, path := writeRollout(t, "c3", "/w", userLine(t0, "turn 0"))
	q := harness.SessionQuery{Env: env, Workspace: "/w"}
	for i := 1; i <= 20; i++ {
		appendTo(t, path, userLine(t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("turn %d", i)))
		done := make(chan error, 4)
		for g := 0; g < 4; g++ {
			id := "c3"
			if g%2 == 1 {
				id = ""
			}
			go func() {
				turns, err := Codex{}.UserTurns(context.Background(), q, id)
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
