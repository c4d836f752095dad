package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// permissionShape is what must be the same on the fake's permission prompt
// and the real capture at the same size: the reader's prompt (the
// workspace's name and the model's description of the command aside) and
// where the prompt sits.
type permissionShape struct {
	State    leoharness.ScreenState
	Dialog   string
	Kind     string
	Asks     string // the text's first line: the tool and the command
	Question string // its last line
	Choices  string // the choices, the workspace's name as <ws>
	Rows     string // the rows of the rule, the title, the question and the choices
}

func permissionShapeOf(capture, ws string) permissionShape {
	s := claude.Claude{}.Screen().Classify(capture)
	sh := permissionShape{State: s.State, Dialog: s.Dialog}
	if p := s.Prompt; p != nil {
		lines := strings.Split(p.Text, "\n")
		sh.Kind, sh.Asks, sh.Question = p.Kind, lines[0], lines[len(lines)-1]
		sh.Choices = strings.ReplaceAll(strings.Join(p.Choices, " | "), " "+ws+"/ ", " <ws>/ ")
	}
	var rows []string
	for i, l := range strings.Split(capture, "\n") {
		t := strings.TrimRight(l, " ")
		switch {
		case strings.HasPrefix(t, "─────"), t == " Bash command", t == " Do you want to proceed?",
			strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(strings.TrimSpace(t), "❯"), " "), "1. "),
			strings.HasPrefix(strings.TrimSpace(t), "3. "):
			rows = append(rows, fmt.Sprint(i, ":", strings.Index(t, strings.TrimLeft(t, " "))))
		}
	}
	sh.Rows = strings.Join(rows, " ")
	return sh
}

// TestFakeClaudePermissionMatchesReal: the fake's permission prompt has
// the shape of the real 2.1.197's at every size it was captured at.
func TestFakeClaudePermissionMatchesReal(t *testing.T) {
	const version = "v2.1.197"
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}, {100, 120}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join(claudeFixtures, fmt.Sprintf("permission-bash_%dx%d_%s.txt", size[0], size[1], version)))
			if err != nil {
				t.Fatal(err)
			}
			want := permissionShapeOf(string(b), "ws")
			if want.Kind != "permission" {
				t.Fatalf("the capture reads as %+v", want)
			}
			h := start(t, launch{role: "claude", width: size[0], height: size[1]})
			h.waitFor("? for shortcuts")
			h.submit("please create the file x fake-ask", "fake-ask")
			var got permissionShape
			var scr string
			for deadline := time.Now().Add(10 * time.Second); ; {
				scr = h.screen()
				if got = permissionShapeOf(scr, filepath.Base(h.dir)); got == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the fake's prompt lacks the real shape\n got %+v\nwant %+v\nscreen:\n%s", got, want, scr)
				}
				time.Sleep(20 * time.Millisecond) // polling a tmux pane, bounded by the deadline
			}
		})
	}
}

// readPayloads reads the payloads the capture hook appended to file.
func readPayloads(t *testing.T, file string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func eventsOf(ps []map[string]any) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprint(p["hook_event_name"]))
	}
	return out
}

func keysOf(p map[string]any) []string {
	var out []string
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// captureHooks registers, in dir's settings, a hook on each of events that
// appends its payload to the returned file.
func captureHooks(t *testing.T, dir string, events []string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hooks.jsonl")
	cmd := fmt.Sprintf("cat >> %s; echo >> %s", leoharness.ShellJoin([]string{file}), leoharness.ShellJoin([]string{file}))
	hooks := map[string]any{}
	for _, e := range events {
		hooks[e] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	p := claude.SettingsLocalPath(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestFakeClaudeHooksMatchReal: over a turn that asks permission, the fake
// fires the hooks the real 2.1.197 fired, in its order, each payload with
// the real one's fields (testdata/hooks/permission-*); answered "1" the
// turn goes on to its Stop, answered Escape nothing more fires.
func TestFakeClaudeHooksMatchReal(t *testing.T) {
	real := func(name string) []map[string]any {
		return readPayloads(t, filepath.Join("..", "..", "harness", "claude", "testdata", "hooks", name+"_v2.1.197.jsonl"))
	}
	approved, denied := real("permission-approved"), real("permission-denied")
	if len(approved) == 0 || len(denied) == 0 {
		t.Fatal("no real captures")
	}
	events := []string{"UserPromptSubmit", "PreToolUse", "PermissionRequest", "Notification", "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure"}
	dir := t.TempDir()
	file := captureHooks(t, dir, events)
	h := start(t, launch{role: "claude", dir: dir, env: map[string]string{"FAKE_PERMISSION_NOTIFY_MS": "300"}})
	h.waitFor("? for shortcuts")
	waitEvents := func(what string, n int) []map[string]any {
		t.Helper()
		var got []map[string]any
		testutil.WaitFor(t, 10*time.Second, func() bool {
			got = readPayloads(t, file)
			return len(got) >= n
		}, what)
		return got
	}
	compare := func(got, want []map[string]any) {
		t.Helper()
		if !slices.Equal(eventsOf(got), eventsOf(want)) {
			t.Fatalf("the fake fired %v, the real claude %v", eventsOf(got), eventsOf(want))
		}
		for i := range got {
			if g, w := keysOf(got[i]), keysOf(want[i]); !slices.Equal(g, w) {
				t.Errorf("%s: the fake's payload has %v, the real one %v", want[i]["hook_event_name"], g, w)
			}
		}
	}

	h.submit("please create the file x fake-ask", "fake-ask")
	h.waitFor(" Do you want to proceed?")
	waitEvents("the notification about the prompt", 4)
	if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "1"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("● echo: please create the file x fake-ask")
	got := waitEvents("the turn's Stop", len(approved))
	compare(got, approved)
	if got[0]["prompt"] != "please create the file x fake-ask" || got[len(got)-1]["last_assistant_message"] != "echo: please create the file x fake-ask" {
		t.Fatalf("payloads %v", got)
	}

	h.submit("please create the file y fake-ask:touch y", "fake-ask:touch y")
	h.waitFor("   touch y")
	waitEvents("the second prompt's notification", len(approved)+4)
	if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "Escape"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("Interrupted · What should Claude do instead?")
	h.waitFor("? for shortcuts")
	// A third turn, to see that nothing fired between the denial and it.
	h.submit("after the denial", "after the denial")
	h.waitFor("● echo: after the denial")
	all := waitEvents("the third turn's Stop", len(approved)+len(denied)+2)
	compare(all[len(approved):len(approved)+len(denied)], denied)
	if rest := eventsOf(all[len(approved)+len(denied):]); !slices.Equal(rest, []string{"UserPromptSubmit", "Stop"}) {
		t.Fatalf("after the denial the fake fired %v", rest)
	}
}

// TestFakeClaudePermissionKeys: 2 runs the command and does not ask about
// it again; Down, Down, Enter is No; a paste while the prompt shows goes
// nowhere; in another permission mode nothing is asked.
func TestFakeClaudePermissionKeys(t *testing.T) {
	h := start(t, launch{role: "claude"})
	h.waitFor("? for shortcuts")
	h.submit("first fake-ask", "first fake-ask")
	h.waitFor(" Do you want to proceed?")
	h.send("pasted meanwhile")
	if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "2"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("● echo: first fake-ask")
	h.submit("second fake-ask", "second fake-ask")
	h.waitFor("● echo: second fake-ask") // not asked again
	if strings.Contains(h.screen(), "pasted meanwhile") {
		t.Fatal("a paste during the prompt reached the input")
	}
	h.submit("third fake-ask:rm -rf y", "third fake-ask")
	h.waitFor("   rm -rf y")
	for _, k := range []string{"Down", "Down", "Enter"} {
		if err := h.s.SendKeys(ctx(t), h.pane.PaneID, k); err != nil {
			t.Fatal(err)
		}
	}
	h.waitFor("Interrupted · What should Claude do instead?")
	var answers []string
	for _, m := range h.logLines() {
		if m["event"] == "permission_answered" {
			answers = append(answers, fmt.Sprint(m["choice"]))
		}
	}
	if len(answers) != 2 || !strings.HasPrefix(answers[0], "Yes, and always allow") || answers[1] != "No" {
		t.Fatalf("answers %q", answers)
	}

	b := start(t, launch{role: "claude", args: []string{"--permission-mode", "bypassPermissions"}})
	b.waitFor("? for shortcuts")
	b.submit("bypassed fake-ask", "bypassed fake-ask")
	b.waitFor("● echo: bypassed fake-ask")
	for _, m := range b.logLines() {
		if m["event"] == "permission_asked" {
			t.Fatal("asked in bypassPermissions")
		}
	}
}
