package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The question scenario (claude only, -scenario question): a turn the
// model server answers with a call of claude's AskUserQuestion tool, one
// question with two options. Its screens go to testdata/screens/claude/:
//
//	question            the question as claude draws it
//	question-own-row    its own-answer row's number pressed
//	question-typing     a text typed in it
//	ready-after-question the turn after the answer went back to the model
//
// and the hook payloads claude fired until 7 s into the question to
// internal/harness/claude/testdata/hooks/question_v<version>.jsonl.
//
// It then answers the next question by its first option. What reached
// the model server as the tool's result is logged: it proves which keys
// gave which answer.
const questionScenario = "question"

// questionCall is the AskUserQuestion call, by the marker of the message
// that asks for it.
var questionCall = map[string]modelserver.ToolCall{
	"LEO-q-001": {Name: "AskUserQuestion", Input: `{"questions":[{"question":"Which colour should the button be?","header":"Colour","multiSelect":false,"options":[{"label":"Red","description":"a warm red"},{"label":"Blue","description":"a calm blue"}]}]}`},
	"LEO-q-002": {Name: "AskUserQuestion", Input: `{"questions":[{"question":"Which size should the font be?","header":"Size","multiSelect":false,"options":[{"label":"Small","description":"12 px"},{"label":"Large","description":"18 px"}]}]}`},
}

func runQuestion(bin, size, out string) error {
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if q.Side {
			return modelserver.DefaultResponder(q)
		}
		last := ""
		if len(q.Markers) > 0 {
			last = q.Markers[len(q.Markers)-1]
		}
		if tool, ok := questionCall[last]; ok && len(q.ToolResults) == 0 {
			return modelserver.Reply{ToolCall: &tool}
		}
		if len(q.ToolResults) > 0 {
			return modelserver.Reply{Text: "ANSWERED " + last + ": " + q.ToolResults[len(q.ToolResults)-1].Text}
		}
		return modelserver.DefaultResponder(q)
	})
	c, err := realcli.NewCapture("claude", bin, ms.URL, "capq")
	if err != nil {
		return err
	}
	defer c.Close()
	hooksFile := filepath.Join(c.Home, "hooks.jsonl")
	if err := writeCaptureHooks(c.Workspace, hooksFile); err != nil {
		return err
	}
	sc, err := newScene(c, "claude", bin, size, out, claude.Claude{}.Screen(),
		"env", "CLAUDE_CODE_MAX_RETRIES=0", filepath.Join(bin, "claude"), "--permission-mode", "default")
	if err != nil {
		return err
	}
	if _, err := sc.stable("ready", 3*time.Minute, sc.idle); err != nil {
		return err
	}
	_ = os.Truncate(hooksFile, 0) // SessionStart

	if err := sc.send("ask me about the colour LEO-q-001"); err != nil {
		return err
	}
	s, err := sc.stable("question", 2*time.Minute, func(s string) bool { return strings.Contains(s, "Which colour should the button be?") })
	if err != nil {
		return err
	}
	if err := sc.save(questionScenario, s); err != nil {
		return err
	}
	// What claude's hooks said while the question was up (after the
	// 6 s in which claude notifies about a prompt nobody answered).
	time.Sleep(7 * time.Second)
	data, err := os.ReadFile(hooksFile)
	if err != nil {
		return err
	}
	hp := filepath.Join("internal", "harness", "claude", "testdata", "hooks", fmt.Sprintf("question_v%s.jsonl", sc.version))
	log.Printf("%s: %s", hp, eventNames(data))
	if err := os.WriteFile(hp, data, 0o644); err != nil {
		return err
	}
	// The own-answer row follows the options: its number goes to it.
	if err := sc.keys("3"); err != nil {
		return err
	}
	if s, err = sc.stable("own-answer row", 20*time.Second, func(string) bool { return true }); err != nil {
		return err
	}
	if err := sc.save("question-own-row", s); err != nil {
		return err
	}
	if err := sc.keys("-l", "green please"); err != nil {
		return err
	}
	if s, err = sc.stable("typed", 20*time.Second, func(s string) bool { return strings.Contains(s, "green please") }); err != nil {
		return err
	}
	if err := sc.save("question-typing", s); err != nil {
		return err
	}
	if err := sc.keys("Enter"); err != nil {
		return err
	}
	if s, err = sc.stable("after the answer", 2*time.Minute, func(s string) bool { return strings.Contains(s, "ANSWERED LEO-q-001") && sc.idle(s) }); err != nil {
		return err
	}
	if err := sc.save("ready-after-question", s); err != nil {
		return err
	}

	if err := sc.send("ask me about the size LEO-q-002"); err != nil {
		return err
	}
	if _, err := sc.stable("second question", 2*time.Minute, func(s string) bool { return strings.Contains(s, "Which size should the font be?") }); err != nil {
		return err
	}
	if err := sc.keys("1"); err != nil {
		return err
	}
	if s, err = sc.stable("after the first option", 2*time.Minute, func(s string) bool { return strings.Contains(s, "ANSWERED LEO-q-002") && sc.idle(s) }); err != nil {
		return err
	}
	if err := sc.save("ready-after-question-option", s); err != nil {
		return err
	}
	for _, q := range ms.Requests() {
		for _, tr := range q.ToolResults {
			log.Printf("tool result %s: %q", tr.ID, tr.Text)
		}
	}
	return nil
}
