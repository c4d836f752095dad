package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// harness is one fake TUI running in a private tmux server.
type harness struct {
	t    *testing.T
	s    *tmux.Server
	pane tmux.Pane
	home map[string]string
	dir  string // workspace
	log  string // FAKE_HARNESS_LOG
	raw  string // FAKE_RAW_LOG: every byte the fake read
}

type launch struct {
	role string
	args []string
	env  map[string]string
	home map[string]string // reuse a home (resume across launches)
	dir  string
	s    *tmux.Server
	// width and height of the pane; 120x40 when zero.
	width, height int
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// trustCodex pre-trusts dir in home's codex config, as leo does.
func trustCodex(t *testing.T, home map[string]string, dir string) {
	t.Helper()
	cfg := filepath.Join(home["CODEX_HOME"], "config.toml")
	if err := os.WriteFile(cfg, []byte("[projects.\""+dir+"\"]\ntrust_level = \"trusted\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

var sessionSeq atomic.Int64

func start(t *testing.T, l launch) *harness {
	t.Helper()
	if l.s == nil {
		l.s = testutil.NewTmux(t)
	}
	if l.home == nil {
		l.home = testutil.FakeHome(t)
	}
	if l.dir == "" {
		l.dir = t.TempDir()
	}
	logDir := t.TempDir()
	h := &harness{t: t, s: l.s, home: l.home, dir: l.dir, log: filepath.Join(logDir, "harness.log"), raw: filepath.Join(logDir, "raw.log")}
	env := map[string]string{"FAKE_HARNESS_LOG": h.log, "FAKE_RAW_LOG": h.raw, "FAKE_TURN_MS": "20"}
	for k, v := range l.home {
		env[k] = v
	}
	for k, v := range l.env {
		env[k] = v
	}
	// The fake runs under a shell that prints its exit status after it and
	// stays: tmux 3.3a can mark a pane dead before it has read the last
	// output of a process that exits at once, and a test of what a fake
	// printed on its way out must not lose it. The marker comes after the
	// fake's own output on the same terminal, so once it shows, all of that
	// output shows too.
	argv := append([]string{"/bin/sh", "-c", `"$0" "$@"; printf '\r\n` + exitMarker + `%d\r\n' $?; exec cat >/dev/null`,
		filepath.Join(testutil.FakeHarnessDir(t), l.role)}, l.args...)
	if l.width == 0 {
		l.width, l.height = 120, 40
	}
	p, err := l.s.NewSession(ctx(t), tmux.SessionSpec{
		Name: fmt.Sprintf("leo-%s-%d", l.role, sessionSeq.Add(1)),
		Dir:  l.dir, Argv: argv, Env: env, Width: cmp.Or(l.width, 120), Height: cmp.Or(l.height, 40),
	})
	if err != nil {
		t.Fatal(err)
	}
	h.pane = p
	return h
}

func (h *harness) screen() string {
	out, err := h.s.Capture(ctx(h.t), h.pane.PaneID)
	if err != nil {
		h.t.Fatalf("capture: %v", err)
	}
	return out
}

func (h *harness) waitFor(want string) string {
	h.t.Helper()
	var scr string
	testutil.WaitFor(h.t, 10*time.Second, func() bool {
		scr = h.screen()
		return strings.Contains(scr, want)
	}, "screen to show "+strconvQuote(want))
	return scr
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// exitMarker starts the line the launch shell prints when the fake ends.
const exitMarker = "fake-harness-exited status="

// exit waits for the fake to end and returns its status and everything the
// pane showed before the marker.
func (h *harness) exit() (int, string) {
	h.t.Helper()
	var out string
	testutil.WaitFor(h.t, 10*time.Second, func() bool {
		var err error
		out, err = h.s.CaptureHistory(ctx(h.t), h.pane.PaneID, 200)
		if err != nil {
			h.t.Fatal(err)
		}
		return strings.Contains(out, exitMarker)
	}, "the fake to exit")
	// A fake that dies in raw mode leaves the terminal without its
	// newline translation, so the marker may share a line with its last
	// output: cut at the marker, not at a line start.
	before, after, _ := strings.Cut(out, exitMarker)
	digits := after[:len(after)-len(strings.TrimLeft(after, "0123456789"))]
	code, err := strconv.Atoi(digits)
	if err != nil {
		h.t.Fatalf("exit marker %q: %v\n%s", after, err, out)
	}
	if code > 128 {
		h.t.Fatalf("fake killed by signal %d:\n%s", code-128, before)
	}
	return code, before
}

func (h *harness) send(text string) {
	h.t.Helper()
	if err := h.s.Paste(ctx(h.t), h.pane.PaneID, text); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) enter() {
	h.t.Helper()
	if err := h.s.SendKeys(ctx(h.t), h.pane.PaneID, "Enter"); err != nil {
		h.t.Fatal(err)
	}
}

// submit pastes text, waits until the screen draws it, waits out codex's
// paste-burst window, and presses Enter. "Draws it" is "shows it more often
// than before the paste": an earlier turn may show the same text already (a
// second /compact), and an Enter sent before this paste is drawn could fall
// inside the burst window and be taken as a newline.
func (h *harness) submit(text, shown string) {
	h.t.Helper()
	before := strings.Count(h.screen(), shown)
	h.send(text)
	testutil.WaitFor(h.t, 10*time.Second, func() bool {
		return strings.Count(h.screen(), shown) > before
	}, "the screen to draw the paste "+strconvQuote(shown))
	h.pastBurstWindow(time.Now())
	h.enter()
}

// pastBurstWindow returns once an Enter sent now is sure to fall outside
// the paste-burst window of pasted text the screen showed at shown: the
// fake took the paste before it drew it, so its window closed no later than
// shown + pasteBurstWindow. A deadline the fake's own rule sets, not a guess
// at how long something takes: load only makes it more true.
func (h *harness) pastBurstWindow(shown time.Time) {
	<-time.After(time.Until(shown.Add(pasteBurstWindow + time.Millisecond)))
}

// received waits until the fake has read text from its terminal.
func (h *harness) received(text string) {
	h.t.Helper()
	testutil.WaitFor(h.t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(h.raw)
		return strings.Contains(string(b), text)
	}, "the fake to read "+strconvQuote(text))
}

func (h *harness) logLines() []map[string]any {
	b, _ := os.ReadFile(h.log)
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func (h *harness) messages() []string {
	var out []string
	for _, m := range h.logLines() {
		if s, ok := m["message"].(string); ok && m["event"] == nil {
			out = append(out, s)
		}
	}
	return out
}

// sessionID is the id the fake logged for its session.
func (h *harness) sessionID() string {
	id := ""
	for _, m := range h.logLines() {
		if s, ok := m["session_id"].(string); ok && s != "" {
			id = s
		}
	}
	return id
}

var roles = []struct {
	name, ready, composer, echoUser, echoReply string
}{
	{"claude", "? for shortcuts", "❯ hello there", "❯ hello there", "● echo: hello there"},
	{"codex", "› Ask Codex to do anything", "› hello there", "› hello there", "• echo: hello there"},
	{"opencode", "┃  Build · ", "┃  hello there", "┃  hello there", "  echo: hello there"},
}

func TestFakeReadyPasteEchoAndSessionFile(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			trustCodex(t, home, dir)
			args := []string{"--model", "m1", "--unknown-flag"}
			if r.name == "claude" {
				args = append(args, "--session-id", "0b7c8a3e-5a43-4f7e-9d0e-111111111111")
			}
			h := start(t, launch{role: r.name, args: args, home: home, dir: dir})
			scr := h.waitFor(r.ready)
			switch r.name {
			case "claude":
				for _, want := range []string{"╭─── Claude Code (fake) ", "Welcome to Claude Code", "\n❯ ", "─────"} {
					if !strings.Contains(scr, want) {
						t.Fatalf("ready screen lacks %q:\n%s", want, scr)
					}
				}
			case "codex":
				if !strings.Contains(scr, "  >_ OpenAI Codex (v0.171.0, fake)") || !strings.Contains(scr, "  ← for agents · ? for shortcuts") {
					t.Fatalf("ready screen:\n%s", scr)
				}
			case "opencode":
				if !strings.Contains(scr, "█▀▀█ █▀▀█") || !strings.Contains(scr, "┃  Ask anything…") || !strings.Contains(scr, "  ctrl+p commands") {
					t.Fatalf("ready screen:\n%s", scr)
				}
			}
			h.submit("hello there\n", r.composer)
			scr = h.waitFor(r.echoReply)
			if !strings.Contains(scr, r.echoUser) {
				t.Fatalf("transcript lacks %q:\n%s", r.echoUser, scr)
			}
			h.waitFor(r.ready) // input empty again after the turn

			lines := h.logLines()
			argv, _ := lines[0]["argv"].([]any)
			if len(argv) != len(args)+1 || argv[1] != "--model" || argv[3] != "--unknown-flag" {
				t.Fatalf("first log line %v, want the argv", lines[0])
			}
			if got := h.messages(); len(got) != 1 || got[0] != "hello there" {
				t.Fatalf("logged messages %q", got)
			}

			id := h.sessionID()
			switch r.name {
			case "claude":
				enc := strings.Map(func(c rune) rune {
					if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
						return c
					}
					return '-'
				}, dir)
				path := filepath.Join(home["HOME"], ".claude", "projects", enc, "0b7c8a3e-5a43-4f7e-9d0e-111111111111.jsonl")
				b, err := os.ReadFile(path)
				if err != nil || !strings.Contains(string(b), "hello there") {
					t.Fatalf("transcript %s: %v %q", path, err, b)
				}
			case "codex":
				matches, _ := filepath.Glob(filepath.Join(home["CODEX_HOME"], "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
				if id == "" || len(matches) != 1 {
					t.Fatalf("rollout for %q: %v", id, matches)
				}
				b, _ := os.ReadFile(matches[0])
				first, _, _ := strings.Cut(string(b), "\n")
				var meta struct {
					Type    string
					Payload struct{ ID, Cwd, Originator string } `json:"payload"`
				}
				if err := json.Unmarshal([]byte(first), &meta); err != nil || meta.Type != "session_meta" ||
					meta.Payload.ID != id || meta.Payload.Cwd != dir || meta.Payload.Originator != "codex-tui" {
					t.Fatalf("session_meta = %s", first)
				}
			case "opencode":
				list := opencodeSessions(t, home, dir)
				if len(list) != 1 || list[0].ID != id || !strings.HasPrefix(id, "ses_") || list[0].Directory != dir {
					t.Fatalf("session list %+v, logged id %q", list, id)
				}
			}
		})
	}
}

// opencodeSessions runs `opencode session list --format json` in tmux.
func opencodeSessions(t *testing.T, home map[string]string, dir string) []ocSession {
	t.Helper()
	out := filepath.Join(t.TempDir(), "list.json")
	h := start(t, launch{role: "opencode", home: home, dir: dir, args: []string{"session", "list", "--format", "json"},
		env: map[string]string{"FAKE_HARNESS_LOG": out + ".log"}})
	code, scr := h.exit()
	if code != 0 {
		t.Fatalf("session list exit %d:\n%s", code, scr)
	}
	b, err := os.ReadFile(filepath.Join(home["XDG_DATA_HOME"], "opencode", "fake-sessions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list []ocSession
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	// The screen shows the same JSON the command printed.
	if !strings.Contains(scr, `"id": "`+list[0].ID+`"`) {
		t.Fatalf("session list output:\n%s", scr)
	}
	return list
}

func TestFakeResumeUnknownIDFails(t *testing.T) {
	const id = "0b7c8a3e-5a43-4f7e-9d0e-222222222222"
	for _, tc := range []struct {
		role string
		args []string
		want string
	}{
		{"claude", []string{"--resume", id}, "No conversation found with session ID: " + id},
		{"codex", []string{"-a", "never", "resume", id}, "Error: no rollout found for thread id " + id},
		{"opencode", []string{"-s", "ses_nope"}, "Error: session not found: ses_nope"},
		{"claude", []string{"-p", "hi", "--output-format", "stream-json", "--verbose", "--resume", id}, "No conversation found with session ID: " + id},
		{"codex", []string{"exec", "--json", "resume", id, "hi"}, "Error: no rollout found for thread id " + id},
		{"opencode", []string{"run", "--format", "json", "-s", "ses_nope", "hi"}, "Error: session not found: ses_nope"},
	} {
		t.Run(tc.role+"-"+tc.args[0], func(t *testing.T) {
			t.Parallel()
			h := start(t, launch{role: tc.role, args: tc.args})
			code, scr := h.exit()
			if code != 1 || !strings.Contains(scr, tc.want) {
				t.Fatalf("exit %d, want 1 with %q:\n%s", code, tc.want, scr)
			}
		})
	}
}

func TestFakeResumeKnownSession(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			s := testutil.NewTmux(t)
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			trustCodex(t, home, dir)
			var args []string
			if r.name == "claude" {
				args = []string{"--session-id", "0b7c8a3e-5a43-4f7e-9d0e-333333333333"}
			}
			h := start(t, launch{s: s, role: r.name, args: args, home: home, dir: dir})
			h.waitFor(r.ready)
			h.submit("hello there", r.composer)
			h.waitFor(r.echoReply)
			id := h.sessionID()
			if err := s.KillSession(ctx(t), fmtName(h)); err != nil {
				t.Fatal(err)
			}
			var resume []string
			switch r.name {
			case "claude":
				resume = []string{"--resume", id}
			case "codex":
				resume = []string{"-a", "never", "resume", id}
			case "opencode":
				resume = []string{"-s", id}
			}
			h2 := start(t, launch{s: s, role: r.name, args: resume, home: home, dir: dir})
			h2.waitFor(r.ready)
			if got := h2.sessionID(); got != id {
				t.Fatalf("resumed session %q, want %q", got, id)
			}
			if r.name == "claude" {
				// Choosing the same id again is refused.
				h3 := start(t, launch{s: s, role: "claude", args: args, home: home, dir: dir})
				code, scr := h3.exit()
				want := "Error: Session ID 0b7c8a3e-5a43-4f7e-9d0e-333333333333 is already in use."
				if code != 1 || !strings.Contains(scr, want) {
					t.Fatalf("exit %d, want 1 with %q:\n%s", code, want, scr)
				}
			}
		})
	}
}

func fmtName(h *harness) string {
	info, err := h.s.PaneInfo(ctx(h.t), h.pane.PaneID)
	if err != nil {
		h.t.Fatal(err)
	}
	return info.SessionName
}

func TestFakeTrustDialog(t *testing.T) {
	for _, tc := range []struct {
		role, question, yes, no, ready string
		env                            map[string]string
	}{
		{"claude", "Is this a project you created or one you trust?", " ❯ 1. Yes, I trust this folder", "   2. No, exit", "? for shortcuts", map[string]string{"FAKE_TRUST_DIALOG": "1", "FAKE_TRUST_ANSWER_MS": "100"}},
		{"codex", "Trust this folder?", "› 1. Trust and continue", "  2. Back to Agent Command Center", "› Ask Codex to do anything", nil},
	} {
		t.Run(tc.role, func(t *testing.T) {
			t.Parallel()
			s := testutil.NewTmux(t)
			home := testutil.FakeHome(t)
			dir := t.TempDir()
			h := start(t, launch{s: s, role: tc.role, env: tc.env, home: home, dir: dir})
			scr := h.waitFor(tc.question)
			if !strings.Contains(scr, "\n"+tc.yes) || !strings.Contains(scr, "\n"+tc.no) {
				t.Fatalf("dialog:\n%s", scr)
			}
			h.enter()
			h.waitFor(tc.ready)
			// Accepting is remembered: the next launch goes straight in.
			h2 := start(t, launch{s: s, role: tc.role, env: tc.env, home: home, dir: dir})
			scr = h2.waitFor(tc.ready)
			if strings.Contains(scr, tc.question) {
				t.Fatalf("dialog shown again after acceptance:\n%s", scr)
			}
		})
	}
}

func TestFakeCodexPasteBurst(t *testing.T) {
	home := testutil.FakeHome(t)
	dir := t.TempDir()
	trustCodex(t, home, dir)
	h := start(t, launch{role: "codex", home: home, dir: dir})
	h.waitFor("› Ask Codex to do anything")
	// Enter right behind the paste is a newline, as in real codex. Both
	// go in one write, so the fake reads them together whatever the load.
	if _, err := testutil.NewRawTmux(h.s).Exec([]byte("first"), "load-buffer", "-b", "burst", "-"); err != nil {
		t.Fatal(err)
	}
	testutil.NewRawTmux(h.s).Run(t, "paste-buffer", "-p", "-d", "-b", "burst", "-t", h.pane.PaneID, ";", "send-keys", "-t", h.pane.PaneID, "Enter")
	h.received("first\x1b[201~\r")
	h.waitFor("› first")
	shown := time.Now()
	// What the early Enter did is settled (the fake read it with the paste);
	// were it a submit, the message log would say so.
	h.pastBurstWindow(shown)
	h.enter()
	h.waitFor("• echo: first")
	if got := h.messages(); len(got) != 1 || got[0] != "first\n" {
		t.Fatalf("submitted %q, want the early Enter kept as a newline", got)
	}
}

func TestFakeKnobs(t *testing.T) {
	t.Run("exit-status", func(t *testing.T) {
		t.Parallel()
		h := start(t, launch{role: "claude"})
		h.waitFor("? for shortcuts")
		h.submit("/exit 5", "❯ /exit 5")
		code, scr := h.exit()
		if code != 5 || !strings.Contains(scr, "fake: exiting 5") {
			t.Fatalf("exit %d:\n%s", code, scr)
		}
	})
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		h := start(t, launch{role: "opencode", env: map[string]string{"FAKE_CRASH_AFTER_MS": "200"}})
		h.waitFor("Ask anything")
		code, scr := h.exit()
		if code != 3 || !strings.Contains(scr, "fake: crashing after 200 ms") {
			t.Fatalf("exit %d:\n%s", code, scr)
		}
	})
	t.Run("exit-on-resume", func(t *testing.T) {
		t.Parallel()
		h := start(t, launch{role: "codex", args: []string{"resume", "abc"}, env: map[string]string{"FAKE_EXIT_ON_RESUME": "4"}})
		if code, scr := h.exit(); code != 4 {
			t.Fatalf("exit %d:\n%s", code, scr)
		}
	})
	t.Run("slow-start-drops-input", func(t *testing.T) {
		t.Parallel()
		h := start(t, launch{role: "claude", env: map[string]string{"FAKE_SLOW_START_MS": "700"}})
		h.send("too early")
		scr := h.waitFor("? for shortcuts")
		if strings.Contains(scr, "too early") {
			t.Fatalf("input before ready was kept:\n%s", scr)
		}
	})
	t.Run("busy-and-hang", func(t *testing.T) {
		t.Parallel()
		h := start(t, launch{role: "claude", env: map[string]string{"FAKE_TURN_MS": "1500"}})
		h.waitFor("? for shortcuts")
		h.submit("slow one", "❯ slow one")
		h.waitFor(" Thinking…")
		h.waitFor("  esc to interrupt · ← for agents")
		h.waitFor("● echo: slow one")
		if strings.Contains(h.screen(), "esc to interrupt") {
			t.Fatal("busy line left after the turn")
		}
		h.submit("/hang", "❯ /hang")
		testutil.WaitFor(t, 5*time.Second, func() bool {
			for _, m := range h.logLines() {
				if m["event"] == "hang" {
					return true
				}
			}
			return false
		}, "the fake to hang")
		h.send("ignored")
		// The fake has the bytes (its reader logged them); a fake that
		// still handled input would draw them on the same pass.
		h.received("ignored")
		if strings.Contains(h.screen(), "ignored") {
			t.Fatal("a hung fake drew input")
		}
	})
}
