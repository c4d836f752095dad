package opencode

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// commitEnds are the offsets just after each commit frame of a WAL.
func commitEnds(t *testing.T, wal []byte, pageSize int) []int {
	t.Helper()
	var out []int
	frame := 24 + pageSize
	for off := 32; off+frame <= len(wal); off += frame {
		if binary.BigEndian.Uint32(wal[off+4:]) != 0 {
			out = append(out, off+frame)
		}
	}
	if len(out) < 2 {
		t.Fatalf("WAL has %d commits", len(out))
	}
	return out
}

func resetStores() {
	stores.Lock()
	clear(stores.m)
	stores.Unlock()
}

// A second call on an unchanged store reads no WAL frame; a call after
// opencode committed more reads only the frames appended, and sees the
// turns they hold.
func TestUserTurnsSecondCallReadsOnlyTheAppendedWAL(t *testing.T) {
	want := wantTurns(t)
	env, db := liveStore(t)
	wal, err := os.ReadFile(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	ends := commitEnds(t, wal, 4096)
	q := harness.SessionQuery{Workspace: storeWorkspace, Env: env}
	ctx := context.Background()

	// The WAL as it was some commits ago: fewer turns.
	var cut, fewer int
	for _, end := range ends {
		if err := os.WriteFile(db+"-wal", wal[:end], 0o644); err != nil {
			t.Fatal(err)
		}
		resetStores()
		got, err := Opencode{}.UserTurns(ctx, q, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 && len(got) < len(want) {
			cut, fewer = end, len(got)
			break
		}
	}
	if cut == 0 {
		t.Fatal("no commit of the WAL holds fewer turns than the whole")
	}
	before := walBytes.Load()
	got, err := Opencode{}.UserTurns(ctx, q, "")
	if err != nil || len(got) != fewer {
		t.Fatalf("again: %d turns, %v", len(got), err)
	}
	if n := walBytes.Load() - before; n != 0 {
		t.Fatalf("an unchanged WAL was read again: %d bytes", n)
	}

	// opencode commits the rest.
	f, err := os.OpenFile(db+"-wal", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(wal[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before = walBytes.Load()
	got, err = Opencode{}.UserTurns(ctx, q, "")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after the rest was committed: %+v, %v", got, err)
	}
	if n := walBytes.Load() - before; n != int64(len(wal)-cut) {
		t.Fatalf("read %d WAL bytes, want the %d appended", n, len(wal)-cut)
	}
	q.Since = want[6].At
	if got, _ := (Opencode{}).UserTurns(ctx, q, want[0].SessionID); !reflect.DeepEqual(got, want[6:]) {
		t.Fatalf("since the seventh, by id: %+v", got)
	}
}

// A WAL truncated, reset (a checkpoint restarting it under a new header)
// or gone, and a database file replaced, are read again.
func TestUserTurnsRereadsAChangedStore(t *testing.T) {
	want := wantTurns(t)
	env, db := liveStore(t)
	wal, err := os.ReadFile(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	ends := commitEnds(t, wal, 4096)
	q := harness.SessionQuery{Workspace: storeWorkspace, Env: env}
	ctx := context.Background()
	get := func() []harness.UserTurn {
		t.Helper()
		got, err := Opencode{}.UserTurns(ctx, q, "")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := get(); !reflect.DeepEqual(got, want) {
		t.Fatalf("first: %+v", got)
	}
	// truncated: the same header, shorter than what was read
	if err := os.WriteFile(db+"-wal", wal[:ends[0]], 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(); len(got) >= len(want) {
		t.Fatalf("after truncation: %d turns, want fewer", len(got))
	}
	if err := os.WriteFile(db+"-wal", wal, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(); !reflect.DeepEqual(got, want) {
		t.Fatalf("whole again: %+v", got)
	}
	// another header (salt): none of the frames belong to it any more
	other := append([]byte(nil), wal...)
	binary.BigEndian.PutUint32(other[16:], binary.BigEndian.Uint32(other[16:])+1)
	s0, s1 := walChecksum(walOrder(other), other[:24], 0, 0)
	binary.BigEndian.PutUint32(other[24:], s0)
	binary.BigEndian.PutUint32(other[28:], s1)
	if err := os.WriteFile(db+"-wal", other, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(); len(got) >= len(want) {
		t.Fatalf("after a WAL reset: %d turns, want those of the database file alone", len(got))
	}
	// the WAL checkpointed into the file and removed
	checkpointed := checkpointedStore(t)
	b, err := os.ReadFile(filepath.Join(checkpointed["HOME"], ".local", "share", "opencode", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(db + "-wal"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(db+".tmp", db); err != nil {
		t.Fatal(err)
	}
	if got := get(); !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpointed: %+v", got)
	}
}

func walOrder(wal []byte) binary.ByteOrder {
	if binary.BigEndian.Uint32(wal) == 0x377f0682 {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// The index lookups give what the table scans give.
func TestUserTurnsIndexesAgreeWithScans(t *testing.T) {
	want := wantTurns(t)
	env, _ := liveStore(t)
	ctx := context.Background()
	for _, since := range []time.Time{{}, want[0].At, want[3].At.Add(-time.Millisecond), want[3].At, want[7].At, want[7].At.Add(time.Millisecond)} {
		for _, id := range []string{"", want[0].SessionID, "ses_nope"} {
			q := harness.SessionQuery{Workspace: storeWorkspace, Env: env, Since: since}
			resetStores()
			indexed, err := Opencode{}.UserTurns(ctx, q, id)
			if err != nil {
				t.Fatal(err)
			}
			resetStores()
			scanOnly = true
			scanned, err := Opencode{}.UserTurns(ctx, q, id)
			scanOnly = false
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(indexed, scanned) {
				t.Fatalf("since %v id %q: indexed %+v\nscanned %+v", since, id, indexed, scanned)
			}
		}
	}
}

func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// bigStore builds, with the sqlite3 CLI, an opencode.db of a long-lived
// user from the real store's schema: sessions × messages (every other one
// a user's, the others with ~1 KiB of data), four parts each (one text,
// three tool outputs of ~1 KiB). The sqlite3 process stays open, as
// opencode does, so the store keeps its WAL; commit runs one more
// statement in it and waits for it to be committed.
func bigStore(b *testing.B, sessions, messages int) (env map[string]string, db string, commit func(sql string)) {
	b.Helper()
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("no sqlite3 to build a large store with")
	}
	home := b.TempDir()
	dir := filepath.Join(home, ".local", "share", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	db = filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(db, checkpointedDB(b), 0o644); err != nil {
		b.Fatal(err)
	}
	script := fmt.Sprintf(`
PRAGMA journal_mode=WAL;
PRAGMA wal_autocheckpoint=0;
BEGIN;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < %[1]d)
INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
SELECT printf('ses_big%%06d', i), (SELECT project_id FROM session LIMIT 1), 'slug', CASE WHEN i = %[1]d THEN '/ws' ELSE printf('/other/%%d', i) END, 'title', '1.18.33', 1700000000000 + i*1000000, 1700000000000 + i*1000000 FROM s;
WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < %[1]d*%[2]d - 1)
INSERT INTO message (id, session_id, time_created, time_updated, data)
SELECT printf('msg_big%%09d', i), printf('ses_big%%06d', i / %[2]d + 1), 1700000000000 + i*1000, 1700000000000 + i*1000,
  CASE WHEN i %% 2 = 0 THEN '{"role":"user","time":{"created":1}}' ELSE '{"role":"assistant","pad":"' || hex(randomblob(512)) || '"}' END FROM m;
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
SELECT printf('prt_big%%09d_%%d', m.rowid, k.k), m.id, m.session_id, m.time_created, m.time_created,
  CASE WHEN k.k = 0 THEN '{"type":"text","text":"message ' || m.rowid || '"}' ELSE '{"type":"tool","output":"' || hex(randomblob(512)) || '"}' END
FROM message m, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) k WHERE m.id LIKE 'msg_big%%';
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
`, sessions, messages)
	cmd := exec.Command(sqlite, "-batch", db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close() // sqlite3 exits at the end of its input
		cmd.Wait()
	})
	out := bufio.NewReader(stdout)
	n := 0
	commit = func(sql string) {
		n++
		mark := fmt.Sprintf("done %d", n)
		if _, err := io.WriteString(stdin, sql+"\nSELECT '"+mark+"';\n"); err != nil {
			b.Fatal(err)
		}
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				b.Fatalf("sqlite3: %v", err)
			}
			if strings.TrimSpace(line) == mark {
				return
			}
		}
	}
	commit(script)
	// one commit in the WAL, as a running opencode's store has
	commit(`UPDATE session SET time_updated = time_updated + 1 WHERE id = 'ses_big000001';`)
	return map[string]string{"HOME": home}, db, commit
}

// checkpointedDB is the real store's database file, WAL checkpointed in.
func checkpointedDB(b *testing.B) []byte {
	f, err := os.Open(filepath.Join("testdata", "store", "checkpointed_v1.18.33.db.gz"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(gz)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// Per-call cost of the witness on a large store (the user's global
// opencode.db, with its WAL): "first" is a first look (nothing cached),
// "steady" a look at an unchanged store, "commit" a look after each
// commit of one more part (opencode streaming a reply), "scan" the
// whole-table scans UserTurns did before it used the indexes.
func BenchmarkUserTurnsLargeStore(b *testing.B) {
	env, db, commit := bigStore(b, 500, 100)
	if fi, err := os.Stat(db); err == nil {
		b.Logf("store: %d MB", fi.Size()>>20)
	}
	parts := 0
	for _, byID := range []bool{true, false} {
		id, name := "ses_big000500", "byid"
		if !byID {
			id, name = "", "byworkspace"
		}
		q := harness.SessionQuery{Workspace: "/ws", Env: env, Since: time.UnixMilli(1700000000000 + (500*100-10)*1000)}
		for _, mode := range []string{"first", "steady", "commit", "scan"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				look := func() int {
					got, err := Opencode{}.UserTurns(context.Background(), q, id)
					if err != nil {
						b.Fatal(err)
					}
					return len(got)
				}
				if n := look(); n != 5 {
					b.Fatalf("%d turns, want 5", n)
				}
				scanOnly = mode == "scan"
				defer func() { scanOnly = false }()
				var cpu time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					switch mode {
					case "first", "scan":
						b.StopTimer()
						resetStores()
						b.StartTimer()
					case "commit":
						b.StopTimer()
						parts++
						commit(fmt.Sprintf(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_new%d', 'msg_big000049999', 'ses_big000500', 1, 1, '{"type":"tool","output":"%s"}');`, parts, strings.Repeat("z", 2000)))
						b.StartTimer()
					}
					c0 := cpuTime()
					look()
					cpu += cpuTime() - c0
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/look")
			})
		}
	}
}
