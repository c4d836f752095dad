package claude

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const streamsDir = "testdata/streams"

var initIDPattern = regexp.MustCompile(`"subtype":"init".*?"session_id":"([^"]+)"`)

// TestEventStreamRealCaptures parses every stream the real claude printed
// (e2e/realcli/cmd/capturestreams) and checks what each run said.
func TestEventStreamRealCaptures(t *testing.T) {
	caps := harnesstest.StreamCaptures(t, streamsDir)
	results := map[string]harness.RunResult{}
	for _, c := range caps {
		r := harnesstest.FeedStream(Claude{}, c.Data)
		harnesstest.CheckResult(t, r)
		results[c.Scenario] = r
	}
	for _, c := range caps {
		t.Run(c.Scenario+"_v"+c.Version, func(t *testing.T) {
			r := results[c.Scenario]
			m := initIDPattern.FindSubmatch(c.Data)
			if m == nil || r.SessionID != string(m[1]) {
				t.Errorf("SessionID = %q, want the init event's %q", r.SessionID, m)
			}
			marker := fmt.Sprintf("LEO-%s-claude", c.Scenario)
			succeeded := func() {
				t.Helper()
				if !r.Succeeded || r.Error != "" || c.Meta.Exit != 0 {
					t.Fatalf("want success (exit %d): %+v", c.Meta.Exit, r)
				}
				if r.Reply != "ACK "+marker {
					t.Errorf("Reply = %q, want %q", r.Reply, "ACK "+marker)
				}
				if r.CostUSD == nil || *r.CostUSD <= 0 {
					t.Errorf("CostUSD = %v, want the result's total_cost_usd", r.CostUSD)
				}
				if r.Usage == nil {
					t.Fatal("no usage")
				}
			}
			switch c.Scenario {
			case "first":
				succeeded()
				if *r.Usage != (harness.Usage{InputTokens: 10, OutputTokens: 3}) {
					t.Errorf("Usage = %+v", *r.Usage)
				}
				if *r.CostUSD != 0.000125 || len(r.Warnings) != 0 {
					t.Errorf("CostUSD %v, warnings %q", *r.CostUSD, r.Warnings)
				}
			case "resume":
				succeeded()
				if !c.Meta.CarriesFirst {
					t.Error("the resumed run's turn did not carry the first conversation")
				}
				if first, ok := results["first"]; !ok || r.SessionID != first.SessionID {
					t.Errorf("resumed SessionID %q, first run's %q: --resume keeps the id", r.SessionID, first.SessionID)
				}
			case "transient":
				// Two 500s, retried by claude itself, then the answer.
				succeeded()
				want := []string{"API retry 1/2: status 500 server_error", "API retry 2/2: status 500 server_error"}
				if strings.Join(r.Warnings, "|") != strings.Join(want, "|") {
					t.Errorf("Warnings = %q, want %q", r.Warnings, want)
				}
			case "cutonce":
				succeeded()
			case "limitonce":
				// A 429 with a retry-after of 5 s: claude waits it out
				// itself (one api_retry, status 429) and the run succeeds:
				// no limit for leo to act on.
				succeeded()
				if r.Limited || len(r.Warnings) != 1 || r.Warnings[0] != "API retry 1/10: status 429 rate_limit" {
					t.Errorf("Limited %v, Warnings %q", r.Limited, r.Warnings)
				}
			case "limited":
				// A 429 with a retry-after of 90 s: claude gives up at once
				// (exit 1, result api_error_status 429), in words that
				// name no time.
				if !r.Limited || r.Succeeded || c.Meta.Exit != 1 || !strings.HasPrefix(r.Error, "API Error: Request rejected (429)") || !r.ResetsAt.IsZero() {
					t.Errorf("want limited, no reset (exit 1, got %d): %+v", c.Meta.Exit, r)
				}
			case "http500", "http401", "cut":
				// Retries exhausted (CLAUDE_CODE_MAX_RETRIES=2 for 5xx and
				// a dropped stream; a 401 is retried the default ten
				// times, over three minutes): a synthetic assistant
				// message, then a result with subtype success and is_error
				// true; exit 1.
				want := map[string]struct {
					err     string
					retries int
					retry   string
				}{
					"http500": {"API Error: 500 modelserver: scripted error.", 2, "API retry 2/2: status 500 server_error"},
					"http401": {"Failed to authenticate. API Error: 401 modelserver: scripted error", 10, "API retry 10/10: status 401 authentication_failed"},
					"cut":     {"API Error: Unable to connect to API (ECONNRESET)", 2, "API retry 2/2 unknown"},
				}[c.Scenario]
				if r.Succeeded || !strings.HasPrefix(r.Error, want.err) || c.Meta.Exit != 1 {
					t.Errorf("want the API error %q (exit 1, got %d): %+v", want.err, c.Meta.Exit, r)
				}
				if !strings.HasPrefix(r.Reply, want.err) {
					t.Errorf("Reply = %q: want the last assistant text (the synthetic error message)", r.Reply)
				}
				if len(r.Warnings) != want.retries || r.Warnings[len(r.Warnings)-1] != want.retry {
					t.Errorf("Warnings = %q: want %d retries ending in %q", r.Warnings, want.retries, want.retry)
				}
				if r.CostUSD == nil || *r.CostUSD != 0 || r.Usage == nil || *r.Usage != (harness.Usage{}) {
					t.Errorf("usage %+v cost %v: want the zeros reported", r.Usage, r.CostUSD)
				}
			default:
				t.Fatalf("capture %s has no expectation: add one", c.Path)
			}
		})
	}
	for _, s := range []string{"first", "resume"} {
		if _, ok := results[s]; !ok {
			t.Errorf("no %s capture in %s", s, streamsDir)
		}
	}
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

const (
	initLine   = `{"type":"system","subtype":"init","session_id":"s-1","model":"m","uuid":"u0"}`
	assistLine = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Hello "},{"type":"tool_use","id":"t","name":"Bash","input":{}},{"type":"text","text":"world"}]},"parent_tool_use_id":null,"session_id":"s-1"}`
	okResult   = `{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s-1","total_cost_usd":0.5,"usage":{"input_tokens":7,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20}}`
)

func TestEventStreamRules(t *testing.T) {
	cost := 0.5
	tests := []struct {
		name  string
		in    []byte
		check func(t *testing.T, r harness.RunResult)
	}{
		{"success", lines(initLine, assistLine, okResult), func(t *testing.T, r harness.RunResult) {
			wantUsage := harness.Usage{InputTokens: 7, OutputTokens: 5, CacheReadTokens: 100, CacheWriteTokens: 20}
			if r.SessionID != "s-1" || !r.Succeeded || r.Error != "" || r.Reply != "Done." || r.Warnings != nil ||
				r.CostUSD == nil || *r.CostUSD != cost || r.Usage == nil || *r.Usage != wantUsage {
				t.Errorf("got %+v", r)
			}
		}},
		{"error as success", lines(initLine, `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","session_id":"s-1"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "API Error: 529 overloaded" {
				t.Errorf("got %+v", r)
			}
		}},
		{"error subtype with errors list", lines(initLine, assistLine, `{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","errors":["Reached max turns",{"message":"and more"}],"session_id":"s-1"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "Reached max turns; and more" || r.Reply != "Hello world" {
				t.Errorf("got %+v", r)
			}
		}},
		{"error subtype without is_error", lines(initLine, `{"type":"result","subtype":"error_during_execution","session_id":"s-1"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "claude ended with error_during_execution" {
				t.Errorf("got %+v", r)
			}
		}},
		{"top-level error event fails a success", lines(initLine, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, okResult), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "Overloaded" {
				t.Errorf("got %+v", r)
			}
		}},
		{"top-level error with a bare message", lines(initLine, `{"type":"error","message":"boom"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "boom" {
				t.Errorf("got %+v", r)
			}
		}},
		{"no result: nothing stated", lines(initLine, assistLine), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "" || r.SessionID != "s-1" || r.Reply != "Hello world" || r.Usage != nil || r.CostUSD != nil {
				t.Errorf("got %+v", r)
			}
		}},
		{"empty result text falls back to the last assistant text", lines(initLine, assistLine, `{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s-1"}`), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Reply != "Hello world" {
				t.Errorf("got %+v", r)
			}
		}},
		{"a subagent's text is not the reply", lines(initLine, assistLine, `{"type":"assistant","message":{"content":[{"type":"text","text":"sub"}]},"parent_tool_use_id":"toolu_1","session_id":"s-1"}`), func(t *testing.T, r harness.RunResult) {
			if r.Reply != "Hello world" {
				t.Errorf("got %+v", r)
			}
		}},
		{"session id from a later event when there is no init", lines(`{"type":"rate_limit_event","session_id":"s-9"}`, okResult), func(t *testing.T, r harness.RunResult) {
			if r.SessionID != "s-1" {
				t.Errorf("the result's id wins: got %+v", r)
			}
		}},
		{"drifted field types keep the event", lines(initLine, `{"type":"result","subtype":"success","is_error":"yes","result":{"text":"x"},"session_id":"s-1","total_cost_usd":"0.25","usage":{"input_tokens":7.9,"output_tokens":"5","cache_read_input_tokens":null}}`), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Reply != `{"text":"x"}` || r.CostUSD == nil || *r.CostUSD != 0.25 || *r.Usage != (harness.Usage{InputTokens: 7, OutputTokens: 5}) {
				t.Errorf("got %+v usage %+v", r, r.Usage)
			}
		}},
		{"null cost is no cost", lines(initLine, `{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":null}`), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.CostUSD != nil || r.Usage != nil {
				t.Errorf("got %+v", r)
			}
		}},
		{"many retries are bounded", bytes.Repeat([]byte(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":529,"error":"overloaded_error"}`+"\n"), 100), func(t *testing.T, r harness.RunResult) {
			if len(r.Warnings) != harness.MaxWarnings || r.Warnings[harness.MaxWarnings-1] != "(85 more warnings)" {
				t.Errorf("got %d warnings: %q", len(r.Warnings), r.Warnings)
			}
		}},
		{"a huge reply is clipped", lines(initLine, `{"type":"result","subtype":"success","is_error":false,"result":"`+strings.Repeat("é", 1<<19)+`"}`), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || len(r.Reply) > harness.MaxReplyBytes || !strings.HasPrefix(r.Reply, "éé") || !strings.HasSuffix(r.Reply, "…") {
				t.Errorf("got %d bytes", len(r.Reply))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := harnesstest.FeedStream(Claude{}, tt.in)
			harnesstest.CheckResult(t, r)
			tt.check(t, r)
		})
	}
}

func TestEventStreamHostileInput(t *testing.T) {
	for _, c := range harnesstest.StreamCaptures(t, streamsDir) {
		// The huge lines once: they cost seconds under -race.
		t.Run(c.Scenario, func(t *testing.T) { harnesstest.CheckHostile(t, Claude{}, c.Data, c.Scenario == "first") })
	}
}

func FuzzEventStream(f *testing.F) { harnesstest.FuzzStream(f, Claude{}, streamsDir) }

// BenchmarkEventStream parses a long run: 2,000 tool calls, each an
// assistant message with text and a tool_use and a user event with a 4 KiB
// tool result, then the result event (about 9 MB).
func BenchmarkEventStream(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(initLine + "\n")
	out := strings.Repeat("drwxr-xr-x 2 user user 4096 Jan  1 00:00 dir\\n", 90)
	for i := range 2000 {
		fmt.Fprintf(&buf, `{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Let me look at the files in step %d."},{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"ls -la"}}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":3}},"parent_tool_use_id":null,"session_id":"s-1","uuid":"u%d"}`+"\n", i, i, i, i)
		fmt.Fprintf(&buf, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"%s","is_error":false}]},"parent_tool_use_id":null,"session_id":"s-1","uuid":"v%d"}`+"\n", i, out, i)
	}
	buf.WriteString(okResult + "\n")
	harnesstest.BenchStream(b, Claude{}, buf.Bytes())
}

func TestEventStreamOddMessagesKeepTheirEvents(t *testing.T) {
	r := harnesstest.FeedStream(Claude{}, lines(initLine,
		`{"type":"user","message":{"role":"user","content":"a plain string"},"session_id":"s-1"}`,
		`{"type":"assistant","message":"not an object","session_id":"s-1"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"ok","message":42,"session_id":"s-1"}`))
	if !r.Succeeded || r.Reply != "ok" {
		t.Fatalf("got %+v", r)
	}
}

func TestEventStreamHugeFields(t *testing.T) {
	for _, c := range harnesstest.StreamCaptures(t, streamsDir) {
		if c.Scenario != "first" && c.Scenario != "http500" {
			continue
		}
		t.Run(c.Scenario, func(t *testing.T) { harnesstest.CheckHugeFields(t, Claude{}, c.Data) })
	}
}

// TestEventStreamReadsLimits: a failed result is a limit on the API's 429
// or in a subscription's words, whose reset is read as the TUI's is.
func TestEventStreamReadsLimits(t *testing.T) {
	now := time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line    string
		limited bool
		at      time.Time
	}{
		{`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · slow down"}`, true, time.Time{}},
		{`{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"result":"You've hit your session limit · resets 3pm (UTC)"}`, true, time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC)},
		{`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 boom"}`, false, time.Time{}},
		{`{"type":"result","subtype":"success","is_error":false,"api_error_status":429,"result":"fine"}`, false, time.Time{}},
	} {
		s := &stream{now: func() time.Time { return now }}
		s.Line([]byte(tc.line))
		r := s.Result()
		if r.Limited != tc.limited || !r.ResetsAt.Equal(tc.at) {
			t.Errorf("%s: Limited %v ResetsAt %v, want %v %v", tc.line, r.Limited, r.ResetsAt, tc.limited, tc.at)
		}
	}
}
