package main

import (
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The approval scenario (codex only, -scenario approval): codex started
// with the approval policy "on-request" (0.171.0 takes on-request or
// never; leo's own launch says never), a turn the model server answers
// with an exec_command call of `touch approved-x` that asks to run outside
// the sandbox (sandbox_permissions require_escalated, with a
// justification: the user-facing question), which codex asks a person
// about. Its screens go to testdata/screens/codex/:
//
//	approval-exec     the prompt, as drawn
//	approval-answered after "y" (yes, this once): the command ran, the turn ended
//	approval-exec-long a second prompt, a command that wraps on a narrow pane
//	approval-denied   that prompt answered Escape
const approvalScenario = "approval"

// approvalTools are the calls codex asks approval for, by the marker of
// the message that asks for them.
var approvalTools = map[string]modelserver.ToolCall{
	"LEO-appr-001": {Name: "exec_command", Input: `{"cmd":"touch approved-x","sandbox_permissions":"require_escalated","justification":"Do you want to create the file approved-x?"}`},
	"LEO-appr-002": {Name: "exec_command", Input: `{"cmd":"touch denied-y && printf '%s\\n' 'a fairly long argument that makes the command wrap on a narrow pane, and then some more words' > /dev/null","sandbox_permissions":"require_escalated","justification":"Do you want to create the file denied-y?"}`},
}

func runApproval(bin, size, out string) error {
	r := codex.Codex{}.Screen()
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		last := ""
		if len(q.Markers) > 0 {
			last = q.Markers[len(q.Markers)-1]
		}
		if tool, ok := approvalTools[last]; ok && !q.Side && len(q.ToolResults) == 0 {
			return modelserver.Reply{ToolCall: &tool}
		}
		return modelserver.DefaultResponder(q)
	})
	c, err := realcli.NewCapture("codex", bin, ms.URL, "capappr")
	if err != nil {
		return err
	}
	defer c.Close()
	sc, err := newScene(c, "codex", bin, size, out, r, filepath.Join(bin, "codex"), "-a", "on-request", "--sandbox", "workspace-write")
	if err != nil {
		return err
	}
	sc.enterDelay = codex.Codex{}.EnterDelay()
	stable, idle, save, keys, send := sc.stable, sc.idle, sc.save, sc.keys, sc.send
	if _, err := stable("ready", 3*time.Minute, idle); err != nil {
		return err
	}
	asked := func(cmd string) func(string) bool {
		return func(s string) bool { return strings.Contains(s, cmd) && !strings.Contains(s, "esc to interrupt") }
	}
	if err := send("make a file LEO-appr-001"); err != nil {
		return err
	}
	s, err := stable("the approval prompt", 2*time.Minute, asked("touch approved-x"))
	if err := save("approval-exec", s); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if err := keys("y"); err != nil {
		return err
	}
	s, err = stable("answered", 2*time.Minute, func(s string) bool { return idle(s) && strings.Contains(s, "ACK LEO-appr-001") })
	if err := save("approval-answered", s); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(c.Workspace, "approved-x")); err != nil {
		log.Printf("the approved command left no file: %v", err)
	}
	time.Sleep(2 * time.Second)
	if err := send("make another LEO-appr-002"); err != nil {
		return err
	}
	s, err = stable("the second prompt", 2*time.Minute, asked("touch denied-y"))
	if err := save("approval-exec-long", s); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if err := keys("Escape"); err != nil {
		return err
	}
	s, err = stable("denied", 2*time.Minute, func(s string) bool { return r.Classify(s).State == harness.ScreenReady })
	if err := save("approval-denied", s); err != nil {
		return err
	}
	log.Printf("requests: %s", modelserver.Summary(ms.Requests()))
	return err
}
