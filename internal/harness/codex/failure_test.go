package codex

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/records_v0.171.0 is the rollout codex 0.171.0 wrote over the
// turns of e2e/realcli/cmd/capturerecords (testdata/records_v0.171.0.log):
// answered, a tool, interrupted, refused (HTTP 400), queued, /compact,
// answered, cut, answered, a usage limit (HTTP 429 usage_limit_reached,
// resets 14:50:18 UTC), answered, a rate limit (HTTP 429), answered.
const (
	recordsThread = "01a23705-4239-78f2-ad0e-2469922973a2"
	recordsWS     = "/tmp/caprec-1741133230/ws"
)

// recordsUpTo is a CODEX_HOME holding the captured rollout cut after the
// end of the turn whose message carries marker ("" for all of it).
func recordsUpTo(t *testing.T, marker string) map[string]string {
	t.Helper()
	env := copyHome(t, filepath.Join("testdata", "records_v0.171.0"), time.Now())
	if marker == "" {
		return env
	}
	paths, _ := filepath.Glob(filepath.Join(env["CODEX_HOME"], "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("rollouts: %q", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	seen := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxRolloutLine)
	for sc.Scan() {
		line := sc.Bytes()
		out.Write(line)
		out.WriteByte('\n')
		if bytes.Contains(line, []byte(`"UserMessage"`)) && bytes.Contains(line, []byte(marker)) {
			seen = true
		}
		if seen && (bytes.Contains(line, []byte(`"task_complete"`)) || bytes.Contains(line, []byte(`"turn_aborted"`))) {
			if err := os.WriteFile(paths[0], out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return env
		}
	}
	t.Fatalf("no end of the turn of %s", marker)
	return nil
}

func inUTC(t *testing.T) {
	t.Helper()
	was := codexZone
	codexZone = func() *time.Location { return time.UTC } // the capture's zone
	t.Cleanup(func() { codexZone = was })
}

// The last ended turn's failure, in codex's words: none for an answered,
// interrupted or compacted turn; the error body for a refused one; a usage
// limit with the reset time its words name; a rate limit without one. An
// answered turn's reply is its last_agent_message (none for one
// interrupted or failed).
func TestTurnActivityFailedOfRealRollout(t *testing.T) {
	inUTC(t)
	forget()
	t.Cleanup(forget)
	refused := `{"error":{"code":null,"message":"modelserver: scripted error","type":"server_error"}}`
	usage := "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 2:50 PM."
	for _, c := range []struct {
		marker, failed, reply string
		limited               bool
		resetsAt              time.Time
		ended                 int
	}{
		{marker: "LEO-rec-001", ended: 1, reply: "ACK LEO-rec-001"},
		{marker: "LEO-rec-003", ended: 3},                           // interrupted
		{marker: "LEO-rec-004", ended: 4, failed: refused},          // HTTP 400
		{marker: "LEO-rec-005", ended: 5, reply: "ACK LEO-rec-006"}, // the queued one folded into it
		{marker: "LEO-rec-007", ended: 7, reply: "ACK LEO-rec-007"}, // after /compact's own turn
		{marker: "LEO-rec-008", ended: 8},                           // cut while streaming
		{marker: "LEO-rec-010", ended: 10, failed: usage, limited: true, resetsAt: time.Date(2026, 12, 2, 14, 50, 0, 0, time.UTC)},
		{marker: "LEO-rec-011", ended: 11, reply: "ACK LEO-rec-011"},
		{marker: "LEO-rec-012", ended: 12, failed: "exceeded retry limit, last status: 429 Too Many Requests", limited: true},
		{marker: "", ended: 13, reply: "ACK LEO-rec-013"},
	} {
		q := harness.SessionQuery{Env: recordsUpTo(t, c.marker), Workspace: recordsWS}
		for _, id := range []string{recordsThread, ""} {
			got, err := Codex{}.TurnActivity(context.Background(), q, id)
			want := harness.TurnActivity{Found: true, Ended: c.ended, Failed: c.failed, Limited: c.limited, ResetsAt: c.resetsAt, Reply: c.reply}
			if err != nil || got != want {
				t.Errorf("up to %s, id %q:\n got %+v, %v\nwant %+v", c.marker, id, got, err, want)
			}
		}
	}
}

// A failure is the last ended turn's: a turn that starts after it leaves
// it as it was (the runtime reads it once none runs), one that completes
// clears it; of two threads, the one that ended last says.
func TestTurnActivityFailedIsTheLastEnd(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)
	fail := `{"timestamp":"2026-11-30T10:00:02.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t","error":{"message":"boom\u001b[2J","codex_error_info":"other"}}}` + "\n"
	env, path := writeRollout(t, "f1", "/w", markLine(t0, "task_started"), fail)
	q := harness.SessionQuery{Env: env, Workspace: "/w"}
	if got, _ := (Codex{}).TurnActivity(ctx, q, "f1"); got.Failed != "boom\x1b[2J" || got.Limited || got.Ended != 1 {
		t.Fatalf("failed turn: %+v", got)
	}
	appendTo(t, path, markLine(t0.Add(2*time.Second), "task_started"))
	if got, _ := (Codex{}).TurnActivity(ctx, q, "f1"); !got.Running || got.Failed == "" {
		t.Fatalf("a new turn running: %+v", got)
	}
	appendTo(t, path, markLine(t0.Add(3*time.Second), "task_complete"))
	if got, _ := (Codex{}).TurnActivity(ctx, q, "f1"); got.Running || got.Failed != "" || got.Ended != 2 {
		t.Fatalf("completed: %+v", got)
	}
	// A second thread of the workspace whose failure ended later wins.
	dir := filepath.Dir(path)
	late := `{"timestamp":"2026-11-30T10:00:09.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"u","error":{"message":"","codex_error_info":{"response_stream_disconnected":{"http_status_code":502}}}}}` + "\n"
	meta := `{"timestamp":"2026-11-30T10:00:08.000Z","type":"session_meta","payload":{"id":"f2","cwd":"/w","originator":"codex-tui"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-30T10-00-08-f2.jsonl"), []byte(meta+markLine(t0.Add(7*time.Second), "task_started")+late), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := (Codex{}).TurnActivity(ctx, q, ""); got.Failed != "response_stream_disconnected" || got.Limited || got.Ended != 3 {
		t.Fatalf("two threads: %+v", got)
	}
	// Huge words are cut.
	huge := `{"timestamp":"2026-11-30T10:00:10.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"v","error":{"message":"` + strings.Repeat("x", 5000) + `"}}}` + "\n"
	appendTo(t, path, huge)
	if got, _ := (Codex{}).TurnActivity(ctx, q, "f1"); len([]rune(got.Failed)) != maxFailedRunes {
		t.Fatalf("huge failure kept %d runes", len([]rune(got.Failed)))
	}
}

// codex words a reset time on the day of the failure as "2:47 PM", on
// another day with the date (its format_retry_timestamp), in local time.
func TestRetryAt(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("EST", -5*3600)
	}
	now := time.Date(2026, 12, 2, 23, 10, 0, 0, ny)
	for msg, want := range map[string]time.Time{
		"You’ve hit your usage limit. Try again at 11:47 PM.":               time.Date(2026, 12, 2, 23, 47, 0, 0, ny),
		"… or try again at 2:05 AM.":                                        time.Date(2026, 12, 2, 2, 5, 0, 0, ny),
		"You’ve hit your usage limit. Try again at Dec 3rd, 2026 12:15 AM.": time.Date(2026, 12, 3, 0, 15, 0, 0, ny),
		"… purchase more credits or try again at Jan 11th, 2027 9:00 PM.":   time.Date(2027, 1, 11, 21, 0, 0, 0, ny),
		"You’ve hit your usage limit. Try again later.":                     {},
		"try again at 25:99 PM.":                                            {},
		"try again at Foo 3rd, 2026 1:00 PM.":                               {},
		"exceeded retry limit, last status: 429 Too Many Requests":          {},
	} {
		if got := retryAt(msg, now); !got.Equal(want) {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
}
