package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// The fake opencode's permission prompt, imitating the real 1.18.33's
// (testdata/screens/opencode/dialog-permission*, the plugin events of
// internal/harness/opencode/testdata/signals/{once,reject,always}-*; kept
// in step by TestOpencodeFakePermissionMatchesReal).
//
// A message holding "fake-ask" (as for the fake claude: the command after
// "fake-ask:" up to the end of its line, else `touch x`) makes its turn
// call bash. When the launch's OPENCODE_CONFIG_CONTENT says permission
// {bash: ask} (or "ask" for every tool, or a {pattern: verdict} map whose
// last matching pattern says ask), the fake asks first, in the box's place:
//
//	┃
//	┃  △ Permission required
//	┃    # Shell command
//	┃
//	┃  $ touch x
//	┃
//	┃
//	┃   Allow once   Allow always   Reject        ctrl+f fullscreen  ⇆ select  enter confirm
//	┃
//
// sending permission.asked. Left and Right move between the choices, Enter
// takes one: Allow once runs the command (permission.replied "once"; the
// turn goes on to its reply); Allow always asks again — "△ Always allow",
// the pattern, Confirm / Cancel — and Confirm runs it and does not ask
// about that pattern again ("always"), Cancel or Escape go back; Reject or
// Escape drop the call and end the turn with no reply ("reject"). Other
// keys do nothing while the prompt shows. "deny" runs nothing and asks
// nothing; "allow" (opencode's default) runs it at once.

// ocPermission is a prompt on screen.
type ocPermission struct {
	id, cmd string
	// sel is the choice under the cursor; always is the second stage.
	sel    int
	always bool
}

var (
	ocChoices       = []string{"Allow once", "Allow always", "Reject"}
	ocAlwaysChoices = []string{"Confirm", "Cancel"}
)

// pattern is what "Allow always" allows: the command's first word and a
// wildcard, as opencode's always list says ("touch *").
func (p *ocPermission) pattern() string {
	f := strings.Fields(p.cmd)
	if len(f) == 0 {
		return "*"
	}
	return f[0] + " *"
}

// opencodeVerdict is what the launch's permission config says of running
// cmd with bash: "allow" unless it says ask or deny.
func opencodeVerdict(cmd string) string {
	var overlay struct {
		Permission json.RawMessage `json:"permission"`
	}
	if json.Unmarshal([]byte(os.Getenv("OPENCODE_CONFIG_CONTENT")), &overlay) != nil {
		return "allow"
	}
	var all string
	if json.Unmarshal(overlay.Permission, &all) == nil {
		return all
	}
	var tools map[string]json.RawMessage
	if json.Unmarshal(overlay.Permission, &tools) != nil {
		return "allow"
	}
	var bash string
	if json.Unmarshal(tools["bash"], &bash) == nil {
		return bash
	}
	var rules []struct{ pattern, verdict string }
	if dec := json.NewDecoder(strings.NewReader(string(tools["bash"]))); dec != nil {
		// In order: the last matching pattern wins, as in opencode.
		if t, err := dec.Token(); err == nil && t == json.Delim('{') {
			for dec.More() {
				k, err1 := dec.Token()
				var v string
				if err1 != nil || dec.Decode(&v) != nil {
					break
				}
				rules = append(rules, struct{ pattern, verdict string }{fmt.Sprint(k), v})
			}
		}
	}
	verdict := "allow"
	for _, r := range rules {
		if wildcard(r.pattern, cmd) {
			verdict = r.verdict
		}
	}
	return verdict
}

// wildcard matches s against a pattern where * is any run of characters.
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// opencodeCallTool is the bash call of the turn in progress: drawn in the
// transcript, asked about first when the config says so.
func (t *tui) opencodeCallTool(cmd string) {
	st, _ := t.store.(*opencodeStore)
	if st == nil {
		return
	}
	t.history = append(t.history, "     $ "+cmd, "")
	p := &ocPermission{id: fmt.Sprintf("per_fake%013d", time.Now().UnixNano()%1e13), cmd: cmd}
	switch v := opencodeVerdict(cmd); {
	case v == "deny":
		t.opencodeRunTool() // the model is told no and answers
		return
	case v != "ask" || t.allowed[p.pattern()]:
		t.opencodeRunTool()
		return
	}
	t.ocPerm = p
	logEvent(map[string]any{"event": "permission_asked", "command": cmd})
	opencodeSignal("permission.asked", map[string]any{
		"id": p.id, "sessionID": st.id, "permission": "bash", "patterns": []string{cmd},
		"always": []string{p.pattern()}, "metadata": map[string]any{"command": cmd},
	}, nil)
}

// opencodePermissionKey takes a key while the prompt shows.
func (t *tui) opencodePermissionKey(ev event) {
	p := t.ocPerm
	n := len(ocChoices)
	if p.always {
		n = len(ocAlwaysChoices)
	}
	switch ev.kind {
	case evLeft:
		p.sel = (p.sel + n - 1) % n
	case evRight:
		p.sel = (p.sel + 1) % n
	case evEscape:
		if p.always {
			p.always, p.sel = false, 1
			return
		}
		t.opencodeReply("reject")
	case evEnter:
		switch {
		case p.always && p.sel == 0:
			t.allowed[p.pattern()] = true
			t.opencodeReply("always")
		case p.always:
			p.always, p.sel = false, 1
		case p.sel == 0:
			t.opencodeReply("once")
		case p.sel == 1:
			p.always, p.sel = true, 0
		default:
			t.opencodeReply("reject")
		}
	}
}

// opencodeReply answers the prompt: the call runs, or (reject) the turn
// ends with no reply.
func (t *tui) opencodeReply(reply string) {
	p := t.ocPerm
	t.ocPerm = nil
	st := t.store.(*opencodeStore)
	logEvent(map[string]any{"event": "permission_answered", "choice": reply})
	opencodeSignal("permission.replied", map[string]any{"sessionID": st.id, "requestID": p.id, "reply": reply}, nil)
	if reply != "reject" {
		t.opencodeRunTool()
		return
	}
	t.busy = false
	t.history = append(t.history, "     ▣  Build · "+t.model, "")
	st.reply("")
	t.nextQueued()
}

// opencodeRunTool runs the call (the fake only says so) and lets the turn
// go on to its reply.
func (t *tui) opencodeRunTool() {
	t.turnTimer = time.AfterFunc(turnDuration(), func() {
		select {
		case t.turnDoneCh <- struct{}{}:
		default:
		}
	})
}

// opencodePermissionRows draws the prompt, width columns wide, in the
// box's place.
func (t *tui) opencodePermissionRows(width int) []string {
	p := t.ocPerm
	mark := func(cs []string) string {
		var b strings.Builder
		for _, c := range cs {
			b.WriteString("   " + c)
		}
		return b.String()
	}
	if p.always {
		return []string{"┃", "┃  △ Always allow", "┃",
			"┃  This will allow the following patterns until OpenCode is restarted", "┃", "┃  - " + p.pattern(), "┃", "┃",
			rightAlign("┃"+mark(ocAlwaysChoices), "⇆ select  enter confirm", width-3), "┃"}
	}
	rows := []string{"┃", "┃  △ Permission required", "┃    # Shell command", "┃"}
	for i, l := range strings.Split(p.cmd, "\n") {
		if i == 0 {
			l = "$ " + l
		}
		rows = append(rows, "┃  "+l)
	}
	return append(rows, "┃", "┃",
		rightAlign("┃"+mark(ocChoices), "ctrl+f fullscreen  ⇆ select  enter confirm", width-3), "┃")
}
