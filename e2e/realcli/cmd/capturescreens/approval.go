package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
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
	v, err := realcli.InstalledVersion(filepath.Join(bin, "codex"))
	if err != nil {
		return err
	}
	version := regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(v)
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
	w, hh, _ := strings.Cut(size, "x")
	if err := c.Start(w, hh, filepath.Join(bin, "codex"), "-a", "on-request", "--sandbox", "workspace-write"); err != nil {
		return err
	}
	stable := func(what string, d time.Duration, cond func(string) bool) (string, error) {
		deadline := time.Now().Add(d)
		last, since := "", time.Now()
		for {
			s := c.Screen()
			if s != last {
				last, since = s, time.Now()
			}
			if cond(s) && time.Since(since) >= time.Second {
				return s, nil
			}
			if time.Now().After(deadline) {
				return s, fmt.Errorf("%s: not seen within %s:\n%s", what, d, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	idle := func(s string) bool { x := r.Classify(s); return x.State == harness.ScreenReady && x.Input == "" }
	if _, err := stable("ready", 3*time.Minute, idle); err != nil {
		return err
	}
	save := func(name, s string) error {
		p := filepath.Join(out, "codex", fmt.Sprintf("%s_%s_v%s.txt", name, size, version))
		log.Printf("%s: %+v", p, r.Classify(s))
		return os.WriteFile(p, []byte(s), 0o644)
	}
	send := func(text string) error {
		if o, err := c.Tmux(text, "load-buffer", "-b", "m", "-"); err != nil {
			return fmt.Errorf("load-buffer: %v %s", err, o)
		}
		if o, err := c.Tmux("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
			return fmt.Errorf("paste-buffer: %v %s", err, o)
		}
		if _, err := stable("pasted", 20*time.Second, func(s string) bool { return strings.Contains(s, text) }); err != nil {
			return err
		}
		time.Sleep(codex.Codex{}.EnterDelay())
		if o, err := c.Tmux("", "send-keys", "-t", "a", "Enter"); err != nil {
			return fmt.Errorf("send-keys: %v %s", err, o)
		}
		return nil
	}
	keys := func(k ...string) error {
		if o, err := c.Tmux("", append([]string{"send-keys", "-t", "a"}, k...)...); err != nil {
			return fmt.Errorf("send-keys: %v %s", err, o)
		}
		return nil
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
