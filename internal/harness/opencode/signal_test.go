package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
)

// testdata/signals holds what leo's own plugin sent from opencode 1.18.33's
// TUI, launched as leo launches it with permission {bash: ask}, against
// the test model server (e2e/realcli/cmd/capturesignals): per turn, its
// payloads in the order they came, <turn>-<n>-<type>_v<version>.json.
//
//	once      a bash call, answered Allow once
//	reject    a bash call, answered Reject (Escape)
//	always    a bash call, answered Allow always, Confirm
//	refused   HTTP 400 (whose body says server_error: opencode retries it)
//	limited   HTTP 429 until opencode gives up
//	question  the question tool, answered with its first option

func readSignal(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "signals", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// scriptedError is the failure's words, as the store's record gives them.
const scriptedError = "modelserver: scripted error"

var (
	started  = harness.Signal{Kind: harness.SignalTurnStarted}
	working  = harness.Signal{Kind: harness.SignalWorking}
	retrying = harness.Signal{Kind: harness.SignalWorking, Text: "modelserver: scripted error"}
)

func shell(cmd string) harness.Signal {
	text := "Shell command\n$ " + cmd
	return harness.Signal{Kind: harness.SignalNeedsInput, Text: text,
		Prompt: &harness.Prompt{Kind: "permission", Text: text, Choices: PermissionChoices}}
}

// signalWant is what each captured payload says; every file must be here.
var signalWant = map[string]harness.Signal{
	"once-1-session.status-busy": started,
	"once-2-permission.asked":    shell("touch leo-sig-1.txt"),
	"once-3-permission.replied":  working,
	"once-4-session.idle":        {Kind: harness.SignalTurnEnded, Text: "ACK LEO-sig-1 the file is there"},
	// Rejected: the turn ends with no reply.
	"reject-1-session.status-busy": started,
	"reject-2-permission.asked":    shell("touch leo-sig-2.txt"),
	"reject-3-permission.replied":  working,
	"reject-4-session.idle":        {Kind: harness.SignalTurnEnded},
	"always-1-session.status-busy": started,
	"always-2-permission.asked":    shell("touch leo-sig-3.txt"),
	"always-3-permission.replied":  working,
	"always-4-session.idle":        {Kind: harness.SignalTurnEnded, Text: "ACK LEO-sig-3 the file is there"},
	// Five retries, each a busy again after the wait; then the error, and
	// the idle after it (once: opencode says it twice).
	"refused-1-session.status-busy":   started,
	"refused-2-session.status-retry":  retrying,
	"refused-3-session.status-busy":   started,
	"refused-4-session.status-retry":  retrying,
	"refused-5-session.status-busy":   started,
	"refused-6-session.status-retry":  retrying,
	"refused-7-session.status-busy":   started,
	"refused-8-session.status-retry":  retrying,
	"refused-9-session.status-busy":   started,
	"refused-10-session.status-retry": retrying,
	"refused-11-session.status-busy":  started,
	"refused-12-session.error":        {Kind: harness.SignalTurnFailed, Text: scriptedError},
	"refused-13-session.idle":         {Kind: harness.SignalTurnFailed, Text: scriptedError},
	// A 429's retries say only the server's words (no limit in them): the
	// turn goes on; the error after them is the limit (no retry-after).
	"limited-1-session.status-busy":   started,
	"limited-2-session.status-retry":  retrying,
	"limited-3-session.status-busy":   started,
	"limited-4-session.status-retry":  retrying,
	"limited-5-session.status-busy":   started,
	"limited-6-session.status-retry":  retrying,
	"limited-7-session.status-busy":   started,
	"limited-8-session.status-retry":  retrying,
	"limited-9-session.status-busy":   started,
	"limited-10-session.status-retry": retrying,
	"limited-11-session.status-busy":  started,
	"limited-12-session.error":        {Kind: harness.SignalLimited, Text: scriptedError},
	"limited-13-session.idle":         {Kind: harness.SignalLimited, Text: scriptedError},
	"question-1-session.status-busy":  started,
	"question-2-question.asked": {Kind: harness.SignalNeedsInput, Text: "Which file should I create?",
		Prompt: &harness.Prompt{Kind: "question", Text: "Which file should I create?", Choices: []string{"alpha.txt", "beta.txt", CustomAnswer}}},
	"question-3-question.replied": working,
	"question-4-session.idle":     {Kind: harness.SignalTurnEnded, Text: "ACK LEO-sig-6 answered"},
}

func signalFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "signals", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no signal payloads: %v", err)
	}
	return files
}

// TestParseSignalCaptured reads every captured payload: the kind, the
// words and the prompt the table says, the session named, at once (no
// file or process: ReadSignal goes to ParseSignal).
func TestParseSignalCaptured(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range signalFiles(t) {
		name, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), "_v")
		seen[name] = true
		want, ok := signalWant[name]
		if !ok {
			t.Errorf("%s: no expectation", f)
			continue
		}
		got, err := harness.ReadSignal(Opencode{}, readSignal(t, filepath.Base(f)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(got.SessionID, "ses_") {
			t.Errorf("%s: session %q", name, got.SessionID)
		}
		got.SessionID = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v %+v\nwant %+v %+v", name, got, got.Prompt, want, want.Prompt)
		}
	}
	for name := range signalWant {
		if !seen[name] {
			t.Errorf("expectation %s has no payload", name)
		}
	}
}

// TestParseSignalPromptIsTheScreens: the plugin's prompt says what the
// TUI shows at the same moment, in the same words (a prompt read from
// either has the same id).
func TestParseSignalPromptIsTheScreens(t *testing.T) {
	for payload, screen := range map[string]string{
		"once-2-permission.asked_v1.18.33.json":   "dialog-permission_80x24_v1.18.33.txt",
		"question-2-question.asked_v1.18.33.json": "dialog-question_120x40_v1.18.33.txt",
	} {
		sig, err := Opencode{}.ParseSignal(readSignal(t, payload))
		if err != nil {
			t.Fatal(err)
		}
		s := Opencode{}.Screen().Classify(harnesstest.ReadFile(t, filepath.Join(harnesstest.ScreensDir("opencode"), screen)))
		if !reflect.DeepEqual(sig.Prompt, s.Prompt) {
			t.Errorf("%s: %+v, the screen %s: %+v", payload, sig.Prompt, screen, s.Prompt)
		}
	}
}

// edit rewrites a captured payload (decoded as a map) for the cases the
// test model server cannot produce.
func edit(t *testing.T, name string, f func(p map[string]any)) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(readSignal(t, name), &p); err != nil {
		t.Fatal(err)
	}
	f(p)
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func path(p map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		p = p[k].(map[string]any)
	}
	return p
}

// TestParseSignalLimits: a rate or usage limit in opencode's own shapes —
// a retry whose words say so (ResetsAt: when opencode tries again), its
// own service's limit actions, an error whose response gives retry-after
// (in ms, seconds from the response's date or the payload's time, or a
// date) — built on the captured payloads.
func TestParseSignalLimits(t *testing.T) {
	retry := func(message, reason string) []byte {
		return edit(t, "limited-2-session.status-retry_v1.18.33.json", func(p map[string]any) {
			s := path(p, "properties", "status")
			s["message"] = message
			if reason != "" {
				s["action"] = map[string]any{"reason": reason, "title": "Free limit reached"}
			}
		})
	}
	errWith := func(status float64, message string, headers map[string]any) []byte {
		return edit(t, "limited-12-session.error_v1.18.33.json", func(p map[string]any) {
			d := path(p, "properties", "error", "data")
			d["statusCode"], d["message"], d["responseHeaders"] = status, message, headers
		})
	}
	date := "Wed, 02 Dec 2026 14:21:44 GMT"
	at := time.Date(2026, 12, 2, 14, 21, 44, 0, time.UTC)
	var captured struct {
		Time       int64
		Properties struct{ Status struct{ Next int64 } }
	}
	_ = json.Unmarshal(readSignal(t, "limited-12-session.error_v1.18.33.json"), &captured)
	sent := time.UnixMilli(captured.Time).UTC() // when the plugin sent the error
	_ = json.Unmarshal(readSignal(t, "limited-2-session.status-retry_v1.18.33.json"), &captured)
	next := time.UnixMilli(captured.Properties.Status.Next).UTC() // when opencode tries again
	if sent.Year() < 2026 || next.Year() < 2026 {
		t.Fatalf("captured times %s %s", sent, next)
	}
	cases := []struct {
		name    string
		payload []byte
		kind    harness.SignalKind
		resets  time.Time
	}{
		{"retry rate limit", retry("Rate limit exceeded, please slow down", ""), harness.SignalLimited, next},
		{"retry too many", retry("Too Many Requests", ""), harness.SignalLimited, next},
		{"retry go limit", retry("Usage limit reached. It will reset in 5 hours", ""), harness.SignalLimited, next},
		{"retry free tier", retry("Free usage exceeded, subscribe to Go", "free_tier_limit"), harness.SignalLimited, next},
		{"retry overloaded", retry("Provider is overloaded", ""), harness.SignalWorking, time.Time{}},
		{"error retry-after s", errWith(429, "x", map[string]any{"date": date, "retry-after": "120"}), harness.SignalLimited, at.Add(2 * time.Minute)},
		{"error retry-after ms", errWith(429, "x", map[string]any{"Date": date, "Retry-After-Ms": "1500"}), harness.SignalLimited, at.Add(1500 * time.Millisecond)},
		{"error retry-after date", errWith(429, "x", map[string]any{"retry-after": "Wed, 02 Dec 2026 18:00:00 GMT"}), harness.SignalLimited, time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)},
		{"error no date", errWith(429, "x", map[string]any{"retry-after": "60"}), harness.SignalLimited, sent.Add(time.Minute)},
		{"error words", errWith(400, "rate_limit_error: slow down", nil), harness.SignalLimited, time.Time{}},
		{"error quota", errWith(403, "You exceeded your current quota", nil), harness.SignalLimited, time.Time{}},
		{"error other", errWith(500, "boom", map[string]any{"retry-after": "5"}), harness.SignalTurnFailed, time.Time{}},
		// A reset too far off (or past) to be one is none.
		{"error retry-after absurd", errWith(429, "x", map[string]any{"date": date, "retry-after": "1e300"}), harness.SignalLimited, time.Time{}},
		{"error retry-after date past", errWith(429, "x", map[string]any{"date": date, "retry-after": "Wed, 02 Dec 2020 18:00:00 GMT"}), harness.SignalLimited, time.Time{}},
		{"retry next absurd", edit(t, "limited-2-session.status-retry_v1.18.33.json", func(p map[string]any) {
			s := path(p, "properties", "status")
			s["message"], s["next"] = "Rate limit exceeded", 9.2e18
		}), harness.SignalLimited, time.Time{}},
	}
	for _, c := range cases {
		sig, err := Opencode{}.ParseSignal(c.payload)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sig.Kind != c.kind || !sig.ResetsAt.Equal(c.resets) || sig.Text == "" {
			t.Errorf("%s: %+v, want kind %d resets %s", c.name, sig, c.kind, c.resets)
		}
		// opencode retries a limit of its status by itself; an error's
		// limit ends the turn.
		if waits := strings.HasPrefix(c.name, "retry") && c.kind == harness.SignalLimited; sig.HarnessWaits != waits {
			t.Errorf("%s: harness waits %v, want %v", c.name, sig.HarnessWaits, waits)
		}
	}
}

// TestParseSignalPermissionWords: each tool's prompt as opencode 1.18's
// TUI titles it.
func TestParseSignalPermissionWords(t *testing.T) {
	cases := []struct{ props, want string }{
		{`{"permission":"bash","patterns":["rm -rf build"],"metadata":{"command":"rm -rf build"}}`, "Shell command\n$ rm -rf build"},
		{`{"permission":"bash","patterns":["git push","git tag"],"metadata":{}}`, "Shell command\n- git push\n- git tag"},
		{`{"permission":"edit","patterns":["a.go"],"metadata":{"filepath":"/ws/a.go"}}`, "Edit /ws/a.go"},
		{`{"permission":"read","patterns":["/etc/passwd"]}`, "Read /etc/passwd"},
		{`{"permission":"glob","patterns":["**/*.go"],"metadata":{"pattern":"**/*.go"}}`, `Glob "**/*.go"`},
		{`{"permission":"grep","patterns":["TODO"],"metadata":{"pattern":"TODO"}}`, `Grep "TODO"`},
		{`{"permission":"list","patterns":["/ws"],"metadata":{"path":"/ws"}}`, "List /ws"},
		{`{"permission":"webfetch","patterns":["https://x"],"metadata":{"url":"https://x"}}`, "WebFetch https://x"},
		{`{"permission":"task","patterns":["general"],"metadata":{"subagent_type":"general","description":"look around"}}`, "General Task\n◉ look around"},
		{`{"permission":"external_directory","patterns":["/tmp/*"],"metadata":{"parentDir":"/tmp"}}`, "Access external directory /tmp\n- /tmp/*"},
		{`{"permission":"doom_loop","patterns":["bash"]}`, "Continue after repeated failures"},
		{`{"permission":"mcp_leo_send","patterns":["*"]}`, "Call tool mcp_leo_send"},
	}
	for _, c := range cases {
		sig, err := Opencode{}.ParseSignal([]byte(`{"type":"permission.asked","properties":` + c.props + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if sig.Kind != harness.SignalNeedsInput || sig.Prompt == nil || sig.Prompt.Text != c.want || sig.Text != c.want ||
			!reflect.DeepEqual(sig.Prompt.Choices, PermissionChoices) || sig.Prompt.Kind != "permission" {
			t.Errorf("%s: %+v %+v, want %q", c.props, sig, sig.Prompt, c.want)
		}
	}
	// Hostile words stay words: the signal carries them as text.
	sig, err := Opencode{}.ParseSignal([]byte(`{"type":"permission.asked","properties":{"permission":"bash","metadata":{"command":"echo \u001b[2J\u0000 hi"}}}`))
	if err != nil || sig.Prompt.Text != "Shell command\n$ echo \x1b[2J\x00 hi" {
		t.Fatalf("%+v %v", sig, err)
	}
}

// TestParseSignalOthers: garbage and types the plugin never sends are
// errors; a status leo's plugin does not send (idle) is nothing.
func TestParseSignalOthers(t *testing.T) {
	for _, p := range []string{"", "{", "[]", `{"type":"session.created"}`, `{"type":"message.updated"}`, "\x1b]0;x\x07"} {
		if _, err := (Opencode{}).ParseSignal([]byte(p)); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	sig, err := Opencode{}.ParseSignal([]byte(`{"type":"session.status","properties":{"sessionID":"s","status":{"type":"idle"}}}`))
	if err != nil || sig.Kind != harness.SignalNone || sig.EndsTurn() {
		t.Fatalf("%+v %v", sig, err)
	}
	// A question without options or words is still a person's question.
	sig, err = Opencode{}.ParseSignal([]byte(`{"type":"question.asked","properties":{"questions":[{"question":"  "}]}}`))
	if err != nil || sig.Kind != harness.SignalNeedsInput || sig.Prompt.Kind != "question" {
		t.Fatalf("%+v %v", sig, err)
	}
}

// TestParseTurnEndMidTurn: the turn-end hub may be handed a payload that
// ends no turn (a limited retry ends the wait, not the turn): it reads as
// a turn end with no input, which completes no firing; the captured ends
// read as before.
func TestParseTurnEndMidTurn(t *testing.T) {
	for _, name := range []string{
		"once-1-session.status-busy_v1.18.33.json", "once-2-permission.asked_v1.18.33.json",
		"once-3-permission.replied_v1.18.33.json", "limited-2-session.status-retry_v1.18.33.json",
		"question-2-question.asked_v1.18.33.json", "question-3-question.replied_v1.18.33.json",
	} {
		te, err := Opencode{}.ParseTurnEnd(readSignal(t, name))
		if err != nil || te.Inputs != nil || te.Failed || te.Reply != "" || !strings.HasPrefix(te.SessionID, "ses_") {
			t.Errorf("%s: %+v %v", name, te, err)
		}
	}
	te, err := Opencode{}.ParseTurnEnd(readSignal(t, "once-4-session.idle_v1.18.33.json"))
	if err != nil || !reflect.DeepEqual(te.Inputs, []string{"Please create leo-sig-1.txt LEO-sig-1"}) || te.Reply != "ACK LEO-sig-1 the file is there" || te.Failed {
		t.Fatalf("%+v %v", te, err)
	}
	te, err = Opencode{}.ParseTurnEnd(readSignal(t, "limited-13-session.idle_v1.18.33.json"))
	if err != nil || !te.Failed || te.Error != "APIError: "+scriptedError || len(te.Inputs) != 1 {
		t.Fatalf("%+v %v", te, err)
	}
}

func FuzzParseSignal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "signals", "*.json"))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	f.Add([]byte(`{"type":"session.error","properties":{"error":{"name":"APIError","data":{"statusCode":429,"responseHeaders":{"retry-after":"-1e400"}}}},"time":-5}`))
	f.Add([]byte(`{"type":"session.status","properties":{"status":{"type":"retry","message":"rate limit","next":-9223372036854775808}}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		s, err := Opencode{}.ParseSignal(payload)
		if err != nil {
			return
		}
		if s.Kind < harness.SignalNone || s.Kind > harness.SignalLimited {
			t.Fatalf("kind %d", s.Kind)
		}
		if (s.Prompt != nil) != (s.Kind == harness.SignalNeedsInput) {
			t.Fatalf("%+v: a prompt exactly with needs input", s)
		}
		if !s.ResetsAt.IsZero() && s.Kind != harness.SignalLimited {
			t.Fatalf("%+v: a reset time without a limit", s)
		}
		// The turn-end hub may read any of them: never a panic, and a
		// payload that is no turn's end has no input.
		te, err := Opencode{}.ParseTurnEnd(payload)
		if err == nil && !s.EndsTurn() && s.Kind != harness.SignalNone && len(te.Inputs) > 0 {
			t.Fatalf("%+v: a mid-turn payload read as a turn's end %+v", s, te)
		}
	})
}
