package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The payloads in testdata/hooks are what the real claude 2.1.197 and
// 2.1.332 gave hooks on every event of capturescreens' hookEvents, in the
// order it ran them, over turns that ask permission (approved, denied),
// sit idle, hit HTTP 429 and HTTP 400 (go run ./e2e/realcli/cmd/
// capturescreens -harness claude -scenario permission-bash).

type wantSignal struct {
	event  string
	kind   harness.SignalKind
	text   string
	prompt *harness.Prompt
}

var permissionAsked = []wantSignal{
	{"UserPromptSubmit", harness.SignalTurnStarted, "", nil}, // text: the prompt, checked below
	{"PreToolUse", harness.SignalNone, "", nil},
	{"PermissionRequest", harness.SignalNeedsInput, "Bash: touch ?", &harness.Prompt{Kind: "permission", Text: "Bash: touch ?"}},
	{"Notification", harness.SignalNeedsInput, "Claude needs your permission", &harness.Prompt{Kind: "permission", Text: "Claude needs your permission"}},
}

var hookWant = map[string][]wantSignal{
	"permission-approved": append(append([]wantSignal(nil), permissionAsked...),
		wantSignal{"PostToolUse", harness.SignalWorking, "", nil},
		wantSignal{"Stop", harness.SignalTurnEnded, "ACK LEO-perm-001", nil}),
	// Escape at the prompt: claude drops the call and fires nothing more;
	// only the screen (the input box back) tells the prompt is gone.
	"permission-denied": permissionAsked,
	// A minute (the capture: 5 s) after a turn: an idle agent, not one
	// that needs a person.
	"idle-prompt": {{"Notification", harness.SignalNone, "", nil}},
	// The question tool asks through a PermissionRequest: a question, in
	// the words the screen shows; claude then notifies as for any prompt.
	"question": {
		{"UserPromptSubmit", harness.SignalTurnStarted, "", nil},
		{"PreToolUse", harness.SignalNone, "", nil},
		{"PermissionRequest", harness.SignalNeedsInput, "Colour: Which colour should the button be?", &harness.Prompt{Kind: "question", Text: "Colour: Which colour should the button be?"}},
		{"Notification", harness.SignalNeedsInput, "Claude needs your permission", &harness.Prompt{Kind: "permission", Text: "Claude needs your permission"}},
	},
	"rate-limited": {
		{"UserPromptSubmit", harness.SignalTurnStarted, "this turn is rate limited LEO-lim-001", nil},
		{"StopFailure", harness.SignalLimited, "API Error: Request rejected (429) · modelserver: scripted error", nil},
	},
	"refused": {
		{"UserPromptSubmit", harness.SignalTurnStarted, "this turn is refused LEO-ref-001", nil},
		{"StopFailure", harness.SignalTurnFailed, "API Error: 400 modelserver: scripted error", nil},
	},
}

func readHooks(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out
}

func TestParseSignalRealPayloads(t *testing.T) {
	// The captures' transcripts are gone: ParseTurnEnd, compared below,
	// is not to wait for them.
	defer func(w time.Duration) { transcriptWait = w }(transcriptWait)
	transcriptWait = 0
	files, err := filepath.Glob(filepath.Join("testdata", "hooks", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		turn, _, _ := strings.Cut(filepath.Base(f), "_v")
		want, ok := hookWant[turn]
		if !ok {
			t.Fatalf("%s: no expectation for %q", f, turn)
		}
		seen[turn] = true
		payloads := readHooks(t, f)
		if len(payloads) != len(want) {
			t.Fatalf("%s: %d payloads, want %d", f, len(payloads), len(want))
		}
		for i, p := range payloads {
			var raw struct {
				Event     string `json:"hook_event_name"`
				SessionID string `json:"session_id"`
				Prompt    string `json:"prompt"`
			}
			if err := json.Unmarshal(p, &raw); err != nil {
				t.Fatal(err)
			}
			w := want[i]
			if raw.Event != w.event {
				t.Fatalf("%s #%d: event %s, want %s (claude's order changed)", f, i, raw.Event, w.event)
			}
			got, err := Claude{}.ParseSignal(p)
			if err != nil {
				t.Fatalf("%s #%d (%s): %v", f, i, w.event, err)
			}
			text := w.text
			if w.event == "UserPromptSubmit" {
				text = raw.Prompt
			}
			if got.Kind != w.kind || !match(got.Text, text) || got.SessionID != raw.SessionID || got.SessionID == "" {
				t.Errorf("%s #%d (%s): %+v, want kind %d text %q", f, i, w.event, got, w.kind, text)
			}
			switch {
			case w.prompt == nil && got.Prompt != nil:
				t.Errorf("%s #%d (%s): prompt %+v, want none", f, i, w.event, got.Prompt)
			case w.prompt != nil && (got.Prompt == nil || got.Prompt.Kind != w.prompt.Kind || !match(got.Prompt.Text, w.prompt.Text)):
				t.Errorf("%s #%d (%s): prompt %+v, want %+v", f, i, w.event, got.Prompt, w.prompt)
			}
			if !got.ResetsAt.IsZero() {
				t.Errorf("%s #%d: resets at %v: the payload names no time", f, i, got.ResetsAt)
			}
			// The slow path and the fast one agree on a turn's end.
			if got.EndsTurn() {
				te, _ := Claude{}.ParseTurnEnd(p)
				if ts := harness.TurnEndSignal(te); got.Kind != harness.SignalLimited && (ts.Kind != got.Kind || ts.Text != got.Text) {
					t.Errorf("%s #%d: ParseTurnEnd says %+v, ParseSignal %+v", f, i, ts, got)
				}
			}
		}
	}
	for turn := range hookWant {
		if !seen[turn] {
			t.Errorf("expectation %q has no capture", turn)
		}
	}
}

// match compares s with want, where "?" in want stands for one character
// (the two turns' commands differ: touch x, touch y).
func match(s, want string) bool {
	if len(s) != len(want) {
		return false
	}
	for i := range len(s) {
		if want[i] != '?' && s[i] != want[i] {
			return false
		}
	}
	return true
}

// ParseSignal answers from the payload alone: a Stop naming a transcript
// that is not there (ParseTurnEnd would wait up to 10 s for it) is read at
// once.
func TestParseSignalReadsNoTranscript(t *testing.T) {
	defer func(w time.Duration) { transcriptWait = w }(transcriptWait)
	transcriptWait = time.Hour
	missing := filepath.Join(t.TempDir(), "nothing.jsonl")
	for _, f := range []string{"claude-stop.json", "claude-stopfailure.json"} {
		got, err := Claude{}.ParseSignal(withTranscript(t, f, missing))
		if err != nil || !got.EndsTurn() {
			t.Fatalf("%s: %+v %v", f, got, err)
		}
	}
	got, err := harness.ReadSignal(Claude{}, withTranscript(t, "claude-stop.json", missing))
	if err != nil || got.Kind != harness.SignalTurnEnded || got.Text != "ACK LEO-cap-001" {
		t.Fatalf("ReadSignal: %+v %v", got, err)
	}
}

func TestParseSignalEdges(t *testing.T) {
	for name, c := range map[string]struct {
		payload string
		want    harness.Signal
	}{
		"a hook leo does not register": {`{"hook_event_name":"SessionStart","session_id":"s"}`, harness.Signal{SessionID: "s"}},
		"tool failed after the prompt": {`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash"}`, harness.Signal{Kind: harness.SignalWorking}},
		"an MCP server's question": {`{"hook_event_name":"Notification","notification_type":"elicitation_dialog","message":"Claude Code needs your input"}`,
			harness.Signal{Kind: harness.SignalNeedsInput, Text: "Claude Code needs your input", Prompt: &harness.Prompt{Kind: "question", Text: "Claude Code needs your input"}}},
		"its answer": {`{"hook_event_name":"Notification","notification_type":"elicitation_response","message":"x"}`, harness.Signal{Kind: harness.SignalWorking}},
		"a notification without type": {`{"hook_event_name":"Notification","message":"Claude needs your permission to use Bash"}`,
			harness.Signal{Kind: harness.SignalNeedsInput, Text: "Claude needs your permission to use Bash", Prompt: &harness.Prompt{Kind: "permission", Text: "Claude needs your permission to use Bash"}}},
		"an unknown notification":    {`{"hook_event_name":"Notification","notification_type":"auth_success","message":"ok"}`, harness.Signal{}},
		"a write asked about":        {`{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"/w/a.go","content":"package a"}}`, needs("Write: /w/a.go")},
		"a tool with odd input":      {`{"hook_event_name":"PermissionRequest","tool_name":"mcp__x__y","tool_input":{"n":1}}`, needs(`mcp__x__y: {"n":1}`)},
		"a tool without input":       {`{"hook_event_name":"PermissionRequest","tool_name":"ExitPlanMode"}`, needs("ExitPlanMode")},
		"input not an object":        {`{"hook_event_name":"PermissionRequest","tool_name":"X","tool_input":"go"}`, needs("X: go")},
		"escapes stay text":          {`{"hook_event_name":"UserPromptSubmit","prompt":"a\u001b[201~b\u0000c"}`, harness.Signal{Kind: harness.SignalTurnStarted, Text: "a\x1b[201~b\x00c"}},
		"an error kind with details": {`{"hook_event_name":"StopFailure","error":"invalid_request","error_details":"prompt is too long","last_assistant_message":"API Error: …"}`, harness.Signal{Kind: harness.SignalTurnFailed, Text: "invalid_request: prompt is too long"}},
	} {
		got, err := Claude{}.ParseSignal([]byte(c.payload))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v %v, want %+v", name, got, err, c.want)
		}
	}
	for name, payload := range map[string]string{
		"not json":        "{",
		"not claude's":    `{"type":"session.idle"}`,
		"an unknown hook": `{"hook_event_name":"Stop\u0000"}`,
		"not an object":   `[1]`,
	} {
		if got, err := (Claude{}).ParseSignal([]byte(payload)); err == nil {
			t.Errorf("%s: %+v, no error", name, got)
		}
	}
	// A huge command is quoted in part.
	huge := strings.Repeat("é", 100_000)
	p, _ := json.Marshal(map[string]any{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": map[string]string{"command": huge}})
	got, err := Claude{}.ParseSignal(p)
	if err != nil || len(got.Text) > maxAsk+len("…") || !strings.HasPrefix(got.Text, "Bash: éé") || !strings.HasSuffix(got.Text, "é…") {
		t.Fatalf("huge command: %d bytes %q… %v", len(got.Text), got.Text[:20], err)
	}
}

func needs(text string) harness.Signal {
	return harness.Signal{Kind: harness.SignalNeedsInput, Text: text, Prompt: &harness.Prompt{Kind: "permission", Text: text}}
}

// A usage limit claude knows the end of says when (the texts of claude
// 2.1.197's code; an API key's 429 names no time).
func TestParseSignalLimitResets(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zoneinfo:", err)
	}
	defer func(f func() time.Time) { now = f }(now)
	at := time.Date(2026, 12, 2, 13, 20, 0, 0, berlin)
	now = func() time.Time { return at }
	for text, want := range map[string]time.Time{
		"You've hit your session limit · resets 3pm (Europe/Berlin)":             time.Date(2026, 12, 2, 15, 0, 0, 0, berlin),
		"You've hit your session limit · resets 3:30pm (Europe/Berlin)":          time.Date(2026, 12, 2, 15, 30, 0, 0, berlin),
		"You've hit your session limit · resets 1pm (Europe/Berlin)":             time.Date(2026, 12, 3, 13, 0, 0, 0, berlin),
		"You've hit your session limit · resets 1:15pm (Europe/Berlin)":          time.Date(2026, 12, 2, 13, 15, 0, 0, berlin),
		"You've hit your session limit · resets 12am (UTC)":                      time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC),
		"You've hit your weekly limit · resets Dec 5, 9am (Europe/Berlin)":       time.Date(2026, 12, 5, 9, 0, 0, 0, berlin),
		"You've hit your weekly limit · resets Jan 2, 2027, 9am (Europe/Berlin)": time.Date(2027, 1, 2, 9, 0, 0, 0, berlin),
		"You've hit your weekly limit · resets Jan 2, 9\u202fAM (Europe/Berlin)": time.Date(2027, 1, 2, 9, 0, 0, 0, berlin),
		"Fast limit reached and temporarily disabled · resets in 5m 30s":         at.Add(5*time.Minute + 30*time.Second),
		"resets in " + strings.Repeat("9999d ", 100):                             {},
		"API Error: Request rejected (429) · modelserver: scripted error":        {},
		"You've hit your session limit · resets 13pm (UTC)":                      {},
		"You've hit your weekly limit · resets Feb 31, 9am (UTC)":                {},
	} {
		p, _ := json.Marshal(map[string]any{"hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": text})
		got, err := Claude{}.ParseSignal(p)
		if err != nil || got.Kind != harness.SignalLimited || got.Text != text || !got.ResetsAt.Equal(want) {
			t.Errorf("%q: %+v %v, want resets at %v", text, got, err, want)
		}
	}
}

// Any payload is read without a panic, and what it says is consistent: a
// prompt only with needs input, a reset time only with a limit.
func FuzzParseSignal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hooks", "*.jsonl"))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"x · resets Dec 31, 9999, 12pm (Nowhere/Zone)"}`))
	f.Add([]byte(`{"hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"resets in 9999d 9999h"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		s, err := Claude{}.ParseSignal(payload)
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
	})
}
