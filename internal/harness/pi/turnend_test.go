package pi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func TestTurnEndSignalLoadsTheExtension(t *testing.T) {
	dir := t.TempDir()
	spec := harness.LaunchSpec{Workspace: t.TempDir(), Env: map[string]string{"HOME": t.TempDir()}}
	cmd, err := Pi{}.Interactive(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The hook program is a name under the test's own dir: never run here,
	// and never a system directory's.
	hook := harness.TurnEndHook{Command: []string{filepath.Join(dir, "bin", "leo"), "hook", "turn-end", "--harness", "pi"}, Dir: dir}
	out, err := Pi{}.TurnEndSignal(context.Background(), spec, cmd, hook)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ExtensionFile)
	if i := slices.Index(out.Argv, "-e"); i != 1 || out.Argv[2] != path {
		t.Errorf("argv %q does not load %s", out.Argv, path)
	}
	var got []string
	if err := json.Unmarshal([]byte(out.Env[HookEnv]), &got); err != nil || !slices.Equal(got, hook.Command) {
		t.Errorf("%s = %q", HookEnv, out.Env[HookEnv])
	}
	if data, _ := os.ReadFile(path); string(data) != string(turnEndExtension) {
		t.Error("the extension was not written")
	}
	if len(cmd.Argv) == len(out.Argv) {
		t.Error("TurnEndSignal changed the command it was given")
	}
}

const sessionFile = "/h/.pi/agent/sessions/--w--/2026-12-03T05-40-00-000Z_01a23a67-b29f-7704-a47b-0d9eb7f878dd.jsonl"

func payload(t *testing.T, p map[string]any) []byte {
	p["source"] = "leo-pi"
	p["session_file"] = sessionFile
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseTurnEndAndSignals(t *testing.T) {
	h := Pi{}
	te, err := h.ParseTurnEnd(payload(t, map[string]any{"event": "agent_end", "inputs": []string{"hello LEO-1"}, "reply": "ACK LEO-1", "stop_reason": "stop"}))
	if err != nil || te.SessionID != tuiID || !slices.Equal(te.Inputs, []string{"hello LEO-1"}) || te.Reply != "ACK LEO-1" || te.Failed {
		t.Fatalf("done: %+v, %v", te, err)
	}
	te, _ = h.ParseTurnEnd(payload(t, map[string]any{"event": "agent_end", "inputs": []string{"x"}, "stop_reason": "error", "error": "500 boom"}))
	if !te.Failed || te.Error != "500 boom" {
		t.Fatalf("failed: %+v", te)
	}
	// An error pi retries ends nothing: no inputs.
	te, _ = h.ParseTurnEnd(payload(t, map[string]any{"event": "agent_end", "stop_reason": "error", "error": "429", "retrying": true}))
	if len(te.Inputs) != 0 || te.Failed {
		t.Fatalf("retrying: %+v", te)
	}
	for _, c := range []struct {
		p    map[string]any
		kind harness.SignalKind
	}{
		{map[string]any{"event": "agent_start"}, harness.SignalTurnStarted},
		{map[string]any{"event": "agent_start", "retry": true}, harness.SignalWorking},
		{map[string]any{"event": "agent_end", "stop_reason": "error", "error": "429 rate limit", "retrying": true}, harness.SignalWorking},
		{map[string]any{"event": "agent_end", "inputs": []string{"x"}, "stop_reason": "error", "error": "429 rate limit"}, harness.SignalLimited},
		{map[string]any{"event": "agent_end", "inputs": []string{"x"}, "stop_reason": "error", "error": "bad request"}, harness.SignalTurnFailed},
		{map[string]any{"event": "agent_end", "inputs": []string{"x"}, "stop_reason": "aborted"}, harness.SignalTurnEnded},
	} {
		s, err := h.ParseSignal(payload(t, c.p))
		if err != nil || s.Kind != c.kind || s.SessionID != tuiID {
			t.Errorf("ParseSignal(%v) = %+v, %v; want kind %v", c.p, s, err, c.kind)
		}
	}
	for _, bad := range []string{`{}`, `not json`, `{"source":"leo-pi","event":"what"}`} {
		if _, err := h.ParseSignal([]byte(bad)); err == nil {
			t.Errorf("ParseSignal(%s) = nil error", bad)
		}
	}
}
