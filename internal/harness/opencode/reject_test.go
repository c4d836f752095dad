package opencode

import (
	"context"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// A step whose tool call a person rejected (or whose question they
// dismissed) ends its turn, though its finish says another step follows:
// opencode 1.18.33 stops there (its processor's blocked). A tool call that
// failed otherwise, or rejected with feedback, goes on to another step.
func TestTurnActivityARejectedToolCallEndsTheTurn(t *testing.T) {
	step := func(id, parent string, at int64, state string) builtMessage {
		return builtMessage{id: id, at: at,
			data:  `{"parentID":"` + parent + `","role":"assistant","time":{"created":1,"completed":2},"finish":"tool-calls"}`,
			parts: []string{`{"type":"step-start"}`, `{"type":"tool","tool":"bash","state":` + state + `}`}}
	}
	user := func(id string, at int64) builtMessage {
		return builtMessage{id: id, at: at, data: `{"role":"user","time":{"created":1}}`, parts: []string{`{"type":"text","text":"go"}`}}
	}
	for _, c := range []struct {
		name    string
		state   string
		running bool
	}{
		{"rejected", `{"status":"error","input":{"command":"touch x"},"error":"The user rejected permission to use this specific tool call.","time":{"start":1,"end":2}}`, false},
		{"dismissed", `{"status":"error","input":{},"error":"The user dismissed this question","time":{"start":1,"end":2}}`, false},
		{"feedback", `{"status":"error","input":{},"error":"The user rejected permission to use this specific tool call with the following feedback: use y","time":{"start":1,"end":2}}`, true},
		{"failed", `{"status":"error","input":{},"error":"Error: exit 1","time":{"start":1,"end":2}}`, true},
		{"done", `{"status":"completed","input":{},"output":"ok","time":{"start":1,"end":2}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := t.TempDir() + "/opencode.db"
			buildStore(t, path, "ses_r", "/ws", []builtMessage{user("msg_1", 1000), step("msg_1a", "msg_1", 1001, c.state)})
			resetStores()
			act, err := Opencode{}.TurnActivity(context.Background(), harness.SessionQuery{Env: map[string]string{DBEnv: path}}, "ses_r")
			if err != nil {
				t.Fatal(err)
			}
			if !act.Found || act.Running != c.running || (!c.running && (act.Ended != 1 || act.Failed != "")) {
				t.Fatalf("%+v, want running %v", act, c.running)
			}
		})
	}
}
