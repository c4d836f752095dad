package task

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func rec(task string, i int) Record {
	code := i % 3
	cost := 0.01 * float64(i)
	start := time.Date(2026, 5, 1, 7, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	return Record{
		Task: task, Trigger: TriggerSchedule, Due: start, Start: start, End: start.Add(time.Second),
		Outcome: OutcomeFailed, Reason: ReasonExitStatus, Message: "exit status 1",
		ExitCode: &code, Attempt: 1, SessionID: fmt.Sprintf("sess-%d", i),
		Reply: "line one\nline two", Usage: &Usage{InputTokens: 10, OutputTokens: int64(i)}, CostUSD: &cost,
	}
}

func openHistory(t testing.TB, dir string, retention int) *History {
	t.Helper()
	h, err := OpenHistory(dir, retention)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sessions(recs []Record) string {
	var s []string
	for _, r := range recs {
		s = append(s, r.SessionID)
	}
	return strings.Join(s, ",")
}

// TestHistoryTornLastRecordAtEveryOffset cuts the last record at every byte
// (a crash mid-write): the earlier records all read back, the torn one is
// dropped and reported, and the next append lands on a line of its own.
func TestHistoryTornLastRecordAtEveryOffset(t *testing.T) {
	src := t.TempDir()
	h := openHistory(t, src, 0)
	for i := 0; i < 3; i++ {
		if err := h.Append(rec("inbox", i)); err != nil {
			t.Fatal(err)
		}
	}
	base, err := os.ReadFile(h.current("inbox"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Append(rec("inbox", 3)); err != nil {
		t.Fatal(err)
	}
	full, _ := os.ReadFile(h.current("inbox"))
	last := full[len(base):]

	for k := 0; k < len(last); k++ {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "inbox.jsonl"), append(bytes.Clone(base), last[:k]...), 0o600); err != nil {
			t.Fatal(err)
		}
		h := openHistory(t, dir, 0)
		recs, dropped, err := h.Read("inbox", 0)
		if err != nil {
			t.Fatalf("cut at %d: %v", k, err)
		}
		whole := k == len(last)-1 // only the newline is missing: the record is intact
		want, wantDropped := "sess-0,sess-1,sess-2", 1
		if k == 0 {
			wantDropped = 0
		}
		if whole {
			want, wantDropped = "sess-0,sess-1,sess-2,sess-3", 0
		}
		if got := sessions(recs); got != want || len(dropped) != wantDropped {
			t.Fatalf("cut at %d of %d: read %q with %d dropped %v; want %q with %d dropped", k, len(last), got, len(dropped), dropped, want, wantDropped)
		}
		if wantDropped == 1 && (!dropped[0].Torn || dropped[0].Offset != int64(len(base))) {
			t.Fatalf("cut at %d: dropped %+v, want the torn record at byte %d", k, dropped[0], len(base))
		}
		if err := h.Append(rec("inbox", 9)); err != nil {
			t.Fatalf("cut at %d: append after the crash: %v", k, err)
		}
		recs, dropped, err = h.Read("inbox", 0)
		if err != nil || len(dropped) != 0 || sessions(recs) != want+",sess-9" {
			t.Fatalf("cut at %d: after the next append read %q, dropped %v, err %v; want %q", k, sessions(recs), dropped, err, want+",sess-9")
		}
	}
}

func TestHistoryRetentionRotatesAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	h := openHistory(t, dir, 3)
	for i := 0; i < 5; i++ {
		if err := h.Append(rec("inbox", i)); err != nil {
			t.Fatal(err)
		}
	}
	// A new process: the count of the current file is recovered.
	h = openHistory(t, dir, 3)
	for i := 5; i < 10; i++ {
		if err := h.Append(rec("inbox", i)); err != nil {
			t.Fatal(err)
		}
	}
	recs, dropped, err := h.Read("inbox", 0)
	if err != nil || len(dropped) != 0 {
		t.Fatal(err, dropped)
	}
	// 10 records, 3 per file: .1 holds 6-8, the current file 9.
	if got := sessions(recs); got != "sess-6,sess-7,sess-8,sess-9" {
		t.Fatalf("kept %q", got)
	}
	recs, _, _ = h.Read("inbox", 2)
	if got := sessions(recs); got != "sess-8,sess-9" {
		t.Fatalf("limit 2 gave %q", got)
	}
	for _, p := range []string{h.current("inbox"), h.previous("inbox")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s has mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
	sub := filepath.Join(dir, "sub")
	openHistory(t, sub, 0)
	if fi, err := os.Stat(sub); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("history directory: %v, %v; want mode 0700", fi, err)
	}
}

func TestHistoryDamagedLineCostsOnlyItself(t *testing.T) {
	dir := t.TempDir()
	h := openHistory(t, dir, 0)
	line := func(r Record) string { b, _ := json.Marshal(r); return string(b) + "\n" }
	huge := rec("inbox", 2)
	huge.Reply = strings.Repeat("x", 1<<20) // written by hand: Append would cap it
	content := line(rec("inbox", 0)) + "not json at all\n" + line(rec("other", 1)) + line(huge) + "\n" + line(rec("inbox", 3))
	if err := os.WriteFile(h.current("inbox"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, dropped, err := h.Read("inbox", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := sessions(recs); got != "sess-0,sess-2,sess-3" {
		t.Fatalf("read %q", got)
	}
	if len(dropped) != 2 || dropped[0].Torn || dropped[1].Torn || !strings.Contains(dropped[1].Err, `"other"`) {
		t.Fatalf("dropped %v", dropped)
	}
}

func TestHistoryAppendChecksAndCaps(t *testing.T) {
	h := openHistory(t, t.TempDir(), 0)
	bad := []struct {
		r    Record
		want string
	}{
		{Record{Task: "../etc", Trigger: TriggerManual, Outcome: OutcomeSucceeded}, `task "../etc"`},
		{Record{Task: "inbox", Trigger: "cron", Outcome: OutcomeSucceeded}, `trigger "cron"`},
		{Record{Task: "inbox", Trigger: TriggerManual, Outcome: "ok"}, `outcome "ok"`},
		{Record{Task: "inbox", Trigger: TriggerManual, Outcome: OutcomeSkipped}, "needs a reason"},
	}
	for _, b := range bad {
		if err := h.Append(b.r); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Append(%+v) = %v, want an error naming %s", b.r, err, b.want)
		}
	}
	r := rec("inbox", 1)
	r.Reply = strings.Repeat("é", 3000) + "\n" + strings.Repeat("line\n", 100)
	if err := h.Append(r); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := h.Read("inbox", 0)
	if n := len(recs[0].Reply); n > ReplyMaxBytes || !strings.HasPrefix(r.Reply, recs[0].Reply) || !json.Valid([]byte(`"`+recs[0].Reply+`"`)) {
		t.Fatalf("reply kept %d bytes", n)
	}
	if got := FirstLines("a\nb\nc\nd", 2, 100); got != "a\nb" {
		t.Fatalf("FirstLines = %q", got)
	}
}

// BenchmarkHistoryAppend shows the append cost with 10 and with 100,000
// records already in the task's history: it is the same (one write and one
// fsync; the file is never rewritten).
func BenchmarkHistoryAppend(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			line, _ := json.Marshal(rec("inbox", 1))
			line = append(line, '\n')
			if err := os.WriteFile(filepath.Join(dir, "inbox.jsonl"), bytes.Repeat(line, n), 0o600); err != nil {
				b.Fatal(err)
			}
			h := openHistory(b, dir, 1_000_000)
			if err := h.Append(rec("inbox", 2)); err != nil { // the once-per-process count
				b.Fatal(err)
			}
			r := rec("inbox", 3)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := h.Append(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzHistoryRead feeds arbitrary bytes as a task's history file: reading
// never fails or panics, and an append afterwards keeps every record that
// read back and adds exactly the new one.
func FuzzHistoryRead(f *testing.F) {
	good, _ := json.Marshal(rec("inbox", 1))
	f.Add(append(append([]byte{}, good...), '\n'))
	f.Add(good[:len(good)/2])
	f.Add([]byte("null\n{}\n\n   \n" + string(good)))
	f.Add([]byte(`{"task":"other","trigger":"manual"}` + "\n" + string(good) + "\n{\"ta"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "inbox.jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		h := openHistory(t, dir, 1_000_000)
		before, dropped, err := h.Read("inbox", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Append(rec("inbox", 77)); err != nil {
			t.Fatal(err)
		}
		after, dropped2, err := h.Read("inbox", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before)+1 || after[len(after)-1].SessionID != "sess-77" || len(dropped2) > len(dropped) {
			t.Fatalf("before append: %d records, %d dropped; after: %d records, %d dropped (%v)", len(before), len(dropped), len(after), len(dropped2), dropped2)
		}
		for i := range before {
			if before[i].SessionID != after[i].SessionID {
				t.Fatalf("record %d changed across an append", i)
			}
		}
	})
}
