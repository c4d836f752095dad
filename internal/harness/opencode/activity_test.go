package opencode

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/store/records_v1.18.33.tgz is the store (db and WAL) the real
// opencode left after a TUI session driven through tmux
// (e2e/realcli/cmd/capturerecords): turns answered (LEO-rec-001), with a
// tool (002), interrupted (003), refused with HTTP 400 (004), held while a
// second message was queued behind it (005, 006), /compact, answered
// (007).
const recordsWorkspace = "/tmp/caprec-3906144341/ws"

func recordsStore(t *testing.T) map[string]string {
	t.Helper()
	return unpackStore(t, "records_v1.18.33.tgz")
}

// unpackStore unpacks testdata/store/name (a db and its WAL) as a data
// dir's opencode store and returns the env that finds it.
func unpackStore(t *testing.T, name string) map[string]string {
	t.Helper()
	data := t.TempDir()
	dir := filepath.Join(data, "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "store", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(h.Name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{"XDG_DATA_HOME": data, "HOME": t.TempDir()}
}

// The whole session: every turn ended — answered, with a tool, aborted,
// refused, queued, compacted — and none runs; from 005's message on, four
// (005, 006, the compaction, 007); the last one's reply is 007's. Through
// the index and by a scan alike.
func TestTurnActivityOfTheRealStore(t *testing.T) {
	env := recordsStore(t)
	turns, err := (Opencode{}).UserTurns(context.Background(), harness.SessionQuery{Workspace: recordsWorkspace, Env: env}, "")
	if err != nil || len(turns) == 0 {
		t.Fatalf("user turns: %v, %v", turns, err)
	}
	var at005 time.Time
	for _, u := range turns {
		if strings.HasSuffix(u.Text, "LEO-rec-005") {
			at005 = u.At
		}
	}
	for _, scan := range []bool{false, true} {
		scanOnly = scan
		for _, c := range []struct {
			since time.Time
			id    string
			want  harness.TurnActivity
		}{
			{want: harness.TurnActivity{Found: true, Ended: 8, Reply: "ACK LEO-rec-007"}},
			{id: turns[0].SessionID, want: harness.TurnActivity{Found: true, Ended: 8, Reply: "ACK LEO-rec-007"}},
			{since: at005, id: turns[0].SessionID, want: harness.TurnActivity{Found: true, Ended: 4, Reply: "ACK LEO-rec-007"}},
			// With no id, a session begun before since is not this launch's.
			{since: at005, want: harness.TurnActivity{}},
		} {
			got, err := (Opencode{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: recordsWorkspace, Env: env, Since: c.since}, c.id)
			if err != nil || got != c.want {
				t.Errorf("scan %v, since %v, id %q: %+v, %v; want %+v", scan, c.since, c.id, got, err, c.want)
			}
		}
	}
	scanOnly = false
}

// Read as opencode writes it, message by message, each assistant message
// first as created (not completed) then as it ended: a turn runs from its
// user message until an assistant message ends it — a tool step does not —
// and the count of ends only grows.
func TestTurnActivityAsTheStoreGrows(t *testing.T) {
	env := recordsStore(t)
	path, err := dbPath(env)
	if err != nil {
		t.Fatal(err)
	}
	f, err := openSQLiteCached(path, &walCache{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables, err := storeTables(f)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := sessionsOf(f, tables, harness.SessionQuery{Workspace: recordsWorkspace}, "")
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v", sessions, err)
	}
	msgs, err := sessionMessages(f, tables, sessions, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ms []storedMessage
	for _, m := range msgs {
		ms = m
	}
	if len(ms) != 17 {
		t.Fatalf("%d messages, want the 17 of the capture", len(ms))
	}
	ended, tools, failedSeen := 0, 0, false
	for i, m := range ms {
		if m.Role == "assistant" {
			started := append(append([]storedMessage(nil), ms[:i]...), storedMessage{id: m.id, at: m.at, messageData: messageData{Role: "assistant"}})
			if !turnsOf(started).running {
				t.Fatalf("message %d (%s) just created: no turn running", i, m.id)
			}
		}
		st := turnsOf(ms[:i+1])
		running, n := st.running, st.ended
		// The last ended turn's failure: the refused one's (HTTP 400) from
		// its message on until the next turn ends; an interrupt is none.
		switch {
		case strings.Contains(string(m.Error), "APIError"):
			if st.failed != "modelserver: scripted error" || st.limited {
				t.Fatalf("after the refused turn's message: %+v", st)
			}
			failedSeen = true
		case st.ended > 0 && m.Role == "assistant" && m.ends() && st.failed != "":
			t.Fatalf("after message %d (%s finish %q error %s): failed %q", i, m.id, m.Finish, m.Error, st.failed)
		}
		if m.Role == "assistant" && m.ends() && st.lastID != m.id {
			t.Fatalf("after message %d (%s): the last end is %q", i, m.id, st.lastID)
		}
		want := m.Role != "assistant" || !m.ends()
		if running != want {
			t.Fatalf("after message %d (%s %s finish %q error %s): running %v, want %v", i, m.Role, m.id, m.Finish, m.Error, running, want)
		}
		if m.Finish == "tool-calls" {
			tools++
		}
		if n < ended {
			t.Fatalf("after message %d: %d ended, was %d", i, n, ended)
		}
		ended = n
	}
	if tools != 1 || ended != 8 || !failedSeen {
		t.Fatalf("%d tool steps, %d ended, refused seen %v; want 1, 8, true", tools, ended, failedSeen)
	}
}

// An ending message's error in opencode's words: its data's message (cut
// when huge), else its name; an HTTP 429 is a limit; an interrupt, no
// failure.
func TestMessageFailure(t *testing.T) {
	for raw, want := range map[string]struct {
		failed  string
		limited bool
	}{
		``:     {},
		`null`: {},
		`{"name":"MessageAbortedError","data":{"message":"Aborted"}}`:                           {},
		`{"name":"APIError","data":{"message":"modelserver: scripted error","statusCode":400}}`: {"modelserver: scripted error", false},
		`{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429}}`:           {"Too Many Requests", true},
		`{"name":"ProviderAuthError","data":{}}`:                                                {"ProviderAuthError", false},
		`{"name":"APIError","data":{"message":"\u001b[2J` + strings.Repeat("y", 2000) + `"}}`:   {"\x1b[2J" + strings.Repeat("y", maxFailedRunes-5) + "…", false},
		`"odd"`: {"turn failed", false},
	} {
		got, lim := messageData{Error: []byte(raw)}.failure()
		if got != want.failed || lim != want.limited {
			t.Errorf("%.60s: %.40q %v, want %.40q %v", raw, got, lim, want.failed, want.limited)
		}
	}
}
