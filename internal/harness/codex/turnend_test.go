package codex

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// testdata/turnend holds what codex 0.171.0's TUI gave its notify program
// after one turn: the turn's own payload and the title-generation side
// thread's, whose one input quotes the message, marker and all.

func readPayload(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "turnend", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseTurnEndRealNotify(t *testing.T) {
	te, err := Codex{}.ParseTurnEnd(readPayload(t, "codex-notify.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := harness.TurnEnd{
		SessionID: "01a22cf9-ed1f-77e1-bf9a-bb24a3efbfce",
		Inputs:    []string{"Do the thing LEO-cap-002 please\n\n[leo task t2 run 20260101T000000.000Z]"},
		Reply:     "ACK LEO-cap-002",
	}
	if !reflect.DeepEqual(te, want) {
		t.Fatalf("got %+v\nwant %+v", te, want)
	}
	side, err := Codex{}.ParseTurnEnd(readPayload(t, "codex-notify-title.json"))
	if err != nil {
		t.Fatal(err)
	}
	if side.SessionID == te.SessionID || len(side.Inputs) != 1 || side.Inputs[0] == te.Inputs[0] ||
		!strings.HasSuffix(side.Inputs[0], te.Inputs[0]) {
		t.Fatalf("the side thread's payload reads as %+v", side)
	}
}

func TestParseTurnEndRejectsOthers(t *testing.T) {
	for _, p := range []string{"", "{", `{"type":"approval-requested"}`, `[]`, "\x00\x1b[2J"} {
		if _, err := (Codex{}).ParseTurnEnd([]byte(p)); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	te, err := Codex{}.ParseTurnEnd([]byte(`{"type":"agent-turn-complete","last-assistant-message":null,"extra":{"x":1}}`))
	if err != nil || te.Reply != "" || te.Failed {
		t.Fatalf("%+v %v", te, err)
	}
}

func TestTurnEndSignalAddsNotify(t *testing.T) {
	ws := t.TempDir()
	hook := harness.TurnEndHook{Command: []string{"/opt/leo \"x\"/leo", "hook", "turn-end", "--harness", "codex"}}
	const notify = `notify=["/opt/leo \"x\"/leo", "hook", "turn-end", "--harness", "codex"]`
	for _, resume := range []bool{false, true} {
		spec := harness.LaunchSpec{Workspace: ws}
		if resume {
			spec.SessionID, spec.Resume = "01a22cf9-ed1f-77e1-bf9a-bb24a3efbfce", true
		}
		cmd, err := Codex{}.Interactive(spec)
		if err != nil {
			t.Fatal(err)
		}
		orig := append([]string(nil), cmd.Argv...)
		out, err := Codex{}.TurnEndSignal(context.Background(), spec, cmd, hook)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cmd.Argv, orig) {
			t.Fatal("the caller's argv was modified")
		}
		i := slicesIndex(out.Argv, notify)
		if i < 1 || out.Argv[i-1] != "-c" || len(out.Argv) != len(orig)+2 {
			t.Fatalf("resume=%v: argv %q", resume, out.Argv)
		}
		if resume && !reflect.DeepEqual(out.Argv[len(out.Argv)-2:], []string{"resume", spec.SessionID}) {
			t.Fatalf("resume must stay last: %q", out.Argv)
		}
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// The turn's own payload is its end, with the reply; the title side
// thread's, which quotes the message and often ends first, is nothing
// (docs/harness-behaviour/codex.md, "Turn end: notify").
func TestParseSignalRealNotify(t *testing.T) {
	sig, err := Codex{}.ParseSignal(readPayload(t, "codex-notify.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := harness.Signal{Kind: harness.SignalTurnEnded, SessionID: "01a22cf9-ed1f-77e1-bf9a-bb24a3efbfce", Text: "ACK LEO-cap-002"}
	if !reflect.DeepEqual(sig, want) || !sig.EndsTurn() {
		t.Fatalf("got %+v\nwant %+v", sig, want)
	}
	side, err := Codex{}.ParseSignal(readPayload(t, "codex-notify-title.json"))
	if err != nil || side.Kind != harness.SignalNone || side.EndsTurn() {
		t.Fatalf("title side thread: %+v, %v; want SignalNone", side, err)
	}
	// harness.ReadSignal takes the SignalReader.
	if got, _ := harness.ReadSignal(Codex{}, readPayload(t, "codex-notify-title.json")); got.Kind != harness.SignalNone {
		t.Fatalf("ReadSignal of the title turn: %+v", got)
	}
}

func TestParseSignalOthers(t *testing.T) {
	for _, p := range []string{"", "{", `{"type":"approval-requested"}`, `[]`, "\x00\x1b[2J"} {
		if _, err := (Codex{}).ParseSignal([]byte(p)); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	// A reply of nothing, hostile text, and a message that only mentions
	// the title prompt (two inputs; or the prompt's words without codex's
	// "User prompt:" part) are turn ends.
	for _, p := range []string{
		`{"type":"agent-turn-complete","last-assistant-message":null}`,
		`{"type":"agent-turn-complete","input-messages":["a\u0000\u001b[2J"],"last-assistant-message":"\u001b]0;x\u0007"}`,
		`{"type":"agent-turn-complete","input-messages":["Generate a concise, single-line task title of at most 5 characters","more"],"last-assistant-message":"ok"}`,
		`{"type":"agent-turn-complete","input-messages":["Generate a concise, single-line task title of at most 5 characters please"],"last-assistant-message":"ok"}`,
	} {
		sig, err := Codex{}.ParseSignal([]byte(p))
		if err != nil || sig.Kind != harness.SignalTurnEnded {
			t.Errorf("%s: %+v, %v; want a turn end", p, sig, err)
		}
	}
}
