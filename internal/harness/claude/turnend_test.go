package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The payloads in testdata/turnend are what claude 2.1.197's TUI gave a
// Stop hook and a StopFailure hook (an endpoint answering 400), with the
// transcript of the first.

var hookCmd = []string{"/opt/leo/bin/leo", "hook", "turn-end", "--harness", "claude"}

// withTranscript points a captured payload's transcript_path at path.
func withTranscript(t *testing.T, file, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "turnend", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["transcript_path"] = path
	out, _ := json.Marshal(m)
	return out
}

func transcriptCopy(t *testing.T, extra ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "turnend", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range extra {
		data = append(data, l+"\n"...)
	}
	p := filepath.Join(t.TempDir(), "11111111-2222-4333-8444-555555555555.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseTurnEndRealStop(t *testing.T) {
	te, err := Claude{}.ParseTurnEnd(withTranscript(t, "claude-stop.json", transcriptCopy(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := harness.TurnEnd{
		SessionID: "11111111-2222-4333-8444-555555555555",
		Inputs:    []string{"Do the thing LEO-cap-001 please\n\n[leo task t1 run 20260101T000000.000Z]"},
		Reply:     "ACK LEO-cap-001",
	}
	if !reflect.DeepEqual(te, want) {
		t.Fatalf("got %+v\nwant %+v", te, want)
	}
}

func TestParseTurnEndRealStopFailure(t *testing.T) {
	// Its transcript was another session's; the turn's entry, as claude
	// writes it, is added to the copy.
	entry := `{"type":"user","promptId":"f88526c8-e0ff-45e6-bd0a-24be4c1c37f4","message":{"role":"user","content":"Fail please LEO-cap-004\n\n[leo task t4 run 20260101T000000.000Z]"}}`
	te, err := Claude{}.ParseTurnEnd(withTranscript(t, "claude-stopfailure.json", transcriptCopy(t, entry)))
	if err != nil {
		t.Fatal(err)
	}
	if !te.Failed || !strings.Contains(te.Error, "leo test: the model refused this request") ||
		len(te.Inputs) != 1 || !strings.HasPrefix(te.Inputs[0], "Fail please LEO-cap-004") {
		t.Fatalf("a StopFailure: %+v", te)
	}
}

// The turn's input is the user entry of the payload's prompt_id, not the
// newest one: a message typed while the turn ran is another prompt.
func TestParseTurnEndPicksThePromptsEntry(t *testing.T) {
	later := `{"type":"user","promptId":"other","message":{"role":"user","content":"typed later"},"sessionId":"11111111-2222-4333-8444-555555555555"}`
	tool := `{"type":"user","promptId":"6d22ff9d-8318-4404-a385-53ba0ac5d602","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}`
	te, err := Claude{}.ParseTurnEnd(withTranscript(t, "claude-stop.json", transcriptCopy(t, tool, later)))
	if err != nil {
		t.Fatal(err)
	}
	if len(te.Inputs) != 1 || !strings.HasPrefix(te.Inputs[0], "Do the thing LEO-cap-001") {
		t.Fatalf("inputs %q", te.Inputs)
	}
	// Without a prompt_id: the last user message.
	p := withTranscript(t, "claude-stop.json", transcriptCopy(t, later))
	var m map[string]any
	_ = json.Unmarshal(p, &m)
	delete(m, "prompt_id")
	p, _ = json.Marshal(m)
	if te, err = (Claude{}).ParseTurnEnd(p); err != nil || !reflect.DeepEqual(te.Inputs, []string{"typed later"}) {
		t.Fatalf("no prompt_id: %q %v", te.Inputs, err)
	}
}

func TestParseTurnEndRejectsOthers(t *testing.T) {
	for name, payload := range map[string]string{
		"not json":          "{",
		"other event":       `{"hook_event_name":"PreToolUse"}`,
		"relative path":     `{"hook_event_name":"Stop","transcript_path":"x.jsonl"}`,
		"not a transcript":  `{"hook_event_name":"Stop","transcript_path":"/etc/passwd"}`,
		"missing file":      `{"hook_event_name":"Stop","transcript_path":"/nonexistent/a.jsonl"}`,
		"control bytes":     "{\"hook_event_name\":\"Stop\x00\"}",
		"transcript is dir": `{"hook_event_name":"Stop","transcript_path":"` + t.TempDir() + `/d.jsonl"}`,
	} {
		if name == "transcript is dir" {
			var p struct {
				TranscriptPath string `json:"transcript_path"`
			}
			_ = json.Unmarshal([]byte(payload), &p)
			_ = os.Mkdir(p.TranscriptPath, 0o700)
		}
		if _, err := (Claude{}).ParseTurnEnd([]byte(payload)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A Stop with no transcript named is still a turn end, with no inputs.
	te, err := Claude{}.ParseTurnEnd([]byte(`{"hook_event_name":"Stop","last_assistant_message":"hi"}`))
	if err != nil || te.Reply != "hi" || te.Inputs != nil {
		t.Fatalf("%+v %v", te, err)
	}
}

// A huge transcript is read from its tail only; the turn at its end is found.
func TestParseTurnEndHugeTranscript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	big := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", transcriptTail+10) + `"}}` + "\n"
	last := `{"type":"user","promptId":"p1","message":{"role":"user","content":"the end"}}` + "\n"
	if err := os.WriteFile(p, []byte(big+last), 0o600); err != nil {
		t.Fatal(err)
	}
	te, err := Claude{}.ParseTurnEnd([]byte(`{"hook_event_name":"Stop","prompt_id":"p1","transcript_path":` + quote(p) + `}`))
	if err != nil || !reflect.DeepEqual(te.Inputs, []string{"the end"}) {
		t.Fatalf("%q %v", te.Inputs, err)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return m
}

// leoCommands lists the commands of every hook of event.
func commands(t *testing.T, settings map[string]any, event string) []string {
	t.Helper()
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	var out []string
	for _, g := range groups {
		entries, _ := g.(map[string]any)["hooks"].([]any)
		for _, e := range entries {
			c, _ := e.(map[string]any)["command"].(string)
			out = append(out, c)
		}
	}
	return out
}

func TestTurnEndSignalMergesSettings(t *testing.T) {
	ws := t.TempDir()
	path := SettingsLocalPath(ws)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	user := `{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check"}]}]
  },
  "env": {"FOO": "bar"}
}`
	if err := os.WriteFile(path, []byte(user), 0o640); err != nil {
		t.Fatal(err)
	}
	spec := harness.LaunchSpec{Workspace: ws}
	cmd := harness.Command{Argv: []string{"claude"}, Dir: ws}
	out, err := Claude{}.TurnEndSignal(context.Background(), spec, cmd, harness.TurnEndHook{Command: hookCmd})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, cmd) {
		t.Fatalf("claude's launch changed: %+v", out)
	}
	m := readSettings(t, path)
	want := "/opt/leo/bin/leo hook turn-end --harness claude"
	if got := commands(t, m, "Stop"); !reflect.DeepEqual(got, []string{"notify-send done", want}) {
		t.Fatalf("Stop hooks %q", got)
	}
	for _, event := range SignalEvents {
		if got := commands(t, m, event); event != "Stop" && !reflect.DeepEqual(got, []string{want}) {
			t.Fatalf("%s hooks %q", event, got)
		}
	}
	if got := commands(t, m, "PreToolUse"); !reflect.DeepEqual(got, []string{"check"}) {
		t.Fatalf("PreToolUse hooks %q", got)
	}
	if m["env"].(map[string]any)["FOO"] != "bar" || m["permissions"] == nil {
		t.Fatalf("the user's settings were not kept: %v", m)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}

	// Again: nothing to write (the file is not touched).
	before, _ := os.Stat(path)
	if _, err := (Claude{}).TurnEndSignal(context.Background(), spec, cmd, harness.TurnEndHook{Command: hookCmd}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Fatal("an idempotent merge rewrote the file")
	}

	// leo moved: its old entry is replaced, not kept beside the new one.
	moved := append([]string{"/new place/leo"}, hookCmd[1:]...)
	if _, err := (Claude{}).TurnEndSignal(context.Background(), spec, cmd, harness.TurnEndHook{Command: moved}); err != nil {
		t.Fatal(err)
	}
	m = readSettings(t, path)
	if got := commands(t, m, "Stop"); !reflect.DeepEqual(got, []string{"notify-send done", "'/new place/leo' hook turn-end --harness claude"}) {
		t.Fatalf("after the move: Stop hooks %q", got)
	}
	for _, event := range SignalEvents {
		if got := commands(t, m, event); len(got) != 1 && event != "Stop" {
			t.Fatalf("after the move: %s hooks %q", event, got)
		}
	}
}

// An earlier leo registered only Stop and StopFailure (and a user may have
// copied an entry, or a crash left a duplicate): the whole set is
// registered once, the duplicate dropped, the user's entries kept.
func TestMergeHooksFromAnEarlierLeo(t *testing.T) {
	ws := t.TempDir()
	path := SettingsLocalPath(ws)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	old := "/old/leo hook turn-end --harness claude"
	earlier := `{"hooks": {
  "Stop": [{"hooks": [{"type": "command", "command": "` + old + `", "timeout": 10}]}],
  "StopFailure": [{"hooks": [{"type": "command", "command": "` + old + `", "timeout": 10}, {"type": "command", "command": "` + old + `"}]}],
  "Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": "notify-send ask"}]}]
}}`
	if err := os.WriteFile(path, []byte(earlier), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MergeHooks(path, hookCmd); err != nil {
		t.Fatal(err)
	}
	m := readSettings(t, path)
	want := harness.ShellJoin(hookCmd)
	for _, event := range SignalEvents {
		got := commands(t, m, event)
		if event == "Notification" {
			if !reflect.DeepEqual(got, []string{"notify-send ask", want}) {
				t.Fatalf("Notification hooks %q", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, []string{want}) {
			t.Fatalf("%s hooks %q", event, got)
		}
	}
	// The user's matcher group is kept as it was.
	var groups []map[string]any
	raw, _ := json.Marshal(m["hooks"].(map[string]any)["Notification"])
	_ = json.Unmarshal(raw, &groups)
	if len(groups) != 2 || groups[0]["matcher"] != "permission_prompt" {
		t.Fatalf("Notification groups %v", groups)
	}
}

func TestTurnEndSignalNewAndBadSettings(t *testing.T) {
	ws := t.TempDir()
	spec := harness.LaunchSpec{Workspace: ws}
	if _, err := (Claude{}).TurnEndSignal(context.Background(), spec, harness.Command{}, harness.TurnEndHook{Command: hookCmd}); err != nil {
		t.Fatal(err)
	}
	if got := commands(t, readSettings(t, SettingsLocalPath(ws)), "Stop"); len(got) != 1 {
		t.Fatalf("new file: %q", got)
	}
	for name, content := range map[string]string{
		"not json":        "{",
		"hooks not map":   `{"hooks": []}`,
		"event not list":  `{"hooks": {"Stop": {}}}`,
		"group hooks bad": `{"hooks": {"Stop": [{"hooks": "x"}]}}`,
	} {
		ws := t.TempDir()
		path := SettingsLocalPath(ws)
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		_ = os.WriteFile(path, []byte(content), 0o600)
		if _, err := (Claude{}).TurnEndSignal(context.Background(), harness.LaunchSpec{Workspace: ws}, harness.Command{}, harness.TurnEndHook{Command: hookCmd}); err == nil {
			t.Errorf("%s: no error", name)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("%s: the file was changed to %s", name, data)
		}
	}
}

// claude runs the Stop hook before it writes the turn to the transcript
// (observed on 2.1.197: the file held only its first two lines): the
// prompt's entry is waited for.
func TestParseTurnEndWaitsForTheTranscript(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	payload := []byte(`{"hook_event_name":"Stop","prompt_id":"p2","transcript_path":` + quote(p) + `,"last_assistant_message":"ok"}`)
	misses := 0
	afterMiss = func() {
		misses++
		switch misses {
		case 1: // the file appears, without the turn
			_ = os.WriteFile(p, []byte(`{"type":"mode","mode":"normal"}`+"\n"+`{"type":"user","promptId":"p1","message":{"role":"user","content":"earlier"}}`+"\n"), 0o600)
		case 2: // then the turn
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			_, _ = f.WriteString(`{"type":"user","promptId":"p2","message":{"role":"user","content":"this turn"}}` + "\n")
			_ = f.Close()
		}
	}
	defer func() { afterMiss = func() {} }()
	te, err := Claude{}.ParseTurnEnd(payload)
	if err != nil || !reflect.DeepEqual(te.Inputs, []string{"this turn"}) || misses != 2 {
		t.Fatalf("%+v %v after %d misses", te, err, misses)
	}
	// A prompt that never shows: the last user message once the wait is over.
	transcriptWait, transcriptPoll = 0, 0
	defer func() { transcriptWait, transcriptPoll = 10*time.Second, 50*time.Millisecond }()
	payload = []byte(`{"hook_event_name":"Stop","prompt_id":"p9","transcript_path":` + quote(p) + `}`)
	if te, err = (Claude{}).ParseTurnEnd(payload); err != nil || !reflect.DeepEqual(te.Inputs, []string{"this turn"}) {
		t.Fatalf("%+v %v", te, err)
	}
}
