package claude

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/records_v<version>.jsonl are transcripts the real claude wrote
// in a TUI driven through tmux (e2e/realcli/cmd/capturerecords): turns
// answered (LEO-rec-001), with a tool (002), interrupted before the model
// answered (003), refused with HTTP 400 (004), held while a second message
// was queued behind it (005, 006), /compact, answered (007), interrupted
// mid-stream (008), answered (009). records-hooks_v* are the same turns
// with leo's hooks registered (capturerecords -hooks).
const recordsID = "44444444-2222-4333-8444-000000000001"

var recordVersions = []string{"2.1.197", "2.1.332", "hooks-2.1.197"}

// recordsFile is the capture of a recordVersions entry.
func recordsFile(version string) string {
	if v, ok := strings.CutPrefix(version, "hooks-"); ok {
		return "records-hooks_v" + v + ".jsonl"
	}
	return "records_v" + version + ".jsonl"
}

// replay writes the transcript line by line where claude keeps it and
// calls look after each line with the line.
func replay(t *testing.T, version string, look func(line string, read func() harness.TurnActivity)) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", recordsFile(version)))
	if err != nil {
		t.Fatal(err)
	}
	replayData(t, data, look)
}

// replayData is replay of a transcript's data.
func replayData(t *testing.T, data []byte, look func(line string, read func() harness.TurnActivity)) {
	t.Helper()
	replayInto(t, data, replayQuery(t), look)
}

// replayQuery is a query of a new home with the workspace replay uses.
func replayQuery(t *testing.T) harness.SessionQuery {
	return harness.SessionQuery{Workspace: "/tmp/caprec/ws", Env: map[string]string{"HOME": t.TempDir()}}
}

// replayInto is replayData where q says.
func replayInto(t *testing.T, data []byte, q harness.SessionQuery, look func(line string, read func() harness.TurnActivity)) {
	t.Helper()
	ws, env := q.Workspace, q.Env
	path := TranscriptPath(env, ws, recordsID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	read := func() harness.TurnActivity {
		a, err := (Claude{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}, recordsID)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := read(); a.Found || a.Running || a.Ended != 0 {
		t.Fatalf("no transcript yet: %+v, want nothing found", a)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		look(line, read)
	}
}

// isUserEntry reports whether line is the user entry holding marker.
func isUserEntry(line, marker string) bool {
	u, ok := decodeUserTurn([]byte(line), "x")
	return ok && strings.HasSuffix(u.Text, marker)
}

// Read as claude writes it, line by line: each message's user entry starts
// a turn that runs until its end, whichever way it ended; the turn
// interrupted before the model answered has no end (the next start
// supersedes it); /compact is no turn. The count of ends only grows.
func TestTurnActivityOfRealTranscripts(t *testing.T) {
	for _, v := range recordVersions {
		t.Run(v, func(t *testing.T) {
			ended := 0
			var last harness.TurnActivity
			replay(t, v, func(line string, read func() harness.TurnActivity) {
				a := read()
				if !a.Found || !a.EndsUnrecorded {
					t.Fatalf("after %.80s: %+v, want found, ends unrecorded", line, a)
				}
				if a.Ended < ended {
					t.Fatalf("after %.80s: %d ends, was %d", line, a.Ended, ended)
				}
				ended, last = a.Ended, a
				for n := 1; n <= 9; n++ {
					if m := fmt.Sprintf("LEO-rec-%03d", n); isUserEntry(line, m) && !a.Running {
						t.Fatalf("after %s's user entry: %+v, want a turn running", m, a)
					}
				}
				if isUserEntry(line, "LEO-rec-004") && a.Ended != 2 {
					t.Fatalf("after the interrupted turn 003 and 004's start: %+v, want 2 ended (003 has no end)", a)
				}
				if strings.Contains(line, "<command-name>/compact") && a.Running {
					t.Fatalf("after /compact: %+v, want no turn running", a)
				}
			})
			// 001, 002, 004 (refused), 005, 006, 007, 008 (interrupted
			// mid-stream), 009.
			if last.Running || last.Ended != 8 {
				t.Fatalf("whole transcript: %+v, want 8 ended, none running", last)
			}
		})
	}
}

// Since bounds what is counted: a turn started before it is none of the
// reader's (a TUI killed mid-turn before this launch).
func TestTurnActivitySince(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "records_v2.1.332.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var since time.Time
	for _, line := range strings.Split(string(data), "\n") {
		if isUserEntry(line, "LEO-rec-005") {
			e, ok := decodeUserTurn([]byte(line), "x")
			if !ok {
				t.Fatal("005's entry does not decode")
			}
			since = e.At
		}
	}
	ws := "/tmp/caprec/ws"
	env := installTranscript(t, t.TempDir(), "records_v2.1.332.jsonl", ws, recordsID)
	a, err := (Claude{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: since}, recordsID)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Found || a.Running || a.Ended != 5 {
		t.Fatalf("since 005: %+v, want 5 ended (005 to 009)", a)
	}
	// Cut right after 003's start (interrupted, never ended): from 003 on,
	// that turn runs; from later on, nothing does.
	cut := data[:bytes.Index(data, []byte("a slow one LEO-rec-003"))]
	cut = data[:len(cut)+bytes.IndexByte(data[len(cut):], '\n')+1]
	env = map[string]string{"HOME": t.TempDir()}
	path := TranscriptPath(env, ws, recordsID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err = (Claude{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}, recordsID)
	if err != nil || !a.Running || a.Ended != 2 {
		t.Fatalf("cut after 003's start: %+v, %v; want 003 running, 2 ended", a, err)
	}
	a, err = (Claude{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: time.Now()}, recordsID)
	if err != nil || a.Running || a.Ended != 0 {
		t.Fatalf("cut after 003's start, since now: %+v, %v; want nothing running or ended", a, err)
	}
}

// claude 2.1.197 can write a new session's first turn late and its end
// first (the real suite, with leo's UserPromptSubmit hook, saw
// stop_hook_summary and turn_duration, then the user entry stamped 150 ms
// before them): the turn is over once both are there, one end; it never
// seems to run on. Here the real entries of records-hooks' first turn, in
// that order.
func TestTurnActivityEndWrittenBeforeItsStart(t *testing.T) {
	reordered := endBeforeStart(t)
	var last harness.TurnActivity
	sawStart := false
	replayData(t, reordered, func(line string, read func() harness.TurnActivity) {
		last = read()
		if isUserEntry(line, "LEO-rec-001") {
			sawStart = true
			if last.Running || last.Ended != 1 {
				t.Fatalf("after 001's late entry: %+v, want its turn ended, none running", last)
			}
		}
		if isUserEntry(line, "LEO-rec-002") && (!last.Running || last.Ended != 1) {
			t.Fatalf("after 002's entry: %+v, want it running, 001 ended", last)
		}
	})
	if !sawStart || last.Running || last.Ended != 8 {
		t.Fatalf("whole transcript: %+v, want 8 ended, none running", last)
	}
}

// endBeforeStart is records-hooks_v2.1.197.jsonl with its first turn's
// stop_hook_summary and turn_duration moved before that turn's user entry,
// as the real suite saw claude 2.1.197 write them.
func endBeforeStart(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", recordsFile("hooks-2.1.197")))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var head, start, end, rest []string
	for i, l := range lines {
		switch {
		case isUserEntry(l, "LEO-rec-001"):
			start = append(start, l)
		case strings.Contains(l, `"turn_duration"`) || strings.Contains(l, `"stop_hook_summary"`):
			if len(start) == 0 {
				t.Fatalf("an end before 001's entry in the capture")
			}
			end = append(end, l)
			if strings.Contains(l, `"turn_duration"`) {
				rest = lines[i+1:]
			}
		case len(start) == 0:
			head = append(head, l)
		case len(end) == 0:
			start = append(start, l) // its attachments and the reply
		}
		if rest != nil {
			break
		}
	}
	return []byte(strings.Join(append(append(append(head, end...), start...), rest...), ""))
}

// The mark prefilter never rejects a line the decoder reads as a turn's
// end: system and assistant entries written every way JSON allows (key
// case, escapes, spacing), and any bytes.
func TestMarkPrefilterNeverRejectsADecodedLine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := func(label, s string) string {
			var b strings.Builder
			b.WriteByte('"')
			for _, r := range s {
				if rapid.IntRange(0, 7).Draw(t, label) == 0 {
					fmt.Fprintf(&b, `\u%04x`, r)
				} else {
					b.WriteRune(r)
				}
			}
			b.WriteByte('"')
			return b.String()
		}
		key := func(label, k string) string {
			var b strings.Builder
			for _, r := range k {
				if rapid.Bool().Draw(t, label+"-case") {
					b.WriteString(strings.ToUpper(string(r)))
				} else {
					b.WriteString(strings.ToLower(string(r)))
				}
			}
			return str(label, b.String())
		}
		sp := func(label string) string { return rapid.SampledFrom([]string{"", " ", "\t"}).Draw(t, label) }
		var line string
		if rapid.Bool().Draw(t, "raw") {
			line = rapid.String().Draw(t, "line")
		} else {
			fields := []string{
				key("k1", "type") + ":" + sp("s1") + str("type", rapid.SampledFrom([]string{"system", "assistant", "user"}).Draw(t, "t")),
				key("k2", "subtype") + ":" + sp("s2") + str("sub", rapid.SampledFrom([]string{"turn_duration", "local_command", ""}).Draw(t, "st")),
				key("k3", "isApiErrorMessage") + ":" + sp("s3") + rapid.SampledFrom([]string{"true", "false"}).Draw(t, "err"),
				key("k4", "timestamp") + ":" + str("ts", "2026-12-02T00:54:08.276Z"),
			}
			fields = rapid.Permutation(fields).Draw(t, "order")
			line = "{" + strings.Join(fields, ","+sp("sep")) + "}"
		}
		if m, ok := decodeMark([]byte(line)); ok && m.end && !mayBeUser([]byte(line)) && !mayBeMark([]byte(line)) {
			t.Fatalf("the prefilter rejects a line the decoder reads as a turn's end:\n%s", line)
		}
	})
}

// The last ended turn's failure, in claude's words: the refused turn (HTTP
// 400) failed from its API error entry on, until the next turn ends; no
// other turn did, and none was a rate limit.
func TestTurnActivityFailedOfRealTranscripts(t *testing.T) {
	const refused = "API Error: 400 modelserver: scripted error"
	for _, v := range recordVersions {
		t.Run(v, func(t *testing.T) {
			failedSeen := false
			state := "before" // before, failed (004's error read), after (a later end)
			replay(t, v, func(line string, read func() harness.TurnActivity) {
				a := read()
				if a.Limited || !a.ResetsAt.IsZero() {
					t.Fatalf("after %.80s: %+v, want no limit", line, a)
				}
				switch {
				case state == "before" && a.Failed != "":
					if a.Failed != refused || !strings.Contains(line, `"isApiErrorMessage":true`) {
						t.Fatalf("failed after %.120s: %q", line, a.Failed)
					}
					state, failedSeen = "failed", true
				case state == "failed" && a.Failed == "":
					state = "after"
				case state == "failed" && a.Failed != refused:
					t.Fatalf("after %.80s: %q", line, a.Failed)
				case state == "after" && a.Failed != "":
					t.Fatalf("after %.80s: failed again %q", line, a.Failed)
				}
				if isUserEntry(line, "LEO-rec-005") && a.Failed != refused {
					t.Fatalf("005 running: %+v, want the refused turn still the last ended", a)
				}
			})
			if !failedSeen || state != "after" {
				t.Fatalf("state %s, failed seen %v", state, failedSeen)
			}
		})
	}
}

// testdata/ratelimit_v<version>.jsonl: the real claude's transcript of one
// turn answered HTTP 429 (CLAUDE_CODE_MAX_RETRIES=0, so it does not retry
// for minutes): its API error entry says "rate_limit", a limit, and gives
// no reset time.
func TestTurnActivityRateLimitOfRealTranscripts(t *testing.T) {
	const id, ws = "44444444-2222-4333-8444-00000000000a", "/tmp/caplim/ws"
	for _, v := range []string{"2.1.197", "2.1.332"} { // captured without leo's hooks
		env := installTranscript(t, t.TempDir(), "ratelimit_v"+v+".jsonl", ws, id)
		a, err := (Claude{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}, id)
		want := harness.TurnActivity{Found: true, Ended: 1, EndsUnrecorded: true, Failed: "API Error: Request rejected (429) · modelserver: scripted error", Limited: true}
		if err != nil || a != want {
			t.Errorf("%s: %+v, %v\nwant %+v", v, a, err, want)
		}
	}
}

// An API error entry whose error is not a name, or that has no text, or
// huge hostile text, still ends the turn, as a failure.
func TestTurnActivityFailedEntries(t *testing.T) {
	ws := "/tmp/caprec/ws"
	const id = "44444444-2222-4333-8444-000000000009"
	start := `{"type":"user","sessionId":"` + id + `","timestamp":"2026-12-02T00:53:50.000Z","message":{"role":"user","content":"go LEO-x"}}` + "\n"
	entry := func(ts, errField, content string) string {
		return `{"type":"assistant","sessionId":"` + id + `","timestamp":"` + ts + `","isApiErrorMessage":true,"apiErrorStatus":429,"error":` + errField + `,"message":{"role":"assistant","content":` + content + `}}` + "\n"
	}
	for _, c := range []struct {
		line, failed string
		limited      bool
	}{
		{entry("2026-12-02T00:53:54.000Z", `{"odd":1}`, `[]`), "API error", false},
		{entry("2026-12-02T00:53:54.000Z", `"unknown"`, `"\u001b[2J`+strings.Repeat("x", 3000)+`"`), "\x1b[2J" + strings.Repeat("x", maxFailedRunes-5) + "…", false},
	} {
		env := map[string]string{"HOME": t.TempDir()}
		path := TranscriptPath(env, ws, id)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(start+c.line), 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := (Claude{}).TurnActivity(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}, id)
		if err != nil || a.Running || a.Ended != 1 || a.Failed != c.failed || a.Limited != c.limited {
			t.Errorf("%.100s: %+v, %v; want failed %.40q limited %v", c.line, a, err, c.failed, c.limited)
		}
	}
}
