package codex

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const streamsDir = "testdata/streams"

var threadIDPattern = regexp.MustCompile(`"type":"thread.started","thread_id":"([^"]+)"`)

// metadataWarning is what codex 0.171.0 says of a model it has no metadata
// for (the model server's), as an error item before every turn.
const metadataWarning = "Model metadata for `leo-test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."

// TestEventStreamRealCaptures parses every stream the real codex printed
// (e2e/realcli/cmd/capturestreams) and checks what each run said.
func TestEventStreamRealCaptures(t *testing.T) {
	caps := harnesstest.StreamCaptures(t, streamsDir)
	results := map[string]harness.RunResult{}
	for _, c := range caps {
		r := harnesstest.FeedStream(Codex{}, c.Data)
		harnesstest.CheckResult(t, r)
		results[c.Scenario] = r
	}
	for _, c := range caps {
		t.Run(c.Scenario+"_v"+c.Version, func(t *testing.T) {
			r := results[c.Scenario]
			if m := threadIDPattern.FindSubmatch(c.Data); m == nil || r.SessionID != string(m[1]) {
				t.Errorf("SessionID = %q, want thread.started's %q", r.SessionID, m)
			}
			if len(r.Warnings) == 0 || r.Warnings[0] != metadataWarning {
				t.Errorf("Warnings = %q: want the error item first", r.Warnings)
			}
			marker := fmt.Sprintf("LEO-%s-codex", c.Scenario)
			succeeded := func(usage harness.Usage) {
				t.Helper()
				if !r.Succeeded || r.Error != "" || c.Meta.Exit != 0 {
					t.Fatalf("want success (exit %d): %+v", c.Meta.Exit, r)
				}
				if r.Reply != "ACK "+marker {
					t.Errorf("Reply = %q, want %q", r.Reply, "ACK "+marker)
				}
				if r.Usage == nil || *r.Usage != usage {
					t.Errorf("Usage = %+v, want %+v", r.Usage, usage)
				}
				if r.CostUSD != nil {
					t.Errorf("CostUSD = %v: codex reports none", *r.CostUSD)
				}
			}
			failed := func(reason string) {
				t.Helper()
				if r.Succeeded || r.Error != reason || c.Meta.Exit != 1 {
					t.Errorf("want failure %q (exit 1, got %d): %+v", reason, c.Meta.Exit, r)
				}
				// Five "Reconnecting... n/5" and the final error, after the
				// metadata warning.
				if len(r.Warnings) != 7 || !strings.HasPrefix(r.Warnings[5], "Reconnecting... 5/5 (") {
					t.Errorf("Warnings = %q", r.Warnings)
				}
			}
			switch c.Scenario {
			case "first", "transient": // 500s are retried without a word
				succeeded(harness.Usage{InputTokens: 10, OutputTokens: 3})
			case "resume":
				// Usage is the thread's running total: both turns.
				succeeded(harness.Usage{InputTokens: 20, OutputTokens: 6})
				if !c.Meta.CarriesFirst {
					t.Error("the resumed run's turn did not carry the first conversation")
				}
				if first, ok := results["first"]; !ok || r.SessionID != first.SessionID {
					t.Errorf("resumed thread %q, first run's %q: exec resume keeps the thread", r.SessionID, first.SessionID)
				}
			case "cutonce":
				// The decision: an error event followed by turn.completed
				// is a success, the error kept as a warning.
				succeeded(harness.Usage{InputTokens: 10, OutputTokens: 3})
				if len(r.Warnings) != 2 || !strings.HasPrefix(r.Warnings[1], "Reconnecting... 1/5 (stream disconnected before completion") {
					t.Errorf("Warnings = %q", r.Warnings)
				}
			case "http500":
				failed("We’re currently experiencing high demand, which may cause temporary errors.")
			case "http401":
				failed(regexp.MustCompile(`^unexpected status 401 Unauthorized: modelserver: scripted error, url: http://127\.0\.0\.1:\d+/v1/responses$`).FindString(r.Error))
				if r.Error == "" {
					t.Error("no error")
				}
			case "cut":
				failed("stream disconnected before completion: Transport error: network error: error decoding response body")
			case "limited", "limitonce":
				checkLimitCapture(t, c.Data, c.Meta.Exit, r)
			default:
				t.Fatalf("capture %s has no expectation: add one", c.Path)
			}
		})
	}
	for _, s := range []string{"first", "resume", "cutonce"} {
		if _, ok := results[s]; !ok {
			t.Errorf("no %s capture in %s", s, streamsDir)
		}
	}
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

const (
	startLine = `{"type":"thread.started","thread_id":"th-1"}`
	turnLine  = `{"type":"turn.started"}`
	msgLine   = `{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done."}}`
	doneLine  = `{"type":"turn.completed","usage":{"input_tokens":2400,"cached_input_tokens":2000,"output_tokens":40}}`
)

func TestEventStreamRules(t *testing.T) {
	reconnect := func(n int) string {
		return fmt.Sprintf(`{"type":"error","message":"Reconnecting... %d/5 (stream disconnected)"}`, n)
	}
	tests := []struct {
		name  string
		in    []byte
		check func(t *testing.T, r harness.RunResult)
	}{
		{"success", lines(startLine, turnLine, `{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"ls","status":"in_progress"}}`, msgLine, doneLine), func(t *testing.T, r harness.RunResult) {
			want := harness.Usage{InputTokens: 2400, CacheReadTokens: 2000, OutputTokens: 40}
			if !r.Succeeded || r.Error != "" || r.SessionID != "th-1" || r.Reply != "Done." || r.Usage == nil || *r.Usage != want || r.Warnings != nil {
				t.Errorf("got %+v", r)
			}
		}},
		{"reconnecting then completed is a success with warnings", lines(startLine, turnLine, reconnect(1), reconnect(2), msgLine, doneLine), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Error != "" || len(r.Warnings) != 2 || r.Warnings[1] != "Reconnecting... 2/5 (stream disconnected)" {
				t.Errorf("got %+v", r)
			}
		}},
		{"turn.failed", lines(startLine, turnLine, `{"type":"error","message":"boom"}`, `{"type":"turn.failed","error":{"message":"stream disconnected (details)"}}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "stream disconnected (details)" || r.SessionID != "th-1" {
				t.Errorf("got %+v", r)
			}
		}},
		{"turn.failed without a message takes the last error", lines(startLine, `{"type":"error","message":"boom"}`, `{"type":"turn.failed","error":{}}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "boom" {
				t.Errorf("got %+v", r)
			}
		}},
		{"turn.failed with nothing to say", lines(startLine, `{"type":"turn.failed"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "turn failed" {
				t.Errorf("got %+v", r)
			}
		}},
		{"neither: the last error is the reason", lines(startLine, turnLine, reconnect(1), reconnect(2)), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "Reconnecting... 2/5 (stream disconnected)" {
				t.Errorf("got %+v", r)
			}
		}},
		{"neither and no error", lines(startLine, turnLine, msgLine), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != noTerminalEvent || r.Reply != "Done." {
				t.Errorf("got %+v", r)
			}
		}},
		{"empty stream", nil, func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != noTerminalEvent || r.SessionID != "" {
				t.Errorf("got %+v", r)
			}
		}},
		{"the last agent message is the reply", lines(startLine, `{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"first"}}`, `{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"think"}}`, msgLine, doneLine), func(t *testing.T, r harness.RunResult) {
			if r.Reply != "Done." {
				t.Errorf("got %+v", r)
			}
		}},
		{"error item is a warning", lines(startLine, `{"type":"item.completed","item":{"id":"e","type":"error","message":"deprecated flag"}}`, msgLine, doneLine), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || len(r.Warnings) != 1 || r.Warnings[0] != "deprecated flag" {
				t.Errorf("got %+v", r)
			}
		}},
		{"error event with an object", lines(startLine, `{"type":"error","error":{"message":"quota"}}`), func(t *testing.T, r harness.RunResult) {
			if r.Error != "quota" {
				t.Errorf("got %+v", r)
			}
		}},
		{"the last terminal event wins", lines(startLine, `{"type":"turn.failed","error":{"message":"x"}}`, doneLine), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Error != "" {
				t.Errorf("got %+v", r)
			}
		}},
		{"drifted usage types", lines(startLine, msgLine, `{"type":"turn.completed","usage":{"input_tokens":"12","cached_input_tokens":1.5,"output_tokens":null,"cache_write_input_tokens":4,"extra":{}}}`), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || *r.Usage != (harness.Usage{InputTokens: 12, CacheReadTokens: 1, CacheWriteTokens: 4}) {
				t.Errorf("got %+v %+v", r, r.Usage)
			}
		}},
		{"a huge agent message is clipped", lines(startLine, `{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"`+strings.Repeat("ab", 1<<19)+`"}}`, doneLine), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || len(r.Reply) > harness.MaxReplyBytes || !strings.HasPrefix(r.Reply, "abab") {
				t.Errorf("got %d bytes", len(r.Reply))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := harnesstest.FeedStream(Codex{}, tt.in)
			harnesstest.CheckResult(t, r)
			tt.check(t, r)
		})
	}
}

func TestEventStreamHostileInput(t *testing.T) {
	for _, c := range harnesstest.StreamCaptures(t, streamsDir) {
		// The huge lines once: they cost seconds under -race.
		t.Run(c.Scenario, func(t *testing.T) { harnesstest.CheckHostile(t, Codex{}, c.Data, c.Scenario == "first") })
	}
}

func FuzzEventStream(f *testing.F) { harnesstest.FuzzStream(f, Codex{}, streamsDir) }

// BenchmarkEventStream parses a long run: 3,000 commands, each started and
// completed with 4 KiB of output, and reasoning between them (about 14 MB).
func BenchmarkEventStream(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(startLine + "\n" + turnLine + "\n")
	out := strings.Repeat("drwxr-xr-x 2 user user 4096 Jan  1 00:00 dir\\n", 90)
	for i := range 3000 {
		fmt.Fprintf(&buf, `{"type":"item.completed","item":{"id":"item_%d","type":"reasoning","text":"**Checking files** I need to look at step %d."}}`+"\n", 3*i, i)
		fmt.Fprintf(&buf, `{"type":"item.started","item":{"id":"item_%d","type":"command_execution","command":"bash -lc 'ls -la'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`+"\n", 3*i+1)
		fmt.Fprintf(&buf, `{"type":"item.completed","item":{"id":"item_%d","type":"command_execution","command":"bash -lc 'ls -la'","aggregated_output":"%s","exit_code":0,"status":"completed"}}`+"\n", 3*i+1, out)
	}
	buf.WriteString(msgLine + "\n" + doneLine + "\n")
	harnesstest.BenchStream(b, Codex{}, buf.Bytes())
}

func TestEventStreamHugeFields(t *testing.T) {
	for _, c := range harnesstest.StreamCaptures(t, streamsDir) {
		if c.Scenario != "first" && c.Scenario != "http500" {
			continue
		}
		t.Run(c.Scenario, func(t *testing.T) { harnesstest.CheckHugeFields(t, Codex{}, c.Data) })
	}
}

// checkLimitCapture: codex 0.171.0 does not retry a usage_limit_reached
// (one request, exit 1, in both limit captures): the run is limited, with
// the reset at the end of the minute codex named.
func checkLimitCapture(t *testing.T, data []byte, exit int, r harness.RunResult) {
	t.Helper()
	m := regexp.MustCompile(`try again at (\d{1,2}:\d{2} [AP]M)\.`).FindSubmatch(data)
	if m == nil {
		t.Fatal("the capture names no reset")
	}
	if !r.Limited || r.Succeeded || exit != 1 || !strings.HasPrefix(r.Error, "You’ve hit your usage limit.") {
		t.Fatalf("want limited in codex's words (exit 1, got %d): %+v", exit, r)
	}
	named, _ := time.Parse("3:04 PM", string(m[1]))
	if got := r.ResetsAt.In(codexZone()); got.Hour() != named.Add(time.Minute).Hour() || got.Minute() != named.Add(time.Minute).Minute() {
		t.Errorf("ResetsAt = %v, want the end of %s", r.ResetsAt, m[1])
	}
}

// TestEventStreamReadsLimits: a failed turn is a limit only in the words of
// one; the reset is resolved against the stream's day.
func TestEventStreamReadsLimits(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 20, 0, 0, codexZone())
	for text, want := range map[string]struct {
		limited bool
		at      time.Time
	}{
		"You’ve hit your usage limit. Try again at 6:27 AM.":              {true, time.Date(2026, 12, 3, 6, 28, 0, 0, codexZone())},
		"You’ve hit your usage limit. Try again later.":                   {true, time.Time{}},
		"exceeded retry limit, last status: 429 Too Many Requests":        {true, time.Time{}},
		"unexpected status 401 Unauthorized: modelserver: scripted error": {false, time.Time{}},
	} {
		s := &stream{now: func() time.Time { return now }}
		s.Line([]byte(`{"type":"turn.failed","error":{"message":` + strconv.Quote(text) + `}}`))
		r := s.Result()
		if r.Limited != want.limited || !r.ResetsAt.Equal(want.at) || r.Error != text {
			t.Errorf("%q: Limited %v ResetsAt %v, want %v %v", text, r.Limited, r.ResetsAt, want.limited, want.at)
		}
	}
}
