package opencode

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

const streamsDir = "testdata/streams"

var sessionIDPattern = regexp.MustCompile(`"sessionID":"([^"]+)"`)

// TestEventStreamRealCaptures parses every stream the real opencode printed
// (e2e/realcli/cmd/capturestreams) and checks what each run said.
func TestEventStreamRealCaptures(t *testing.T) {
	caps := harnesstest.StreamCaptures(t, streamsDir)
	results := map[string]harness.RunResult{}
	for _, c := range caps {
		r := harnesstest.FeedStream(Opencode{}, c.Data)
		harnesstest.CheckResult(t, r)
		results[c.Scenario] = r
	}
	for _, c := range caps {
		t.Run(c.Scenario+"_v"+c.Version, func(t *testing.T) {
			r := results[c.Scenario]
			if m := sessionIDPattern.FindSubmatch(c.Data); m == nil || r.SessionID != string(m[1]) {
				t.Errorf("SessionID = %q, want the events' %q", r.SessionID, m)
			}
			marker := fmt.Sprintf("LEO-%s-opencode", c.Scenario)
			switch c.Scenario {
			case "first", "resume", "transient", "cutonce":
				// 500s and a dropped stream are retried without a word.
				if !r.Succeeded || r.Error != "" || c.Meta.Exit != 0 {
					t.Fatalf("want success (exit %d): %+v", c.Meta.Exit, r)
				}
				if r.Reply != "ACK "+marker {
					t.Errorf("Reply = %q, want %q", r.Reply, "ACK "+marker)
				}
				if r.Usage == nil || *r.Usage != (harness.Usage{InputTokens: 10, OutputTokens: 3}) {
					t.Errorf("Usage = %+v", r.Usage)
				}
				// The model server's model has no price: cost 0, reported.
				if r.CostUSD == nil || *r.CostUSD != 0 {
					t.Errorf("CostUSD = %v, want 0 as reported", r.CostUSD)
				}
				if c.Scenario == "resume" {
					if !c.Meta.CarriesFirst {
						t.Error("the resumed run's turn did not carry the first conversation")
					}
					if first, ok := results["first"]; !ok || r.SessionID != first.SessionID {
						t.Errorf("resumed session %q, first run's %q: -s keeps the session", r.SessionID, first.SessionID)
					}
				}
			case "http500", "http401", "cut":
				// Retries exhausted: one error event, nothing else, exit 1.
				if r.Succeeded || !strings.HasPrefix(r.Error, "APIError: ") || c.Meta.Exit != 1 {
					t.Errorf("want the API error (exit 1, got %d): %+v", c.Meta.Exit, r)
				}
				if r.Reply != "" || r.Usage != nil {
					t.Errorf("a failed run with no step reported %+v", r)
				}
			case "limitonce":
				// A 429 with retry-after 5: opencode waits it out itself
				// and the run succeeds; nothing for leo to act on.
				if !r.Succeeded || r.Limited || c.Meta.Exit != 0 || r.Reply != "ACK "+marker {
					t.Errorf("want success, not limited (exit %d): %+v", c.Meta.Exit, r)
				}
			case "limited":
				// Every turn answered 429: opencode retries, waiting each
				// retry-after, for about 90 s, then one error event with
				// statusCode 429 and the last answer's headers; exit 1.
				if !r.Limited || r.Succeeded || c.Meta.Exit != 1 || !strings.HasPrefix(r.Error, "APIError: Rate limit reached") {
					t.Errorf("want limited (exit 1, got %d): %+v", c.Meta.Exit, r)
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

func ev(kind, msg string, part string) string {
	return fmt.Sprintf(`{"type":%q,"timestamp":1,"sessionID":"ses_1","part":{"sessionID":"ses_1","messageID":%q,%s}}`, kind, msg, part)
}

func text(msg, id, t string) string {
	return ev("text", msg, fmt.Sprintf(`"id":%q,"type":"text","text":%q`, id, t))
}

func finish(cost float64, in, out, read, write int) string {
	return ev("step_finish", "m", fmt.Sprintf(`"id":"f","type":"step-finish","reason":"stop","cost":%v,"tokens":{"input":%d,"output":%d,"reasoning":1,"cache":{"read":%d,"write":%d}}`, cost, in, out, read, write))
}

var startLine = ev("step_start", "m1", `"id":"s","type":"step-start"`)

func TestEventStreamRules(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		check func(t *testing.T, r harness.RunResult)
	}{
		{"success sums the steps", lines(startLine, text("m1", "p1", "Looking."), finish(0.25, 100, 10, 5, 1),
			ev("tool_use", "m2", `"id":"t","type":"tool","tool":"bash","state":{"status":"completed"}`),
			text("m2", "p2", "Done."), finish(0.5, 200, 20, 50, 2)), func(t *testing.T, r harness.RunResult) {
			want := harness.Usage{InputTokens: 300, OutputTokens: 30, CacheReadTokens: 55, CacheWriteTokens: 3}
			if !r.Succeeded || r.Error != "" || r.SessionID != "ses_1" || r.Reply != "Done." || *r.Usage != want || r.CostUSD == nil || *r.CostUSD != 0.75 {
				t.Errorf("got %+v %+v", r, r.Usage)
			}
		}},
		{"v2 deltas concatenate per part", lines(startLine, text("m1", "p1", "Hel"), text("m1", "p2", "Second"), text("m1", "p1", "lo"), text("m1", "p2", " part")), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Reply != "Hello\nSecond part" {
				t.Errorf("got %+v", r)
			}
		}},
		{"a message with no text keeps the last text", lines(text("m1", "p1", "Answer."), ev("step_start", "m2", `"id":"s2","type":"step-start"`), finish(0, 1, 1, 0, 0)), func(t *testing.T, r harness.RunResult) {
			if r.Reply != "Answer." {
				t.Errorf("got %+v", r)
			}
		}},
		{"classic error fails even at exit 0", lines(startLine, text("m1", "p1", "partial"), `{"type":"error","timestamp":2,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"provider returned 500"}}}`, finish(0, 1, 1, 0, 0)), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "APIError: provider returned 500" || r.Reply != "partial" {
				t.Errorf("got %+v", r)
			}
		}},
		{"v2 error shape", lines(startLine, `{"type":"error","sessionID":"ses_1","error":{"type":"provider_auth","message":"No API key"}}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "No API key" {
				t.Errorf("got %+v", r)
			}
		}},
		{"error with only a name", lines(`{"type":"error","sessionID":"ses_1","error":{"name":"UnknownError"}}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "UnknownError" || r.SessionID != "ses_1" {
				t.Errorf("got %+v", r)
			}
		}},
		{"error with nothing", lines(`{"type":"error"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "opencode reported an error" {
				t.Errorf("got %+v", r)
			}
		}},
		{"the first error is the reason", lines(`{"type":"error","sessionID":"ses_1","error":{"message":"root"}}`, `{"type":"error","sessionID":"ses_1","error":{"message":"later"}}`), func(t *testing.T, r harness.RunResult) {
			if r.Error != "root" {
				t.Errorf("got %+v", r)
			}
		}},
		{"EOF without step_finish ends the turn", lines(startLine, text("m1", "p1", "Hi")), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Reply != "Hi" || r.Usage != nil || r.CostUSD != nil {
				t.Errorf("got %+v", r)
			}
		}},
		{"no event of the session: nothing stated", lines("opencode warming up", `{"type":"leo.unknown"}`), func(t *testing.T, r harness.RunResult) {
			if r.Succeeded || r.Error != "" || r.SessionID != "" {
				t.Errorf("got %+v", r)
			}
		}},
		{"done event is ignored", lines(startLine, text("m1", "p1", "Hi"), `{"type":"done","sessionID":"ses_1","reason":"idle","rejected":[]}`), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || r.Reply != "Hi" {
				t.Errorf("got %+v", r)
			}
		}},
		{"drifted token types", lines(startLine, ev("step_finish", "m", `"cost":"0.5","tokens":{"input":"7","output":2.9,"cache":null}`)), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || *r.Usage != (harness.Usage{InputTokens: 7, OutputTokens: 2}) || *r.CostUSD != 0.5 {
				t.Errorf("got %+v %+v", r, r.Usage)
			}
		}},
		{"huge deltas are clipped", func() []byte {
			var b bytes.Buffer
			for range 200 {
				b.WriteString(text("m1", "p1", strings.Repeat("x", 4096)) + "\n")
			}
			for i := range 200 {
				b.WriteString(text("m1", fmt.Sprintf("q%d", i), "y") + "\n")
			}
			return b.Bytes()
		}(), func(t *testing.T, r harness.RunResult) {
			if !r.Succeeded || len(r.Reply) > harness.MaxReplyBytes || !strings.HasPrefix(r.Reply, "xxxx") {
				t.Errorf("got %d bytes", len(r.Reply))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := harnesstest.FeedStream(Opencode{}, tt.in)
			harnesstest.CheckResult(t, r)
			tt.check(t, r)
		})
	}
}

func TestEventStreamHostileInput(t *testing.T) {
	for _, c := range harnesstest.StreamCaptures(t, streamsDir) {
		// The huge lines once: they cost seconds under -race.
		t.Run(c.Scenario, func(t *testing.T) { harnesstest.CheckHostile(t, Opencode{}, c.Data, c.Scenario == "first") })
	}
}

func FuzzEventStream(f *testing.F) { harnesstest.FuzzStream(f, Opencode{}, streamsDir) }

// BenchmarkEventStream parses a long run: 2,000 steps, each with a text
// part streamed as 20 deltas, a tool call with 4 KiB of output and a
// step_finish (about 16 MB).
func BenchmarkEventStream(b *testing.B) {
	var buf bytes.Buffer
	out := strings.Repeat("drwxr-xr-x 2 user user 4096 Jan  1 00:00 dir\\n", 90)
	for i := range 2000 {
		msg := fmt.Sprintf("msg_%d", i)
		buf.WriteString(ev("step_start", msg, `"id":"s","type":"step-start","snapshot":"4b825dc"`) + "\n")
		for range 20 {
			buf.WriteString(text(msg, "prt_text_"+msg, "Looking at the files ") + "\n")
		}
		buf.WriteString(ev("tool_use", msg, `"id":"t","type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{"command":"ls -la"},"output":"`+out+`","title":"ls","metadata":{},"time":{"start":1,"end":2}}`) + "\n")
		buf.WriteString(finish(0.001, 1200, 20, 1000, 0) + "\n")
	}
	harnesstest.BenchStream(b, Opencode{}, buf.Bytes())
}

func TestEventStreamHugeFields(t *testing.T) {
	for _, c := range harnesstest.StreamCaptures(t, streamsDir) {
		if c.Scenario != "first" && c.Scenario != "http500" {
			continue
		}
		t.Run(c.Scenario, func(t *testing.T) { harnesstest.CheckHugeFields(t, Opencode{}, c.Data) })
	}
}
