package opencode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/turnend holds payloads of a plugin loaded into opencode 1.18.33's
// TUI the way leo loads its own (an exploration copy that sent every
// message of the session, in the session messages API's shape): a turn
// that ended, and a failed turn (an endpoint answering 400): session.error,
// then session.idle.

func readPayload(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "turnend", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseTurnEndRealIdle(t *testing.T) {
	te, err := Opencode{}.ParseTurnEnd(readPayload(t, "opencode-idle.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := harness.TurnEnd{
		SessionID: "ses_dd303f930ffeoLBVE303sxu19c",
		// opencode stores the pasted text with a trailing space.
		Inputs: []string{"Do the thing LEO-cap-003 please\n\n[leo task t3 run 20260101T000000.000Z] "},
		Reply:  "ACK LEO-cap-003",
	}
	if !reflect.DeepEqual(te, want) {
		t.Fatalf("got %+v\nwant %+v", te, want)
	}
}

func TestParseTurnEndRealFailure(t *testing.T) {
	for _, name := range []string{"opencode-error.json", "opencode-idle-after-error.json"} {
		te, err := Opencode{}.ParseTurnEnd(readPayload(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if !te.Failed || te.Error != "APIError: leo test: the model refused this request" ||
			len(te.Inputs) != 1 || !strings.HasPrefix(te.Inputs[0], "Fail please LEO-cap-005") {
			t.Fatalf("%s: %+v", name, te)
		}
	}
}

func TestParseTurnEndRejectsOthers(t *testing.T) {
	for _, p := range []string{"", "{", `{"type":"session.created"}`, "\x1b]0;x\x07"} {
		if _, err := (Opencode{}).ParseTurnEnd([]byte(p)); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	// No messages (a session.error without a session): a turn end with no input.
	te, err := Opencode{}.ParseTurnEnd([]byte(`{"type":"session.error","properties":{"error":{"name":"UnknownError"}}}`))
	if err != nil || !te.Failed || te.Error != "UnknownError" || te.Inputs != nil {
		t.Fatalf("%+v %v", te, err)
	}
	// Synthetic parts (opencode's own additions) are not the user's words;
	// the reply is the last assistant text.
	te, err = Opencode{}.ParseTurnEnd([]byte(`{"type":"session.idle","properties":{"sessionID":"s"},"messages":[
		{"info":{"role":"user"},"parts":[{"type":"text","text":"old"}]},
		{"info":{"role":"user"},"parts":[{"type":"text","text":"hi"},{"type":"text","text":"ctx","synthetic":true},{"type":"file"}]},
		{"info":{"role":"assistant"},"parts":[{"type":"text","text":"step one"}]},
		{"info":{"role":"assistant"},"parts":[{"type":"tool"}]},
		{"info":{"role":"assistant"},"parts":[{"type":"text","text":"done"}]}]}`))
	if err != nil || !reflect.DeepEqual(te.Inputs, []string{"hi"}) || te.Reply != "done" || te.Failed {
		t.Fatalf("%+v %v", te, err)
	}
}

func TestTurnEndSignalAddsPlugin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hooks")
	hook := harness.TurnEndHook{Command: []string{"/opt/leo/leo", "hook", "turn-end", "--harness", "opencode"}, Dir: dir}
	spec := harness.LaunchSpec{Workspace: t.TempDir(), Options: harness.Options{optPermission: map[string]any{"bash": "allow"}}}
	cmd, err := Opencode{}.Interactive(spec)
	if err != nil {
		t.Fatal(err)
	}
	before := cmd.Env[ConfigContentEnv]
	out, err := Opencode{}.TurnEndSignal(context.Background(), spec, cmd, hook)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Env[ConfigContentEnv] != before {
		t.Fatal("the caller's env was modified")
	}
	var overlay map[string]any
	if err := json.Unmarshal([]byte(out.Env[ConfigContentEnv]), &overlay); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, PluginFile)
	want := []any{[]any{"file://" + path, map[string]any{"command": []any{"/opt/leo/leo", "hook", "turn-end", "--harness", "opencode"}}}}
	if !reflect.DeepEqual(overlay["plugin"], want) || overlay["permission"] == nil {
		t.Fatalf("overlay %v", overlay)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != string(turnEndPlugin) {
		t.Fatalf("plugin file: %v", err)
	}
	// Again: the file is not rewritten.
	st, _ := os.Stat(path)
	if _, err := (Opencode{}).TurnEndSignal(context.Background(), spec, cmd, hook); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); !os.SameFile(st, st2) || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatal("the plugin file was rewritten")
	}
	// A launch without an overlay gets one holding just the plugin.
	out, err = Opencode{}.TurnEndSignal(context.Background(), harness.LaunchSpec{Workspace: spec.Workspace}, harness.Command{Argv: []string{"opencode"}}, hook)
	if err != nil || !strings.Contains(out.Env[ConfigContentEnv], PluginFile) {
		t.Fatalf("%v %v", out.Env, err)
	}
	if _, err := (Opencode{}).TurnEndSignal(context.Background(), spec, cmd, harness.TurnEndHook{Command: hook.Command, Dir: "relative"}); err == nil {
		t.Fatal("a relative hook dir was taken")
	}
}
